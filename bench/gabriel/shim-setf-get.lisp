;;;; Optional shim for mprof-lisp (run.py --shim): defines the SETF place
;;;; GET, which gabriel.lisp uses at load time and which mprof-lisp lacks as
;;;; of this writing.  Loaded before the unmodified gabriel.lisp only to see
;;;; which benchmarks fail for other reasons; the headline figures are the
;;;; runs without it.  It does nothing where (setf get) already works.
(unless (ignore-errors (let ((s (make-symbol "P"))) (setf (get s 'k) 1) t))
  (defun (setf get) (value symbol indicator &optional default)
    (declare (ignore default))
    (funcall (find-symbol "%PUTPROP" "MPROF-SYSTEM") symbol indicator value)))
