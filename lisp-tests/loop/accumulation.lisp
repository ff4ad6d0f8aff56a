;; LOOP accumulation: collect append nconc sum count maximize minimize,
;; with and without INTO; FINALLY and RETURN.
(print (loop for x in '(1 2 3) collect x))
(print (loop for x in '(1 2 3) collecting (list x)))
(print (loop for x in '((1) (2 3) nil (4)) append x))
(print (loop for x in '((a) (b c)) appending x))
(print (let ((l (list 1 2))) (eq l (loop repeat 1 append l))))
(print (loop for x in (list (list 1) (list 2 3) nil (list 4)) nconc x))
(print (loop for x in '(1 2 3) nconcing (list x x)))
(print (loop for x in '(1 2 3) collect x append (list 'a 'b)))
(print (loop for x in '(1 2 3 4) sum x))
(print (loop for x in '(1 2.5) summing x))
(print (loop for x in nil sum x))
(print (loop for x in '(1 nil 3 nil) count x))
(print (loop for x in '(1 2 3) counting (> x 1)))
(print (loop for x in '(3 9 2 7) maximize x))
(print (loop for x in '(3 9 2 7) minimize x))
(print (loop for x in '(3 1.5 2) maximize x))
(print (loop for x in '(-3 -1) maximizing x))
(print (loop for x in nil maximize x))
(print (loop for x in '(1 2 3) sum x fixnum))
(print (loop for x in '(1 2 3) sum x of-type integer))
;; INTO: several accumulators, visible in the body and in FINALLY.
(print (loop for x in '(1 2 3 4 5)
             collect x into all
             sum x into total
             count (evenp x) into evens
             maximize x into big
             minimize x into small
             finally (return (list all total evens big small))))
(print (loop for x in '(1 2 3) collect x into l collect (length l) into sizes finally (return sizes)))
(print (loop for x in '(1 2 3) sum x into s collect s))
(print (loop for x in '(a b) collect x into l append '(z) into l finally (return l)))
(print (loop for x in '(1 2 3) collect x into l finally (return (reverse l))))
(print (loop for x in '(1 2) sum x into s))
;; FINALLY and RETURN
(print (loop for x in '(1 2 3) finally (print 'done) collect x))
(print (loop for x in '(1 2 3) do (print x) finally (print 'end)))
(print (loop for x in '(1 2 3) when (= x 2) return (list 'found x)))
(print (loop for x in '(1 2 3) return x))
(print (loop for x in '(1 2) collect x finally (print 'fin)))
(print (multiple-value-list (loop for x in '(1 2) finally (return (values x 'two)))))
(print (loop for x in '(5 6) collect x into l finally (return l) finally (print 'unreached)))
;; Nested loops
(print (loop for i from 1 to 3 collect (loop for j from 1 to i collect (* i j))))
(print (loop for i from 1 to 3 append (loop for j from i to 3 collect (cons i j))))
(print (loop for row in '((1 2) (3 4)) sum (loop for x in row sum x)))
