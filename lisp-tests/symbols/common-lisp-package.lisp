;;;; The COMMON-LISP package holds exactly the standard's 978 external symbols:
;;;; a program's own names never land in it, and the implementation's helpers
;;;; and parameter names are not visible from a package that uses only CL.

(defpackage "CLEAN" (:use "COMMON-LISP"))
(in-package "CLEAN")

(let ((external 0) (present 0) (foreign nil))
  (do-external-symbols (s "COMMON-LISP") (incf external))
  (do-symbols (s "COMMON-LISP")
    (incf present)
    (unless (eq (symbol-package s) (find-package "COMMON-LISP")) (push s foreign)))
  (print (list external present foreign)))

;; Every one is external and has COMMON-LISP as its home, NIL included.
(print (multiple-value-list (find-symbol "NIL" "COMMON-LISP")))
(print (multiple-value-list (find-symbol "CAR" "COMMON-LISP")))
(print (multiple-value-list (find-symbol "CAR" "CLEAN")))

;; Names that are not standard are the program's own.
(dolist (name '("VAR" "X" "TABLE" "LIST1" "WITH-GENSYMS" "MAPCAR-INTERNAL" "MEMBER-EQL"
                "DOLIST-INTERNAL" "WHITESPACE-CHAR-P" "GC" "EXIT" "QUIT" "WHILE" "ANSWER"))
  (print (list name (multiple-value-list (find-symbol name "COMMON-LISP"))
               (package-name (symbol-package (intern name "CLEAN"))))))

;; So a program may define them without breaking the library's macros.
(defmacro with-gensyms (names &body body)
  `(let ,(mapcar (lambda (n) `(,n (gensym))) names) ,@body))
(defun mapcar-internal (x) (list :mine x))
(defun dolist-internal () :mine-too)
(print (list (mapcar-internal 1) (dolist-internal)))
(print (let ((acc nil)) (dolist (x '(1 2 3) (nreverse acc)) (push (* x x) acc))))
(print (mapcar #'1+ '(1 2 3)))
(print (handler-case (error "boom") (error (c) (princ-to-string c))))
(print (loop for i from 1 to 3 collect (with-gensyms (a) (list i (symbolp a)))))
(defstruct point x y)
(print (point-x (make-point :x 3 :y 4)))

;; Unimplemented standard symbols still exist (the standard requires them).
(dolist (name '("*PRINT-PPRINT-DISPATCH*" "DEFINE-COMPILER-MACRO" "LOGICAL-PATHNAME"
                "MAKE-TWO-WAY-STREAM" "WITH-PACKAGE-ITERATOR" "OPTIMIZE" "DYNAMIC-EXTENT"))
  (print (multiple-value-list (find-symbol name "COMMON-LISP"))))
