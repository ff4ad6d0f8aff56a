;;; Found by the eval fuzzer (a timeout): the fuzzer's interpreter is reused, so on the
;;; second run DEFVAR keeps the circular list the first run made, and LAST looped
;;; forever in Rust. LAST (and LENGTH, APPEND, REVERSE...) now signal a type-error.
(defvar *c* (list 1 2 3))
(setf (cdr (last *c*)) *c*)
(handler-case (last *c*) (type-error () 'caught))
(handler-case (length *c*) (type-error () 'caught))
