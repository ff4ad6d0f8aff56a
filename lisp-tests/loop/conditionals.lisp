;; LOOP conditionals (when if unless else end and it), termination tests
;; (always never thereis), named loops, RETURN, LOOP-FINISH, INITIALLY, DO.
(print (loop for x in '(1 2 3 4 5 6) when (evenp x) collect x))
(print (loop for x in '(1 2 3 4 5 6) if (evenp x) collect x))
(print (loop for x in '(1 2 3 4 5 6) unless (evenp x) collect x))
(print (loop for x in '(1 2 3 4 5 6)
             when (evenp x) collect x into evens
             else collect x into odds
             finally (return (list evens odds))))
(print (loop for x in '(1 nil 3 nil 5) when x collect it))
(print (loop for x in '((a . 1) (b . 2)) thereis (and (eq (car x) 'b) (cdr x))))
(print (loop for x in '(1 2 3) when (and (> x 1) (* x 100)) return it))
(print (loop for x in '(1 2 3 4)
             when (oddp x) collect x and collect (* x 10) end
             collect 'sep))
(print (loop for x in '(1 2 3 4 5 6)
             when (evenp x)
               when (> x 3) collect (list 'big-even x)
               else collect (list 'small-even x)
             end
             else collect (list 'odd x)))
(print (loop for x in '(1 2 3 4 5 6)
             if (evenp x) do (print (list 'even x)) and collect x
             else do (print (list 'odd x))))
(print (loop for x in '(1 2 3 4) when (evenp x) sum x into s and count t into n
             finally (return (list s n))))
(print (loop for i from 1 to 6 when (evenp i) do (print i) (print (* i i))))
(print (loop for x in '(1 2 3) doing (print x)))
;; ALWAYS, NEVER, THEREIS (a failure returns at once, skipping FINALLY)
(print (loop for x in '(1 2 3) always (< x 4)))
(print (loop for x in '(1 2 3) always (< x 2) finally (print 'not-printed)))
(print (loop for x in '(1 2 3) always (< x 5) finally (print 'printed)))
(print (loop for x in '(1 2 3) never (> x 3)))
(print (loop for x in '(1 2 3) never (= x 2)))
(print (loop for x in '(1 2 3) thereis (and (> x 1) x)))
(print (loop for x in '(1 2 3) thereis (> x 5)))
(print (loop for x in nil always nil))
;; Named loops, RETURN, RETURN-FROM
(print (loop named outer
             for i from 1 to 3
             do (loop for j from 1 to 3
                      when (= (* i j) 4) do (return-from outer (list i j)))))
(print (loop named my-loop for x in '(1 2 3) when (= x 2) return (list 'ret x)))
(print (block nil (loop named inner for x in '(1 2 3) do (when (= x 2) (return 'outer-nil)))))
(print (loop for x in '(a b c) do (when (eq x 'b) (return x))))
;; LOOP-FINISH runs the epilogue and returns the accumulation.
(print (loop for i from 1 to 10 when (> i 3) do (loop-finish) collect i))
(print (loop for x in '(1 2 3 4) collect x do (when (= x 2) (loop-finish)) finally (print 'finished)))
(print (loop for i from 1 do (when (> i 2) (loop-finish)) finally (return (list 'stopped i))))
;; INITIALLY runs before the first termination test.
(print (loop for x in nil initially (print 'start) collect x))
(print (let ((log nil))
         (loop for x in '(1 2)
               initially (push 'init log)
               do (push x log)
               finally (push 'fini log))
         (reverse log)))
;; Side effects happen in clause order.
(print (let ((log nil))
         (loop for x in '(1 2)
               do (push (list 'do x) log)
               collect (progn (push (list 'collect x) log) x)
               when (= x 1) do (push 'when log))
         (reverse log)))
;; Bad syntax is an error when the loop is expanded.
(print (handler-case (macroexpand '(loop for x in '(1 2) collect x sum x)) (error () 'error)))
(print (handler-case (macroexpand '(loop for x in '(1 2) sum x into a collect x into a)) (error () 'error)))
(print (handler-case (macroexpand '(loop for x frob 3)) (error () 'error)))
(print (handler-case (macroexpand '(loop for x in '(1) bogus x)) (error () 'error)))
