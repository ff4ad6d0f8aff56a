;;; Top-level forms as CLHS 3.2.3.1 processes them, and LOAD reading each form
;;; with the readtable the previous form left.
(set-dispatch-macro-character #\# #\L
  (lambda (s c n) (declare (ignore c n)) (list 'quote (list 'l (read s t nil t)))))
(print #L(1 2))
(set-macro-character #\! (lambda (s c) (declare (ignore c)) (list 'not (read s t nil t))))
(print !nil)
(defmacro define-two (a b) `(progn (defmacro ,a () 1) (defun ,b () (,a))))
(define-two one get-one)
(print (get-one))
(defmacro defm-and-use () `(progn (defmacro inner () 42) (print (inner))))
(defm-and-use)
(locally (defmacro in-locally () :ok) (print (in-locally)))
(print '(a . #.(list 'b 'c)))
(print (read-from-string "(x . #.(list 1 2))"))
(eval-when (:compile-toplevel :load-toplevel :execute)
  (defmacro from-eval-when () :eval-when))
(print (from-eval-when))
;; A macro call that expands to a macro call that expands to a PROGN.
(defmacro outer-def () '(middle-def))
(defmacro middle-def () '(progn (defmacro deepest () :deep) (defvar *deep* (deepest))))
(outer-def)
(print *deep*)
;; Within the file the readtable it installed stays in force.
(print (not (null (get-macro-character #\!))))
