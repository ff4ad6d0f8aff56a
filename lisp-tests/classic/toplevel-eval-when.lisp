;;; The forms of a top-level EVAL-WHEN are top-level forms: a macro defined by
;;; one is used by the next (PAIP's auxfns.lisp defines ONCE-ONLY and then
;;; FUNCALL-IF, which uses it, in one EVAL-WHEN).
(eval-when (:compile-toplevel :load-toplevel :execute)
  (defmacro twice (x) `(progn ,x ,x))
  (defmacro add-twice (var) `(twice (incf ,var)))
  (defun use-add-twice () (let ((n 0)) (add-twice n) n)))
(print (use-add-twice))
(eval-when (eval load compile)
  (defmacro thrice (x) `(list ,x ,x ,x))
  (print (thrice 1)))
(eval-when (:compile-toplevel)
  (print :not-at-load-time))
(progn
  (defmacro in-progn (x) `(* 2 ,x))
  (print (in-progn 21)))
(print (integerp (file-write-date "/tmp")))
(print (handler-case (file-write-date "/nonexistent/mprof-file") (file-error () :file-error)))
