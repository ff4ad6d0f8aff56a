;;;; The prelude: strings, characters and packages - the parts that are
;;;; places or macros (CHAR and SCHAR as SETF places, DEFPACKAGE, DO-SYMBOLS
;;;; and friends). The functions themselves are builtins (strings.rs,
;;;; chars.rs, symbols.rs).

(defun (setf char) (new-char string index) (sys::%set-char string index new-char))
(defun (setf schar) (new-char string index) (sys::%set-char string index new-char))

(defun sys::%defpackage (name options)
  "Make or update the package NAME as DEFPACKAGE's OPTIONS say, in CLHS's order:
shadowing first, then the use list, imports and interned names, then exports."
  (let ((package (find-package name))
        (nicknames nil) (uses nil) (use-given nil))
    (dolist (opt options)
      (unless (consp opt) (error "bad DEFPACKAGE option ~S" opt))
      (case (car opt)
        (:nicknames (setq nicknames (append nicknames (mapcar #'string (cdr opt)))))
        (:use (setq use-given t uses (append uses (cdr opt))))
        ((:export :import-from :shadow :shadowing-import-from :intern :documentation :size :local-nicknames) nil)
        (t (error 'program-error))))
    (if package
        (dolist (n nicknames)
          (unless (eq (find-package n) package)
            (sys::%package-error (format nil "the nickname ~A of ~A is already in use" n name))))
        (setq package (make-package name :nicknames nicknames :use nil)))
    (flet ((from-package (opt)
             (or (find-package (cadr opt))
                 (sys::%package-error (format nil "DEFPACKAGE ~A: the package ~A does not exist" name (cadr opt)))))
           (symbol-in (s from)
             (multiple-value-bind (sym status) (find-symbol (string s) from)
               (unless status
                 (sys::%package-error
                  (format nil "DEFPACKAGE ~A: no symbol ~A in ~A" name (string s) (package-name from))))
               sym)))
      (dolist (opt options)
        (case (car opt)
          (:shadow (shadow (mapcar #'string (cdr opt)) package))
          (:shadowing-import-from
           (let ((from (from-package opt)))
             (dolist (s (cddr opt))
               (shadowing-import (list (symbol-in s from)) package))))))
      (when use-given
        (use-package uses package))
      (dolist (opt options)
        (case (car opt)
          (:import-from
           (let ((from (from-package opt)))
             (dolist (s (cddr opt))
               (import (list (symbol-in s from)) package))))
          (:intern (dolist (s (cdr opt)) (intern (string s) package)))
          (:local-nicknames
           (dolist (pair (cdr opt))
             (mprof-ext:add-package-local-nickname (string (first pair)) (second pair) package))))))
    (dolist (opt options)
      (when (eq (car opt) :export)
        (dolist (s (cdr opt))
          (export (list (intern (string s) package)) package))))
    package))

(defmacro defpackage (name &rest options)
  `(sys::%defpackage ,(string name) ',options))

(defmacro do-symbols ((var &optional (package '*package*) result) &body body)
  `(dolist (,var (sys::%package-symbols ,package nil) ,result) ,@body))

(defmacro do-external-symbols ((var &optional (package '*package*) result) &body body)
  `(dolist (,var (sys::%package-symbols ,package t) ,result) ,@body))

(defmacro do-all-symbols ((var &optional result) &body body)
  (let ((p (gensym "PACKAGE")))
    `(block nil
       (dolist (,p (list-all-packages))
         ;; Every symbol present in each package (internal ones too).
         (dolist (,var (sys::%package-symbols ,p nil))
           ,@body))
       (let ((,var nil)) (declare (ignorable ,var)) ,result))))

(defconstant char-code-limit 1114112)

(defun sys::%package-iteration-list (packages types)
  "The (symbol status package) entries WITH-PACKAGE-ITERATOR visits: the symbols of
PACKAGES whose accessibility is one of TYPES (:internal :external :inherited)."
  (let ((entries nil))
    (dolist (p (if (listp packages) packages (list packages)))
      (let ((package (if (packagep p) p (or (find-package p) (sys::%package-error (format nil "The package ~A does not exist." p))))))
        (dolist (s (sys::%package-symbols package nil))
          (multiple-value-bind (found status) (find-symbol (symbol-name s) package)
            (when (and (eq found s) (member status types))
              (push (list s status package) entries))))))
    (nreverse entries)))

(defmacro with-package-iterator ((name package-list &rest symbol-types) &body body)
  "Within BODY, (NAME) returns the next (values t symbol status package) of the
symbols of PACKAGE-LIST of the given SYMBOL-TYPES, or NIL when none is left."
  (unless symbol-types
    (error 'program-error))
  (dolist (type symbol-types)
    (unless (member type '(:internal :external :inherited))
      (error 'program-error)))
  (let ((items (gensym "ITEMS")) (entry (gensym "ENTRY")))
    `(let ((,items (sys::%package-iteration-list ,package-list ',symbol-types)))
       (macrolet ((,name ()
                    '(let ((,entry (pop ,items)))
                       (if ,entry
                           (values t (first ,entry) (second ,entry) (third ,entry))
                           nil))))
         ,@body))))
