;;;; Standard symbols that name constants and variables: CONSTANTP knows the
;;;; DEFCONSTANT ones, the REPL and condition-system variables exist, and
;;;; *MACROEXPAND-HOOK* is called by MACROEXPAND-1.

(print (special-operator-p nil))
(print (list (constantp 'pi) (constantp 'most-positive-fixnum) (constantp 'boole-1)
             (constantp 'x) (constantp '(quote x)) (constantp :k) (constantp t) (constantp nil)))
(defconstant +my-constant+ 3)
(print (constantp '+my-constant+))
(print (list least-positive-normalized-long-float (constantp 'least-negative-normalized-long-float)))
(print (list + ++ +++ - / // /// *break-on-signals*))
(print (handler-case (let ((*break-on-signals* 'warning)) (signal "plain") :no-break) (error (c) c)))
(defmacro twice (x) `(list ,x ,x))
(print (let ((*macroexpand-hook* (lambda (f form env) (list :hooked (funcall f form env)))))
         (multiple-value-list (macroexpand-1 '(twice 3)))))
(print (multiple-value-list (macroexpand-1 '(twice 3))))
(print (multiple-value-list (macroexpand-1 '(not-a-macro 3))))
(print (handler-case (invoke-debugger 3) (type-error () :type-error)))

;; COPY-SYMBOL
(defvar *orig* 10)
(defun orig () :orig)
(setf (get '*orig* 'color) 'red)
(let ((plain (copy-symbol '*orig*)) (full (copy-symbol '*orig* t)))
  (print (list (symbol-name plain) (symbol-package plain) (boundp plain) (fboundp plain) (symbol-plist plain)
               (eq plain '*orig*) (symbol-value full) (get full 'color)
               (not (eq (symbol-plist full) (symbol-plist '*orig*))))))
(print (funcall (copy-symbol 'orig t)))
(print (symbol-name (copy-symbol nil)))
(print (handler-case (copy-symbol "X") (type-error () :type-error)))
