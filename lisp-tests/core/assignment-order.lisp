;;;; PSETF evaluates each place's subforms and then its value, left to right;
;;;; MULTIPLE-VALUE-SETQ of no variables returns the primary value; T and
;;;; OTHERWISE are plain keys in ECASE and CCASE.
(print (let ((x (vector nil nil nil nil)) (i 0)) (psetf (aref x (incf i)) (incf i)) (list x i)))
(print (let ((x (vector nil nil nil nil)) (i 0)) (psetf (aref x (incf i)) (incf i) (aref x (incf i)) (incf i 10)) (list x i)))
(print (let ((y 2) (z 3) u x a b c) (psetf (values a b c) (values 1 2 3) (values u x) (values y z)) (list a b c u x)))
(print (let ((a 1) (b 2)) (psetf a b b a) (list a b)))
(print (let ((l (list 1 2))) (list (psetf (car l) (cadr l) (cadr l) (car l)) l)))
(print (list (multiple-value-setq nil :good) (multiple-value-setq nil (values 'a 'b)) (multiple-value-list (multiple-value-setq () (values)))))
(print (let (a b) (list (multiple-value-setq (a b) (values 1 2 3)) a b)))
(dolist (x '(1 t otherwise a))
  (print (list x (handler-case (ecase x (t :t) (otherwise :other)) (type-error (c) (list :type-error (type-error-expected-type c)))))))
(print (let ((k 'a)) (handler-case (ccase k (b 0) (c 1) (otherwise 2)) (type-error () :type-error))))
(print (ecase 2 ((1 2) :small) (3 :three)))
