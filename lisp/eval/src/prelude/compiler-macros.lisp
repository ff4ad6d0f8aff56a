;;;; The prelude: compiler macros. DEFINE-COMPILER-MACRO records an expander
;;;; that COMPILER-MACRO-FUNCTION returns (and FUNCALL can call); the compiler
;;;; itself never applies one, which the standard allows (CLHS 3.2.2.1.3: an
;;;; implementation is free to ignore compiler macros), so a program's results
;;;; never depend on them.
;;;; Invariant: the expander of NAME lives on the property list of NAME's
;;;; symbol (for (SETF F), F's) under its own indicator, so redefining or
;;;; removing the function leaves it alone, as in SBCL.

(defun sys::%compiler-macro-place (name)
  "The symbol and indicator under which NAME's compiler macro is kept."
  (cond ((symbolp name) (values name 'sys::compiler-macro))
        ((and (consp name) (eq (car name) 'setf) (consp (cdr name)) (symbolp (cadr name))
              (null (cddr name)))
         (values (cadr name) 'sys::setf-compiler-macro))
        (t (error 'type-error :datum name
                              :expected-type '(or symbol (cons (eql setf) (cons symbol null)))))))

(defun compiler-macro-function (name &optional environment)
  (declare (ignore environment))
  (multiple-value-bind (symbol indicator) (sys::%compiler-macro-place name)
    (get symbol indicator)))

(defun (setf compiler-macro-function) (function name &optional environment)
  (declare (ignore environment))
  (multiple-value-bind (symbol indicator) (sys::%compiler-macro-place name)
    (if function
        (setf (get symbol indicator) function)
        (remprop symbol indicator))
    function))

(defun sys::%compiler-macro-arguments (form)
  "FORM with its arguments in the CDR, also when it is (FUNCALL #'NAME . ARGUMENTS)."
  (if (and (eq (car form) 'funcall) (consp (cadr form)) (eq (car (cadr form)) 'function))
      (cons (cadr (cadr form)) (cddr form))
      form))

(defmacro define-compiler-macro (name lambda-list &body body)
  ;; The lambda list destructures the call's arguments, also in a
  ;; (FUNCALL #'NAME ...) form, while &WHOLE is the form as given (CLHS 3.2.2.1.3).
  (let* ((block-name (if (consp name) (cadr name) name))
         (form (gensym "FORM"))
         (env (gensym "ENV"))
         (whole (when (eq (car lambda-list) '&whole) (cadr lambda-list)))
         (inner (if whole
                    (multiple-value-bind (decls forms) (sys::%split-body body)
                      (sys::%macro-lambda block-name (cddr lambda-list)
                                          `((let ((,whole ,form)) ,@(remove-if #'stringp decls) ,@forms))))
                    (sys::%macro-lambda block-name lambda-list body))))
    `(progn
       (setf (compiler-macro-function ',name)
             (sys::named-lambda (define-compiler-macro ,name) (,form ,env)
               (funcall (function (lambda ,@(cdr inner)))
                        (sys::%compiler-macro-arguments ,form) ,env)))
       ',name)))
