;;;; The prelude: strings, characters and packages - the parts that are
;;;; places or macros (CHAR and SCHAR as SETF places, DEFPACKAGE, DO-SYMBOLS
;;;; and friends). The functions themselves are builtins (strings.rs,
;;;; chars.rs, symbols.rs).

(defun (setf char) (new-char string index) (sys::%set-char string index new-char))
(defun (setf schar) (new-char string index) (sys::%set-char string index new-char))

(defun sys::%defpackage (name options)
  "Make or update the package NAME as DEFPACKAGE's OPTIONS say."
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
    (when use-given
      (use-package uses package))
    (dolist (opt options)
      (case (car opt)
        (:shadow (shadow (mapcar #'string (cdr opt)) package))
        ((:import-from :shadowing-import-from)
         (let ((from (find-package (cadr opt))))
           (unless from
             (sys::%package-error (format nil "DEFPACKAGE ~A: the package ~A does not exist" name (cadr opt))))
           (dolist (s (cddr opt))
             (multiple-value-bind (sym status) (find-symbol (string s) from)
               (unless status
                 (sys::%package-error
                  (format nil "DEFPACKAGE ~A: no symbol ~A in ~A" name (string s) (package-name from))))
               (import (list sym) package)))))
        (:intern (dolist (s (cdr opt)) (intern (string s) package)))))
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
