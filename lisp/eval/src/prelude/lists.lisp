;;;; The prelude, part 3: higher-order list functions (they call Lisp
;;;; functions, so they are written in Lisp), and small functions the
;;;; evaluator needs early.

(defun mapcar (function list &rest more-lists)
  (if (null more-lists)
      (let ((out nil))
        (dolist-internal (x list) (setq out (cons (funcall function x) out)))
        (sys::%nreverse-list out))
      (let ((lists (cons list more-lists)) (out nil))
        (block nil
          (tagbody
           next
             (dolist-internal (l lists) (when (null l) (return-from nil nil)))
             (setq out (cons (apply function (mapcar-internal #'car lists)) out))
             (setq lists (mapcar-internal #'cdr lists))
             (go next)))
        (sys::%nreverse-list out))))

(defun mapc (function list &rest more-lists)
  (apply #'mapcar function list more-lists)
  list)

(defun mapcan (function list &rest more-lists)
  (apply #'nconc (apply #'mapcar function list more-lists)))

(defun maplist (function list &rest more-lists)
  (let ((lists (cons list more-lists)) (out nil))
    (block nil
      (tagbody
       next
         (dolist-internal (l lists) (when (atom l) (return-from nil nil)))
         (setq out (cons (apply function lists) out))
         (setq lists (mapcar-internal #'cdr lists))
         (go next)))
    (sys::%nreverse-list out)))

(defun mapl (function list &rest more-lists)
  (apply #'maplist function list more-lists)
  list)

(defun mapcon (function list &rest more-lists)
  (apply #'nconc (apply #'maplist function list more-lists)))

(defun complement (function)
  (lambda (&rest arguments) (not (apply function arguments))))

(defun constantly (value)
  (lambda (&rest arguments) (declare (ignore arguments)) value))

(defun compile (name &optional definition)
  (let ((f (cond ((functionp definition) definition)
                 (definition (eval (list 'function definition)))
                 (t (fdefinition name)))))
    (when name (sys:%set-fdefinition name f))
    (values (or name f) nil nil)))

(defvar *macroexpand-hook* 'funcall
  "Called by MACROEXPAND-1 with a macro function, the form and the environment.")

;;; A lexical environment (the &ENVIRONMENT of a macro function) is a list of
;;; (:macro name . expander), (:function name), (:symbol-macro name . expansion)
;;; and (:variable name) entries, innermost first; NIL is the global one.

(defun sys::%environment-entry (env name namespace)
  "The innermost entry of ENV for NAME in NAMESPACE (:function or :variable)."
  (dolist (e env nil)
    (when (and (consp e) (eq (cadr e) name)
               (if (eq namespace :function)
                   (member (car e) '(:macro :function))
                   (member (car e) '(:symbol-macro :variable))))
      (return e))))

(defun macroexpand-1 (form &optional env)
  (cond ((and (consp form) (symbolp (car form)))
         (let* ((local (sys::%environment-entry env (car form) :function))
                (expander (cond ((null local) (macro-function (car form)))
                                ((eq (car local) :macro) (cddr local))
                                (t nil))))
           (if expander
               (values (funcall *macroexpand-hook* expander form env) t)
               (values form nil))))
        ((and form (symbolp form))
         (let ((local (sys::%environment-entry env form :variable)))
           (cond ((and local (eq (car local) :symbol-macro)) (values (cddr local) t))
                 (local (values form nil))
                 (t (multiple-value-bind (expansion found) (sys::%global-symbol-macro form)
                      (if found (values expansion t) (values form nil)))))))
        (t (values form nil))))

(defun macroexpand (form &optional env)
  (let ((expanded-any nil))
    (tagbody
     next
       (multiple-value-bind (expansion expanded) (macroexpand-1 form env)
         (when expanded
           (setq form expansion expanded-any t)
           (go next))))
    (values form expanded-any)))

(defun sys::%global-symbol-macro (symbol)
  "The expansion DEFINE-SYMBOL-MACRO gave SYMBOL, and whether it has one."
  (do ((plist (sys:%symbol-plist symbol) (cddr plist)))
      ((atom plist) (values nil nil))
    (when (eq (car plist) 'sys::%symbol-macro)
      (return (values (cadr plist) t)))))

(defmacro define-symbol-macro (symbol expansion)
  `(progn (sys::%putprop ',symbol 'sys::%symbol-macro ',expansion) ',symbol))


