;;;; The prelude: macro functions for the five standard macros the compiler
;;;; compiles directly (DEFUN, DEFMACRO, DESTRUCTURING-BIND, MULTIPLE-VALUE-BIND,
;;;; MULTIPLE-VALUE-LIST). The compiler recognises these forms before looking
;;;; for a macro, so these functions never run for compiled code; they give
;;;; the symbols the MACRO-FUNCTION the standard requires, for MACROEXPAND,
;;;; FUNCALL and FBOUNDP.
;;;; Invariant: each expansion is what the compiler compiles the form as, and
;;;; uses none of the five at its top, so MACROEXPAND of one ends.

(defun sys::%split-body (body)
  "The leading declarations and documentation string of BODY, the forms after
them, and the documentation string (a string is one only when forms follow it)."
  (let ((decls nil) (doc nil))
    (loop
      (let ((x (car body)))
        (cond ((and (consp x) (eq (car x) 'declare)) (push x decls))
              ((and (stringp x) (cdr body) (null doc)) (setq doc x) (push x decls))
              (t (return))))
      (setq body (cdr body)))
    (values (nreverse decls) body doc)))

(sys::%set-macro-function 'defun
  (sys::named-lambda defun (form env)
    (declare (ignore env))
    (destructuring-bind (name lambda-list &body body) (cdr form)
      (multiple-value-bind (decls forms doc) (sys::%split-body body)
        `(progn
           (sys:%set-fdefinition
            ',name
            (sys::named-lambda ,name ,lambda-list ,@decls
              (block ,(if (consp name) (cadr name) name) ,@forms)))
           ,@(when doc `((sys::%set-documentation ',name 'function ,doc)))
           ',name)))))

(sys::%set-macro-function 'defmacro
  (sys::named-lambda defmacro (form env)
    (declare (ignore env))
    (destructuring-bind (name lambda-list &body body) (cdr form)
      (let ((expander (sys::%macro-lambda name lambda-list body))
            (doc (nth-value 2 (sys::%split-body body))))
        `(progn
           (sys::%set-macro-function ',name (sys::named-lambda ,name ,@(cdr expander)))
           ,@(when doc `((sys::%set-documentation ',name 'function ,doc)))
           ',name)))))

(sys::%set-macro-function 'destructuring-bind
  (sys::named-lambda destructuring-bind (form env)
    (declare (ignore env))
    (destructuring-bind (lambda-list expression &body body) (cdr form)
      (sys::%destructuring-expansion lambda-list expression body))))

(sys::%set-macro-function 'multiple-value-bind
  (sys::named-lambda multiple-value-bind (form env)
    (declare (ignore env))
    (destructuring-bind (vars values-form &body body) (cdr form)
      (let ((more (gensym "MORE")))
        `(multiple-value-call
             (lambda (&optional ,@vars &rest ,more) (declare (ignore ,more)) ,@body)
           ,values-form)))))

(sys::%set-macro-function 'multiple-value-list
  (sys::named-lambda multiple-value-list (form env)
    (declare (ignore env))
    (destructuring-bind (values-form) (cdr form)
      `(multiple-value-call #'list ,values-form))))
