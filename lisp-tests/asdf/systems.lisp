;;; ASDF on small systems written to /tmp by this program: serial and
;;; :depends-on file order, modules with :pathname, static files, :if-feature,
;;; system dependencies with (:version ...) and (:feature ...), :perform
;;; methods (:after), :in-order-to test-op with a secondary system,
;;; :version (:read-file-form ...), a :defsystem-depends-on system giving a
;;; component class, PERFORM :around methods as asdf-flv defines them,
;;; FIND-SYSTEM of a missing system, and reloading.
(require :asdf)
(setf *compile-verbose* nil *compile-print* nil *load-verbose* nil)
(defvar *root* #p"/tmp/mprof-asdf-systems/")

(defun write-file (name &rest forms)
  (let ((path (merge-pathnames name *root*)))
    (ensure-directories-exist path)
    (with-open-file (out path :direction :output :if-exists :supersede)
      (with-standard-io-syntax
        (let ((*print-case* :downcase))
          (dolist (form forms) (prin1 form out) (terpri out)))))))

(defun note-file (package name)
  `((in-package ,package) (format t "~&loading ~A~%" ,name)))

(write-file "alpha/alpha.asd"
  '(defsystem "alpha"
     :version (:read-file-form "version.sexp")
     :serial t
     :components ((:static-file "version.sexp")
                  (:file "package")
                  (:file "one")
                  (:file "two"))
     :perform (load-op :after (o c) (format t "~&alpha loaded~%"))
     :in-order-to ((test-op (test-op "alpha/test"))))
  '(defsystem "alpha/test"
     :depends-on ("alpha")
     :pathname "test/"
     :components ((:file "tests"))
     :perform (test-op (o c) (format t "~&running alpha's tests: ~A~%" (uiop:symbol-call :alpha :twice 21)))))
(write-file "alpha/version.sexp" "2.5.1")
(apply #'write-file "alpha/package.lisp"
       '(defpackage :alpha (:use :cl) (:export #:twice)) (note-file :alpha "alpha/package"))
(apply #'write-file "alpha/one.lisp" (append (note-file :alpha "alpha/one") '((defun once (x) x))))
(apply #'write-file "alpha/two.lisp" (append (note-file :alpha "alpha/two") '((defun twice (x) (* 2 (once x))))))
(apply #'write-file "alpha/test/tests.lisp" (note-file :cl-user "alpha/test/tests"))

(write-file "beta/beta.asd"
  '(defsystem "beta"
     :depends-on ((:version "alpha" "2.0") (:feature :no-such-feature "missing-system") "gamma")
     :components ((:file "main" :depends-on ("util" "types"))
                  (:file "types")
                  (:file "util" :depends-on ("types"))
                  (:file "extra" :if-feature :no-such-feature)
                  (:module "lib"
                   :pathname "library/"
                   :depends-on ("main")
                   :components ((:file "b" :depends-on ("a"))
                                (:file "a")
                                (:module "deep" :components ((:file "c")))
                                (:static-file "README.txt"))))))
(dolist (f '("main" "types" "util" "extra" "library/a" "library/b" "library/deep/c"))
  (apply #'write-file (format nil "beta/~A.lisp" f) (note-file :cl-user (format nil "beta/~A" f))))
(write-file "beta/library/README.txt" "not lisp")

(write-file "gamma/gamma.asd"
  '(defsystem "gamma" :components ((:file "gamma")))
  '(defsystem "gamma-extra" :depends-on ("gamma") :components ((:file "extra"))))
(apply #'write-file "gamma/gamma.lisp" (note-file :cl-user "gamma/gamma"))
(apply #'write-file "gamma/extra.lisp" (note-file :cl-user "gamma/extra"))

(write-file "delta/delta-classes.asd"
  '(defsystem "delta-classes" :components ((:file "classes"))))
(write-file "delta/classes.lisp"
  '(in-package :asdf-user)
  '(defclass delta-file (asdf:cl-source-file) ((type :initform "lsp"))))
(write-file "delta/delta.asd"
  '(defsystem "delta"
     :defsystem-depends-on ("delta-classes")
     :default-component-class delta-file
     :components ((:file "first") (:delta-file "second" :depends-on ("first")))))
(apply #'write-file "delta/first.lsp" (note-file :cl-user "delta/first.lsp"))
(apply #'write-file "delta/second.lsp" (note-file :cl-user "delta/second.lsp"))

(asdf:initialize-source-registry `(:source-registry (:tree ,*root*) :ignore-inherited-configuration))

(defvar *around* nil)
(defmethod asdf:perform :around ((o asdf:load-op) (c asdf:cl-source-file))
  (let ((*around* (asdf:component-name c)))
    (call-next-method)))

(format t "~&--- load alpha~%")
(print (asdf:load-system "alpha"))
(terpri)
(print (asdf:component-version (asdf:find-system "alpha")))
(print (funcall (intern "TWICE" "ALPHA") 4))
(format t "~&--- load alpha again (nothing to do)~%")
(asdf:load-system :alpha)
(format t "~&--- test alpha~%")
(print (asdf:test-system :alpha))
(format t "~&--- load beta~%")
(asdf:load-system "beta")
(format t "~&--- components~%")
(let ((beta (asdf:find-system "beta")))
  (print (mapcar #'asdf:component-name (asdf:component-children beta)))
  (print (enough-namestring (asdf:component-pathname (asdf:find-component beta '("lib" "deep" "c"))) *root*))
  (print (enough-namestring (asdf:component-pathname (asdf:find-component beta '("lib" "README.txt"))) *root*))
  (print (enough-namestring (asdf:system-source-directory beta) *root*))
  (print (enough-namestring (asdf:system-relative-pathname beta "library/a.lisp") *root*))
  (print (enough-namestring (asdf:system-relative-pathname "beta" "data" :type "txt") *root*))
  (print (list (asdf:component-name (asdf:component-parent (asdf:find-component beta "lib")))
               (asdf:component-name (asdf:component-system (asdf:find-component beta '("lib" "a"))))
               (typep (asdf:find-component beta '("lib" "README.txt")) 'asdf:static-file)
               (typep (asdf:find-component beta "main") 'asdf:cl-source-file)
               (typep (asdf:find-component beta "lib") 'asdf:module)
               (typep beta 'asdf:system))))
(format t "~&--- gamma-extra, defined in gamma.asd~%")
(asdf:load-system "gamma-extra")
(format t "~&--- delta~%")
(asdf:load-system "delta")
(print (mapcar (lambda (c) (pathname-type (asdf:component-pathname c)))
               (asdf:component-children (asdf:find-system "delta"))))
(format t "~&--- missing~%")
(print (handler-case (asdf:find-system "no-such-system-here") (asdf:missing-component () :missing)))
(print (asdf:find-system "no-such-system-here" nil))
(print (handler-case (asdf:load-system "no-such-system-here") (error () :load-error)))
(format t "~&--- clear and reload gamma~%")
(asdf:clear-system "gamma")
(asdf:load-system "gamma")
(format t "~&--- versions and features~%")
(print (list (asdf:version-satisfies (asdf:find-system "alpha") "2.5")
             (asdf:version-satisfies (asdf:find-system "alpha") "3.0")
             (uiop:version<= "3.1" (asdf:asdf-version))
             (and (member :asdf3.1 *features*) t)
             (and (find-package :asdf-user) t)))
