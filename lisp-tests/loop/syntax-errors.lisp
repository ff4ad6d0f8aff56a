;;;; LOOP's syntax checks signal program-errors: a variable bound twice, an
;;;; accumulation without INTO beside ALWAYS/NEVER/THEREIS; APPEND keeps the last
;;;; list's dotted tail; IT names the test's value in the first clause only.
(defmacro errs (form) `(handler-case (progn (macroexpand ',form) :no-error) (program-error () :program-error)))
(print (errs (loop for x in '(a b c) for x in '(d e f) collect x)))
(print (errs (loop for (x . x) on '((a b) (c d)) collect x)))
(print (errs (loop with a = 1 and a = 2 return a)))
(print (errs (loop with foo = '(a b) for x in '(c d) collect x into foo finally (return foo))))
(print (errs (loop with foo = 10 for x in '(a b c) count x into foo finally (return foo))))
(print (errs (loop for i from 1 to 10 collect i always (< i 20))))
(print (errs (loop for i from 1 to 10 thereis (> i 20) collect i)))
(print (errs (loop for i from 1 to 10 never (> i 20) sum i into s finally (return s))))
(print (loop for i from 1 to 10 never (> i 20) sum i into s finally (return s)))
(print (loop for x in '((a) (b) (c . whatever)) append x))
(print (loop for x in '((a . 1) (b) (c)) append x))
(print (let ((it 'z)) (loop for x in '(a b c d) when x collect it and collect it)))
(print (loop for (a b) in '((1 2) (3 4)) for c = (+ a b) collect (list a b c)))
(print (loop for x in '(1 2 3) for y = x then (+ y x) collect y))
(print (errs (loop foo)))
