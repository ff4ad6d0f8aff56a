;;; A documentation string followed by declarations is legal in every body
;;; that takes a documentation string.
(defmacro m (x &rest r) "doc" (declare (ignore r)) x)
(print (m 1 2))
(defmacro m2 (&whole w x &environment e) "doc" (declare (ignore e)) (list 'quote (list w x)))
(print (m2 5))
(defun f (x) "doc" (declare (ignore x)) 1)
(print (f 2))
(print (funcall (lambda (x) "d" (declare (ignore x)) 3) 1))
(print (flet ((g (x) "d" (declare (ignore x)) 4)) (g 1)))
(print (labels ((g (x) "d" (declare (ignore x)) 5)) (g 1)))
(print (macrolet ((g (x) "d" (declare (ignore x)) 6)) (g 1)))
;; A lone string is the body's value, not its documentation.
(defmacro only-doc () "only")
(print (only-doc))
(defun only-doc-f () "only")
(print (only-doc-f))
