;;;; The prelude, last part: everything the prelude defined in COMMON-LISP
;;;; becomes external, so CL-USER sees it.

(sys::%export-all-cl)
