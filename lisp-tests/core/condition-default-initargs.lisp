;;; DEFINE-CONDITION's :default-initargs, evaluated at each MAKE-CONDITION (cl-ppcre's
;;; syntax errors take the string being parsed from a special); output as SBCL's.
(defvar *s* nil)
(define-condition c1 (simple-error) ((s :initarg :s :reader c1-s)) (:default-initargs :s *s*))
(print (let ((*s* "hello")) (c1-s (make-condition 'c1 :format-control "x"))))
(defclass k1 () ((s :initarg :s :reader k1-s)) (:default-initargs :s *s*))
(print (let ((*s* "hello")) (k1-s (make-instance 'k1))))
(define-condition c2 (c1) () (:default-initargs :format-control "from c2"))
(print (let ((*s* "x")) (list (c1-s (make-condition 'c2)) (simple-condition-format-control (make-condition 'c2)))))
(print (c1-s (make-condition 'c1 :s 5)))
