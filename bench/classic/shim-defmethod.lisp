;;;; An optional shim (run.py --shim) for measuring before CLOS lands: PAIP's
;;;; tutor defines its interface with DEFMETHOD (one unspecialized method per
;;;; generic function), and auxfns.lisp's own fallback for Lisps without CLOS
;;;; expands into (defun 'name ...), which no Lisp accepts. This DEFMETHOD
;;;; defines the single method as a function, dropping specializers; it is
;;;; wrong for real multi-method code (PAIP's chapter 13, clos.lisp), so
;;;; headline figures are given without it.
(defmacro defmethod (name lambda-list &body body)
  `(defun ,name ,(mapcar (lambda (p) (if (and (consp p) (not (member p lambda-list-keywords))) (car p) p))
                         lambda-list)
     ,@body))
