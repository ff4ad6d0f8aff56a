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

(defun macroexpand-1 (form &optional env)
  (let ((hook *macroexpand-hook*)
        (expander (and (consp form) (symbolp (car form)) (macro-function (car form)))))
    (if (or (null expander) (eq hook 'funcall) (eq hook #'funcall))
        (sys:%macroexpand-1 form)
        (values (funcall hook expander form env) t))))

(defun macroexpand (form &optional env)
  (declare (ignore env))
  (let ((expanded-any nil))
    (tagbody
     next
       (multiple-value-bind (expansion expanded) (sys:%macroexpand-1 form)
         (when expanded
           (setq form expansion expanded-any t)
           (go next))))
    (values form expanded-any)))


