;;;; ASDF for mprof-lisp: the system definition facility as .asd files and
;;;; their users call it, written for this implementation (the real ASDF does
;;;; not support mprof-lisp). (require :asdf) loads it, after UIOP; it is
;;;; embedded in the binary (builtins/modules.rs). Its version answers
;;;; "3.3.6", the interface it follows.
;;;;
;;;; Model: components (systems, modules, files) are CLOS instances;
;;;; operations (LOAD-OP, COMPILE-OP, PREPARE-OP, TEST-OP...) are singleton
;;;; instances per class. OPERATE plans the actions (operation . component)
;;;; depth first, dependencies before dependents, in definition order and in
;;;; each :DEPENDS-ON's order (so files load in the order SBCL's ASDF loads
;;;; them), from the generic function COMPONENT-DEPENDS-ON, then performs each
;;;; action that is not up to date (PERFORM, with :before/:after/:around
;;;; methods of users). A file is loaded from its source: there are no
;;;; compiled files, so COMPILE-OP does nothing (its PERFORM methods still
;;;; run). An error escaping a PERFORM is resignalled as an
;;;; ACTION-FAILED naming the operation and the component (the original is
;;;; ACTION-FAILED-CONDITION), with RETRY and ACCEPT restarts around it.
;;;;
;;;; Systems are found by name: first the registered ones, then the systems
;;;; built into the implementation (SYS::*BUILTIN-SYSTEMS*: embedded modules,
;;;; loaded with REQUIRE), then *CENTRAL-REGISTRY* and the source registry
;;;; (CL_SOURCE_REGISTRY, the configuration files, then ~/common-lisp/,
;;;; ~/quicklisp/local-projects/, and Debian's /usr/share/common-lisp/
;;;; searched as a tree). A secondary system "x/y" is looked for in x.asd.
;;;;
;;;; Invariants: a system object is never replaced once registered (a
;;;; reloaded .asd reinitializes it), so EQL methods on (find-system :x) stay
;;;; valid; an .asd file is loaded with *PACKAGE* ASDF-USER and
;;;; *DEFAULT-PATHNAME-DEFAULTS* its directory. What is not implemented
;;;; signals an error naming it; docs/lisp.md lists both.

(require "UIOP")

(defpackage :asdf
  (:use :common-lisp :uiop)
  (:nicknames :asdf/interface :asdf/defsystem :asdf/system :asdf/component :asdf/operate
              :asdf/operation :asdf/action :asdf/lisp-action :asdf/find-system
              :asdf/find-component :asdf/source-registry :asdf/plan :asdf/session
              :asdf/upgrade :asdf/system-registry :asdf/parse-defsystem :asdf/backward-interface
              :asdf/output-translations :asdf/bundle :asdf/concatenate-source
              :asdf/package-inferred-system :asdf/user)
  (:export
   #:defsystem #:find-system #:locate-system #:load-asd #:clear-system #:register-system
   #:registered-system #:registered-systems #:registered-systems* #:already-loaded-systems
   #:system-registered-p #:register-preloaded-system #:register-immutable-system
   #:primary-system-name #:coerce-name #:find-component #:component-find-path
   #:operate #:oos #:load-system #:load-systems #:load-systems* #:compile-system
   #:test-system #:require-system #:make-operation #:find-operation #:component-loaded-p
   #:perform #:perform-with-restarts #:operation-done-p #:explain #:input-files
   #:output-files #:output-file #:component-depends-on #:mark-operation-done
   #:action-description #:upward-operation #:downward-operation #:sideway-operation
   #:selfward-operation #:non-propagating-operation
   #:operation #:load-op #:compile-op #:prepare-op #:test-op #:load-source-op
   #:prepare-source-op #:build-op #:compile-bundle-op #:load-bundle-op #:monolithic-op
   #:component #:parent-component #:child-component #:module #:system #:file-component
   #:source-file #:cl-source-file #:cl-source-file.cl #:cl-source-file.lsp #:static-file
   #:doc-file #:html-file #:c-source-file #:java-source-file #:require-system-component
   #:component-name #:component-version #:component-parent #:component-system
   #:component-pathname #:component-relative-pathname #:component-children
   #:component-children-by-name #:module-components #:component-property
   #:component-external-format #:component-encoding #:component-load-dependencies
   #:component-sideway-dependencies #:component-if-feature #:component-in-order-to
   #:source-file-type #:system-source-file #:system-source-directory
   #:system-relative-pathname #:system-definition-pathname #:system-depends-on
   #:system-defsystem-depends-on #:system-weakly-depends-on #:system-description
   #:system-long-description #:system-author #:system-maintainer #:system-licence
   #:system-license #:system-homepage #:system-bug-tracker #:system-mailto
   #:system-long-name #:system-source-control #:system-version
   #:asdf-version #:*asdf-version* #:version-satisfies #:*central-registry*
   #:initialize-source-registry #:clear-source-registry #:ensure-source-registry
   #:*source-registry-parameter* #:*default-source-registries*
   #:*default-source-registry-exclusions* #:sysdef-central-registry-search
   #:sysdef-source-registry-search #:*system-definition-search-functions*
   #:initialize-output-translations #:clear-output-translations
   #:disable-output-translations #:apply-output-translations #:ensure-output-translations
   #:*output-translations-parameter* #:enable-asdf-binary-locations-compatibility
   #:clear-configuration #:run-shell-command #:upgrade-asdf #:*asdf-verbose* #:*verbose-out*
   #:*compile-file-warnings-behaviour* #:*compile-file-failure-behaviour*
   #:*user-cache* #:*load-system-operation*
   #:system-definition-error #:missing-component #:missing-component-of-version
   #:missing-dependency #:missing-dependency-of-version #:missing-requires #:missing-parent
   #:circular-dependency #:load-system-definition-error #:operation-error #:compile-error
   #:compile-failed #:compile-warned #:error-component #:error-operation
   #:action-failed #:action-failed-condition #:not-implemented-in-mprof-asdf
   #:package-inferred-system #:register-system-packages #:make-plan #:plan-actions
   #:sequential-plan))

(defpackage :asdf-user
  (:use :common-lisp :uiop :asdf))

(in-package :asdf)

(defparameter *asdf-version* "3.3.6")
(defun asdf-version () *asdf-version*)

(defvar *asdf-verbose* nil)
(defvar *verbose-out* nil)
(defvar *load-system-operation* 'load-op)

;;; ---------------------------------------------------------------- conditions

(define-condition system-definition-error (error) ())

(define-condition not-implemented-in-mprof-asdf (system-definition-error)
  ((what :initarg :what :initform nil))
  (:report (lambda (c s)
             (format s "~A is not implemented in mprof-lisp's ASDF (see docs/lisp.md, ASDF)"
                     (slot-value c 'what)))))

(defun not-here (what) (error 'not-implemented-in-mprof-asdf :what what))

(define-condition missing-component (system-definition-error)
  ((requires :initarg :requires :initform "(unnamed)" :reader missing-requires)
   (parent :initarg :parent :initform nil :reader missing-parent))
  (:report (lambda (c s)
             (format s "Component ~S not found~@[ in ~A~]~@[ (looked in ~{~A~^, ~})~]"
                     (missing-requires c)
                     (and (missing-parent c) (component-name (missing-parent c)))
                     (and (null (missing-parent c)) (search-places))))))

(define-condition missing-component-of-version (missing-component)
  ((version :initarg :version :initform nil))
  (:report (lambda (c s)
             (format s "Component ~S does not match version ~A~@[ in ~A~]"
                     (missing-requires c) (slot-value c 'version)
                     (and (missing-parent c) (component-name (missing-parent c)))))))

(define-condition missing-dependency (missing-component)
  ((required-by :initarg :required-by :initform nil))
  (:report (lambda (c s)
             (format s "Component ~S not found, required by ~A~@[ (looked in ~{~A~^, ~})~]"
                     (missing-requires c) (slot-value c 'required-by) (search-places)))))

(define-condition missing-dependency-of-version (missing-dependency missing-component-of-version) ()
  (:report (lambda (c s)
             (format s "Component ~S does not match version ~A, required by ~A"
                     (missing-requires c) (slot-value c 'version) (slot-value c 'required-by)))))

(define-condition circular-dependency (system-definition-error)
  ((actions :initarg :actions :initform nil))
  (:report (lambda (c s)
             (format s "Circular dependency: ~{~A~^ -> ~}"
                     (mapcar #'action-description* (slot-value c 'actions))))))

(define-condition load-system-definition-error (system-definition-error)
  ((name :initarg :name) (pathname :initarg :pathname) (condition :initarg :condition))
  (:report (lambda (c s)
             (format s "Error while trying to load definition for system ~A from pathname ~A: ~A"
                     (slot-value c 'name) (slot-value c 'pathname) (slot-value c 'condition)))))

(define-condition operation-error (error)
  ((component :initarg :component :initform nil :reader error-component)
   (operation :initarg :operation :initform nil :reader error-operation))
  (:report (lambda (c s)
             (format s "Error while invoking ~A on ~A" (error-operation c) (error-component c)))))

(define-condition compile-error (operation-error) ())
(define-condition compile-failed (compile-error) ())
(define-condition compile-warned (compile-error) ())

(define-condition action-failed (operation-error)
  ((condition :initarg :condition :initform nil :reader action-failed-condition))
  (:report (lambda (c s)
             (format s "~A~%  (while ~A)"
                     (action-failed-condition c)
                     (action-description* (cons (error-operation c) (error-component c)))))))

;;; ---------------------------------------------------------------- components

(defclass component ()
  ((name :initarg :name :initform nil :reader component-name)
   (version :initarg :version :initform nil :accessor component-version)
   (description :initarg :description :initform nil :accessor component-description)
   (long-description :initarg :long-description :initform nil :accessor component-long-description)
   (parent :initarg :parent :initform nil :accessor component-parent)
   (relative-pathname :initarg :pathname :initform nil :accessor %component-pathname-spec)
   (absolute-pathname :initform nil :accessor %component-absolute-pathname)
   (sideway-dependencies :initarg :depends-on :initform nil :accessor component-sideway-dependencies)
   (in-order-to :initarg :in-order-to :initform nil :accessor component-in-order-to)
   (if-feature :initarg :if-feature :initform nil :accessor component-if-feature)
   (properties :initarg :properties :initform nil :accessor component-properties)
   (inline-methods :initform nil :accessor component-inline-methods)
   (operation-times :initform (make-hash-table :test 'eq) :accessor component-operation-times)
   (external-format :initarg :external-format :initform nil :accessor component-external-format)
   (encoding :initarg :encoding :initform nil :accessor component-encoding)))

(defclass child-component (component) ())

(defclass parent-component (component)
  ((children :initarg :components :initform nil :accessor component-children)
   (children-by-name :initform (make-hash-table :test 'equal) :accessor component-children-by-name)
   (default-component-class :initarg :default-component-class :initform nil
                            :accessor module-default-component-class)
   (serial :initarg :serial :initform nil :accessor module-serial)))

(defclass module (parent-component child-component) ())

(defclass file-component (child-component)
  ((type :initarg :type :accessor file-type)))

(defclass source-file (file-component) ((type :initform nil)))
(defclass cl-source-file (source-file) ((type :initform "lisp")))
(defclass cl-source-file.cl (cl-source-file) ((type :initform "cl")))
(defclass cl-source-file.lsp (cl-source-file) ((type :initform "lsp")))
(defclass c-source-file (source-file) ((type :initform "c")))
(defclass java-source-file (source-file) ((type :initform "java")))
(defclass static-file (source-file) ((type :initform nil)))
(defclass doc-file (static-file) ())
(defclass html-file (doc-file) ((type :initform "html")))

(defclass system (module)
  ((source-file :initarg :source-file :initform nil :accessor system-source-file)
   (defsystem-depends-on :initarg :defsystem-depends-on :initform nil
                         :accessor system-defsystem-depends-on)
   (weakly-depends-on :initarg :weakly-depends-on :initform nil :accessor system-weakly-depends-on)
   (author :initarg :author :initform nil :accessor system-author)
   (maintainer :initarg :maintainer :initform nil :accessor system-maintainer)
   (licence :initarg :licence :initform nil :accessor system-licence)
   (homepage :initarg :homepage :initform nil :accessor system-homepage)
   (bug-tracker :initarg :bug-tracker :initform nil :accessor system-bug-tracker)
   (mailto :initarg :mailto :initform nil :accessor system-mailto)
   (long-name :initarg :long-name :initform nil :accessor system-long-name)
   (source-control :initarg :source-control :initform nil :accessor system-source-control)
   (entry-point :initarg :entry-point :initform nil :accessor system-entry-point)
   (define-epoch :initform 0 :accessor system-define-epoch)
   (build-operation :initarg :build-operation :initform nil)
   (build-pathname :initarg :build-pathname :initform nil)))

;;; A system built into the implementation: loading it REQUIREs a module.
(defclass builtin-system (system)
  ((module :initarg :module :accessor builtin-system-module)))

;;; A dependency (:require "name"): loading it REQUIREs the module.
(defclass require-system-component (child-component) ())

(defclass package-inferred-system (system) ())

(defun system-description (s) (component-description s))
(defun system-long-description (s) (component-long-description s))
(defun system-license (s) (system-licence s))
(defun system-version (s) (component-version s))
(defun system-depends-on (s) (component-sideway-dependencies s))
(defun module-components (c) (component-children c))
(defun component-load-dependencies (c) (component-sideway-dependencies c))

(defun component-property (component property)
  (cdr (assoc property (component-properties component) :test #'equal)))

(defun (setf component-property) (new-value component property)
  (let ((a (assoc property (component-properties component) :test #'equal)))
    (if a
        (setf (cdr a) new-value)
        (push (cons property new-value) (component-properties component)))
    new-value))

(defun component-system (component)
  (loop for c = component then (component-parent c)
        when (null (component-parent c)) return c))

(defmethod print-object ((c component) stream)
  (print-unreadable-object (c stream :type t)
    (format stream "~{~S~^ ~}" (component-find-path c))))

(defun coerce-name (name)
  "A component name: a string as it is, a symbol's name in lower case."
  (typecase name
    (component (component-name name))
    (symbol (string-downcase (symbol-name name)))
    (string name)
    (t (error 'system-definition-error))))

(defun primary-system-name (name)
  "The name of the system whose .asd defines NAME: the part before a slash."
  (let* ((name (coerce-name name)) (slash (position #\/ name)))
    (if slash (subseq name 0 slash) name)))

(defgeneric source-file-type (component system))
(defmethod source-file-type ((c source-file) (s t)) (file-type c))
(defmethod source-file-type ((c component) (s t)) nil)

(defgeneric component-relative-pathname (component))
(defmethod component-relative-pathname ((c component))
  (let ((spec (%component-pathname-spec c)))
    (parse-unix-namestring
     (or spec (component-name c))
     :want-relative t
     :type (cond ((typep c 'parent-component) :directory)
                 ((and spec (pathnamep spec)) nil)
                 (t (source-file-type c (component-system c))))
     :defaults (let ((parent (component-parent c))) (and parent (component-pathname parent))))))

(defmethod component-relative-pathname ((c system))
  (let ((spec (%component-pathname-spec c)))
    (and spec (parse-unix-namestring spec :ensure-directory t))))

(defgeneric component-pathname (component))
(defmethod component-pathname ((c component))
  "The absolute pathname of COMPONENT: its relative pathname under its parent's."
  (or (%component-absolute-pathname c)
      (setf (%component-absolute-pathname c)
            (let ((relative (component-relative-pathname c))
                  (parent (component-parent c)))
              (if parent
                  (merge-pathnames* relative (component-pathname parent))
                  relative)))))

(defmethod component-pathname ((s system))
  (or (%component-absolute-pathname s)
      (setf (%component-absolute-pathname s)
            (let ((base (system-source-directory s))
                  (relative (component-relative-pathname s)))
              (if relative (merge-pathnames* relative base) base)))))

(defmethod component-pathname ((s builtin-system)) nil)

(defun system-source-directory (system-designator)
  "The directory of the system's .asd file."
  (let* ((s (find-system system-designator))
         (file (system-source-file s)))
    (if file
        (pathname-directory-pathname file)
        (ensure-directory-pathname *default-pathname-defaults*))))

(defun system-definition-pathname (system-designator)
  (system-source-file (find-system system-designator)))

(defun system-relative-pathname (system name &key type)
  "NAME (a Unix namestring, of type TYPE) under SYSTEM's directory."
  (subpathname (system-source-directory system) name :type type))

(defun find-component (base path &key registered)
  "The component PATH names under BASE (a component, or NIL for systems)."
  (declare (ignore registered))
  (cond ((null path) base)
        ((consp path) (find-component (find-component base (car path)) (cdr path)))
        ((typep path 'component) path)
        ((null base) (find-system path nil))
        ((typep base 'parent-component)
         (values (gethash (coerce-name path) (component-children-by-name base))))
        (t nil)))

(defun component-find-path (component)
  (reverse (loop for c = component then (component-parent c) while c collect (component-name c))))

;;; ---------------------------------------------------------------- operations

(defclass operation () ())
(defclass downward-operation (operation) ())
(defclass upward-operation (operation) ())
(defclass sideway-operation (operation) ())
(defclass selfward-operation (operation) ())
(defclass non-propagating-operation (operation) ())
(defclass prepare-op (upward-operation sideway-operation) ())
(defclass compile-op (downward-operation selfward-operation) ())
(defclass load-op (downward-operation selfward-operation) ())
(defclass prepare-source-op (upward-operation sideway-operation) ())
(defclass load-source-op (downward-operation selfward-operation) ())
(defclass test-op (selfward-operation) ())
(defclass build-op (downward-operation) ())
(defclass monolithic-op (operation) ())
(defclass compile-bundle-op (operation) ())
(defclass load-bundle-op (operation) ())

(defmethod print-object ((o operation) stream)
  (print-unreadable-object (o stream :type t)))

(defvar *operations* (make-hash-table :test 'eq))

(defun operation-class (designator)
  "The operation class a designator names: a class, a symbol (or one of the
same name in ASDF, so foreign symbols and keywords work)."
  (let ((class (cond ((typep designator 'class) designator)
                     ((typep designator 'operation) (class-of designator))
                     ((symbolp designator)
                      (or (find-class designator nil)
                          (let ((s (find-symbol (symbol-name designator) :asdf)))
                            (and s (find-class s nil)))))
                     ((stringp designator)
                      (let ((s (find-symbol (string-upcase designator) :asdf)))
                        (and s (find-class s nil))))
                     (t nil))))
    (unless (and class (subtypep class 'operation))
      (error 'system-definition-error-with-text
             :text (format nil "~S does not name an ASDF operation" designator)))
    class))

(define-condition system-definition-error-with-text (system-definition-error)
  ((text :initarg :text))
  (:report (lambda (c s) (write-string (slot-value c 'text) s))))

(defun make-operation (operation-class &rest initargs)
  "The operation instance of OPERATION-CLASS (one per class)."
  (declare (ignore initargs))
  (if (typep operation-class 'operation)
      operation-class
      (let ((class (operation-class operation-class)))
        (or (gethash class *operations*)
            (setf (gethash class *operations*) (make-instance class))))))

(defun find-operation (context spec)
  (declare (ignore context))
  (make-operation spec))

;;; ---------------------------------------------------------------- the registry

(defvar *registered-systems* (make-hash-table :test 'equal)
  "System name -> system object.")
(defvar *asd-load-times* (make-hash-table :test 'equal)
  "Truename namestring of a loaded .asd -> its write date when loaded.")
(defvar *immutable-systems* (make-hash-table :test 'equal))
(defvar *preloaded-systems* (make-hash-table :test 'equal))
(defvar *systems-being-defined* nil)

(defun registered-system (name)
  (values (gethash (coerce-name name) *registered-systems*)))

(defun system-registered-p (name)
  (let ((s (registered-system name))) (and s (cons 0 s))))

(defun registered-systems* ()
  (let ((l nil)) (maphash (lambda (k v) (declare (ignore k)) (push v l)) *registered-systems*) l))

(defun registered-systems () (sort (mapcar #'component-name (registered-systems*)) #'string<))

(defun register-system (system)
  (setf (gethash (component-name system) *registered-systems*) system))

(defun clear-system (system)
  "Forget SYSTEM: the next FIND-SYSTEM looks for its definition again."
  (let ((name (coerce-name system)))
    (remhash name *registered-systems*)
    (remhash name *preloaded-systems*)
    (values)))

(defun component-loaded-p (component)
  (let ((c (if (typep component 'component) component (find-system component nil))))
    (and c (gethash (operation-class 'load-op) (component-operation-times c)) t)))

(defun already-loaded-systems ()
  (sort (loop for s in (registered-systems*) when (component-loaded-p s) collect (component-name s))
        #'string<))

(defun register-preloaded-system (system-name &rest keys &key version &allow-other-keys)
  "Register SYSTEM-NAME as already present in the image (loading it does nothing)."
  (declare (ignore keys))
  (let* ((name (coerce-name system-name))
         (s (or (registered-system name) (make-instance 'system :name name :version version))))
    (setf (gethash name *preloaded-systems*) t)
    (setf (gethash (operation-class 'load-op) (component-operation-times s)) t
          (gethash (operation-class 'prepare-op) (component-operation-times s)) t
          (gethash (operation-class 'compile-op) (component-operation-times s)) t)
    (register-system s)))

(defun register-immutable-system (system-name &rest keys)
  (apply #'register-preloaded-system system-name keys)
  (setf (gethash (coerce-name system-name) *immutable-systems*) t))

(defun builtin-system (name)
  "A system the implementation provides as an embedded module, registered on first use."
  (let ((entry (assoc name sys::*builtin-systems* :test #'string-equal)))
    (when entry
      (register-system (make-instance 'builtin-system :name name :module (cdr entry))))))

;;; ---------------------------------------------------------------- the source registry

(defvar *central-registry* nil
  "Directories (or forms evaluating to directories) searched for NAME.asd
before the source registry.")

(defvar *source-registry-parameter* nil)
(defvar *source-registry* nil
  "NIL until initialized; then a hash table: system name -> .asd pathname.")
(defvar *source-registry-directories* nil
  "The directives the source registry was built from, for messages.")

(defparameter *default-source-registry-exclusions*
  '("_darcs" "{arch}" ".git" ".hg" ".svn" "CVS" "RCS" "SCCS" "_sgbak" ".bzr" "_MTN" ".pc"))

(defvar *source-registry-exclusions* *default-source-registry-exclusions*)

(defun default-source-registry ()
  "Where systems are looked for by default: the user's ~/common-lisp/ and
~/quicklisp/local-projects/ trees, then the Common Lisp folders of the
system (Debian's /usr/share/common-lisp/ among them)."
  `(:source-registry
    (:tree (:home "common-lisp/"))
    (:tree (:home "quicklisp/local-projects/"))
    (:directory ,(xdg-data-home "common-lisp/systems/"))
    (:tree ,(xdg-data-home "common-lisp/source/"))
    (:directory "/usr/local/share/common-lisp/systems/")
    (:tree "/usr/local/share/common-lisp/source/")
    (:directory "/usr/share/common-lisp/systems/")
    (:tree "/usr/share/common-lisp/source/")
    :inherit-configuration))

(defparameter *default-source-registries*
  '(environment-source-registry user-source-registry user-source-registry-directory
    system-source-registry system-source-registry-directory default-source-registry))

(defun parse-source-registry-string (string)
  "CL_SOURCE_REGISTRY's syntax: a form (:source-registry ...), or
directories separated by colons, each ending with // meaning a tree; an
empty entry inherits the configuration that follows."
  (if (and (plusp (length string)) (char= (char string 0) #\())
      (with-safe-io-syntax (:package :asdf) (read-from-string string))
      (let ((directives nil) (inherit nil))
        (dolist (entry (split-string string :separator ":"))
          (cond ((string= entry "") (setq inherit t))
                ((string-suffix-p entry "//")
                 (push `(:tree ,(subseq entry 0 (1- (length entry)))) directives))
                (t (push `(:directory ,(if (string-suffix-p entry "/") entry (strcat entry "/"))) directives))))
        `(:source-registry ,@(nreverse directives)
                           ,(if inherit :inherit-configuration :ignore-inherited-configuration)))))

(defun environment-source-registry ()
  (let ((v (getenv "CL_SOURCE_REGISTRY")))
    (and v (plusp (length v)) (parse-source-registry-string v))))

(defun configuration-file-registry (file)
  (and file (probe-file* file) (read-file-form file)))

(defun configuration-directory-registry (directory)
  (let ((dir (and directory (directory-exists-p directory))))
    (when dir
      (let ((files (sort (directory-files dir (make-pathname :name :wild :type "conf"))
                         #'string< :key #'namestring)))
        (when files
          `(:source-registry ,@(loop for f in files append (read-file-forms f))
                             :inherit-configuration))))))

(defun user-source-registry ()
  (configuration-file-registry (xdg-config-home "common-lisp/source-registry.conf")))
(defun user-source-registry-directory ()
  (configuration-directory-registry (xdg-config-home "common-lisp/source-registry.conf.d/")))
(defun system-source-registry ()
  (configuration-file-registry #p"/etc/common-lisp/source-registry.conf"))
(defun system-source-registry-directory ()
  (configuration-directory-registry #p"/etc/common-lisp/source-registry.conf.d/"))

(defun registry-location (x)
  "The directory a source-registry location designator names."
  (let ((p (resolve-location x :ensure-directory t)))
    (and p (ensure-directory-pathname p))))

(defun flatten-source-registry (parameter)
  "The :directory and :tree directives PARAMETER and the configurations it
inherits give, in order."
  (let ((sources (cons parameter *default-source-registries*))
        (directives nil))
    (loop
      (when (null sources) (return))
      (let* ((source (pop sources))
             (form (cond ((null source) nil)
                         ((and (symbolp source) (fboundp source)) (funcall source))
                         ((functionp source) (funcall source))
                         ((stringp source) (parse-source-registry-string source))
                         ((pathnamep source) (configuration-file-registry source))
                         (t source))))
        (when form
          (unless (and (consp form) (eq (car form) :source-registry))
            (error 'system-definition-error-with-text
                   :text (format nil "Invalid source registry ~S: it should start with :SOURCE-REGISTRY" form)))
          (let ((inherit nil))
            (dolist (d (cdr form))
              (cond ((eq d :inherit-configuration) (setq inherit t))
                    ((eq d :ignore-inherited-configuration) (setq inherit nil))
                    ((eq d :default-registry) (push (default-source-registry) sources))
                    ((and (consp d) (member (car d) '(:directory :tree)))
                     (let ((dir (registry-location (second d))))
                       (when dir (push (list (car d) dir) directives))))
                    ((and (consp d) (eq (car d) :exclude))
                     (setq *source-registry-exclusions* (cdr d)))
                    ((and (consp d) (eq (car d) :also-exclude))
                     (setq *source-registry-exclusions* (append *source-registry-exclusions* (cdr d))))
                    ((and (consp d) (eq (car d) :include))
                     (push (configuration-file-registry (registry-location (second d))) sources))
                    ((eq d :ignore-invalid-entries))
                    (t (error 'system-definition-error-with-text
                              :text (format nil "Invalid source registry directive ~S" d)))))
            (unless inherit (return))))))
    (nreverse directives)))

(defun excluded-path-p (pathname root)
  (let ((dirs (nthcdr (length (pathname-directory root)) (pathname-directory pathname))))
    (some (lambda (d) (and (stringp d) (member d *source-registry-exclusions* :test #'string=))) dirs)))

(defun register-asd-file (table file)
  (let ((name (pathname-name file)))
    (when (and (stringp name) (not (gethash name table)))
      (setf (gethash name table) file))))

(defun initialize-source-registry (&optional (parameter *source-registry-parameter*))
  "Build the source registry from PARAMETER (a form (:source-registry ...),
a string in CL_SOURCE_REGISTRY's syntax, or NIL) and the configurations it
inherits: every NAME.asd of each :directory, and below each :tree."
  (setf *source-registry-parameter* parameter
        *source-registry-exclusions* *default-source-registry-exclusions*)
  (let ((table (make-hash-table :test 'equal))
        (directives (flatten-source-registry parameter)))
    (dolist (d directives)
      (let ((dir (second d)))
        (when (directory-exists-p dir)
          (if (eq (car d) :tree)
              (dolist (file (sort (directory (merge-pathnames* (make-pathname :directory '(:relative :wild-inferiors)
                                                                              :name :wild :type "asd")
                                                               dir))
                                  #'string< :key #'namestring))
                (unless (excluded-path-p file dir)
                  (register-asd-file table file)))
              (dolist (file (directory (merge-pathnames* (make-pathname :name :wild :type "asd") dir)))
                (register-asd-file table file))))))
    (setf *source-registry-directories* directives
          *source-registry* table)
    (values)))

(defun clear-source-registry ()
  (setf *source-registry* nil)
  (values))

(defun ensure-source-registry (&optional parameter)
  (unless *source-registry* (initialize-source-registry parameter))
  *source-registry*)

(defun sysdef-central-registry-search (system)
  (let ((name (primary-system-name system)))
    (dolist (entry *central-registry*)
      (let* ((dir (if (consp entry) (eval entry) entry))
             (file (and dir (probe-file* (merge-pathnames* (make-pathname :name name :type "asd")
                                                           (ensure-directory-pathname dir))))))
        (when file (return file))))))

(defun sysdef-source-registry-search (system)
  (values (gethash (primary-system-name system) (ensure-source-registry))))

(defvar *system-definition-search-functions*
  '(sysdef-central-registry-search sysdef-source-registry-search)
  "Functions of a system name returning the pathname of its .asd file, or NIL.")

(defun search-places ()
  "Where systems were looked for, for messages."
  (append (mapcar (lambda (e) (namestring (if (consp e) (eval e) e))) *central-registry*)
          (mapcar (lambda (d) (format nil "~A~:[~;**/~]" (namestring (second d)) (eq (car d) :tree)))
                  *source-registry-directories*)))

(defun search-for-system-definition (name)
  (dolist (f *system-definition-search-functions*)
    (let ((file (funcall f name)))
      (when file (return (pathname file))))))

;;; ---------------------------------------------------------------- finding systems

(defvar *epoch-counter* 0
  "Counts system definitions (never rebound): an action is recorded with the
count when it is performed, and a system defined after that (its
DEFINE-EPOCH is larger) makes the action out of date, as a newer definition
does in ASDF.")
(defvar *definition-epoch* nil
  "The epoch of the .asd being loaded (NIL outside LOAD-ASD).")

(defvar *asdf-session* nil
  "The names FIND-SYSTEM has checked during the current OPERATE (or top-level
FIND-SYSTEM) call.")

(defmacro with-asdf-session (options &body body)
  (declare (ignore options))
  `(let ((*asdf-session* (or *asdf-session* (make-hash-table :test 'equal))))
     ,@body))

(defun load-asd (pathname &key name)
  "Load the system definition file PATHNAME in package ASDF-USER."
  (declare (ignore name))
  (let* ((truename (truename pathname))
         (*package* (find-package :asdf-user))
         (*default-pathname-defaults* (pathname-directory-pathname truename))
         (*definition-epoch* (incf *epoch-counter*)))
    (setf (gethash (namestring truename) *asd-load-times*) (safe-file-write-date truename))
    (handler-bind ((error (lambda (c)
                            (unless (typep c 'system-definition-error)
                              (error 'load-system-definition-error
                                     :name (pathname-name truename) :pathname truename :condition c)))))
      (load truename))))

(defun asd-stale-p (file)
  (let ((loaded (gethash (namestring (truename file)) *asd-load-times*)))
    (or (null loaded) (< loaded (safe-file-write-date file)))))

(defun locate-system (name)
  "(values found-system pathname previous previous-time) as ASDF's LOCATE-SYSTEM."
  (let* ((name (coerce-name name))
         (previous (registered-system name))
         (file (search-for-system-definition name)))
    (values (and file t) file previous)))

(defun defined-by-own-asd-p (system)
  "Whether SYSTEM's primary system was defined from an .asd of its name
(for other systems ASDF reloads the .asd that defined them, once a session)."
  (let ((primary (registered-system (primary-system-name system))))
    (and primary (system-source-file primary)
         (string= (pathname-name (system-source-file primary)) (component-name primary)))))

(defun find-system (name &optional (error-p t))
  "The system named NAME: loading its .asd when it is not registered yet,
when the file changed since, or (once per operation) when it was defined in
the .asd of another system; NIL or a MISSING-COMPONENT error when there is none."
  (when (typep name 'system) (return-from find-system name))
  (with-asdf-session ()
    (let* ((name (coerce-name name))
           (registered (registered-system name)))
      (cond ((and registered (or (gethash name *preloaded-systems*)
                                 (typep registered 'builtin-system)
                                 (member (primary-system-name name) *systems-being-defined* :test #'string=)
                                 (gethash name *asdf-session*)))
             registered)
            ((builtin-system name))
            (t
             (setf (gethash name *asdf-session*) t)
             (let ((file (or (and registered (system-source-file registered)
                                  (probe-file* (system-source-file registered)))
                             (search-for-system-definition name))))
               (when (and file (or (null registered) (asd-stale-p file)
                                   (not (defined-by-own-asd-p registered))))
                 (let ((*systems-being-defined* (cons (primary-system-name name) *systems-being-defined*)))
                   (load-asd file :name name)))
               (or (registered-system name)
                   (and error-p (error 'missing-component :requires name)))))))))

;;; ---------------------------------------------------------------- defsystem

(defun class-for-type (parent type)
  "The component class of a :components entry's type keyword."
  (or (case type
        (:file (or (and parent (inherited-default-component-class parent)) 'cl-source-file))
        (:module 'module)
        (:system 'system)
        (t nil))
      (let ((class (or (find-class (find-symbol (symbol-name type) *package*) nil)
                       (let ((s (find-symbol (symbol-name type) :asdf))) (and s (find-class s nil))))))
        (and class (subtypep class 'component) class))
      (error 'system-definition-error-with-text
             :text (format nil "defsystem: ~S is not a component type" type))))

(defun inherited-default-component-class (parent)
  (loop for p = parent then (component-parent p) while p
        for class = (module-default-component-class p)
        when class return (if (symbolp class)
                              (or (find-class class nil)
                                  (find-class (find-symbol (symbol-name class) :asdf)))
                              class)))

(defparameter *descriptive-options*
  '(:description :long-description :author :maintainer :license :licence :homepage
    :bug-tracker :mailto :long-name :source-control :name :entry-point :build-operation
    :build-pathname :encoding :external-format :properties :around-compile :class
    :default-component-class :output-files :compile-check :perform :explain :serial
    :operation-done-p :in-order-to :do-first :if-feature :if-component-dep-fails
    :weakly-depends-on :defsystem-depends-on :depends-on :components :pathname :version :type
    :source-file :package-inferred-system :feature))

(defun normalize-version (form pathname)
  "The version a :version option gives: a string, or a (:read-file-form file
[:at n]) or (:read-file-line file [:at n]) under PATHNAME."
  (cond ((or (null form) (stringp form)) form)
        ((and (consp form) (member (car form) '(:read-file-form :read-file-line)))
         (destructuring-bind (kind file &key (at 0)) form
           (let ((file (subpathname pathname file)))
             (handler-case (if (eq kind :read-file-form)
                               (read-file-form file :at at)
                               (read-file-line file :at at))
               (error (e) (warn "Could not read the version from ~A: ~A" file e) nil)))))
        (t (warn "Invalid version ~S" form) nil)))

(defun define-inline-methods (component perform explain operation-done-p)
  "Define the :perform (and :explain, :operation-done-p) methods of a
defsystem form as methods on COMPONENT (an EQL specializer)."
  (dolist (m (component-inline-methods component))
    (ignore-errors (remove-method (first m) (second m))))
  (setf (component-inline-methods component) nil)
  (flet ((define (gf clauses)
           (dolist (clause clauses)
             (destructuring-bind (op &rest rest) clause
               (let* ((qualifiers (loop while (and rest (symbolp (car rest)) (car rest) (not (listp (car rest))))
                                        collect (pop rest)))
                      (lambda-list (pop rest))
                      (body rest)
                      (o (or (first lambda-list) (gensym "O")))
                      (c (or (second lambda-list) (gensym "C")))
                      (class (class-name (operation-class op)))
                      (method (eval `(defmethod ,gf ,@qualifiers ((,o ,class) (,c (eql ',component)))
                                       (declare (ignorable ,o ,c))
                                       ,@body))))
                 (push (list (fdefinition gf) method) (component-inline-methods component)))))))
    (define 'perform perform)
    (define 'explain explain)
    (define 'operation-done-p operation-done-p)))

(defun feature-match-p (expr) (featurep expr))

(defun parse-component-form (parent form &key previous-serial-component)
  "Make (or reinitialize) the component FORM describes, under PARENT."
  (destructuring-bind (type name &rest options &key components pathname version depends-on
                                                  in-order-to if-feature serial default-component-class
                                                  weakly-depends-on defsystem-depends-on
                                                  &allow-other-keys)
      form
    (declare (ignore weakly-depends-on defsystem-depends-on))
    (let* ((name (coerce-name name))
           (class (if (eq type :system) 'system (class-for-type parent type)))
           (depends-on (append (if (and previous-serial-component
                                        (not (member previous-serial-component depends-on :test #'equal)))
                                   (list previous-serial-component)
                                   nil)
                               depends-on))
           (initargs (list :name name :parent parent :pathname pathname
                           :depends-on depends-on :in-order-to (normalize-in-order-to in-order-to)
                           :if-feature if-feature
                           :description (getf options :description)
                           :long-description (getf options :long-description)))
           (component (if (and parent (find-component parent name))
                          (let ((old (find-component parent name)))
                            (if (eq (class-of old) (find-class class))
                                (progn (apply #'reinitialize-instance old initargs) old)
                                (apply #'make-instance class initargs)))
                          (apply #'make-instance class initargs))))
      (setf (%component-absolute-pathname component) nil)
      (when version
        (setf (component-version component)
              (normalize-version version (if parent (component-pathname parent) *default-pathname-defaults*))))
      (when (typep component 'file-component)
        (let ((ty (getf options :type :none)))
          (unless (eq ty :none) (setf (file-type component) ty))))
      (when (typep component 'parent-component)
        (setf (module-default-component-class component) default-component-class
              (module-serial component) serial)
        (parse-children component components serial))
      (define-inline-methods component (plist-values options :perform) (plist-values options :explain)
                             (plist-values options :operation-done-p))
      component)))

(defun plist-values (plist key)
  "Every value of KEY in PLIST (an option may be given more than once)."
  (loop for (k v) on plist by #'cddr when (eq k key) collect v))

(defun parse-children (parent forms serial)
  (let ((children nil) (previous nil)
        (table (make-hash-table :test 'equal)))
    (dolist (form forms)
      (let ((child (parse-component-form parent form
                                         :previous-serial-component (and serial previous))))
        (when (gethash (component-name child) table)
          (error 'system-definition-error-with-text
                 :text (format nil "Duplicate component name ~S in ~A" (component-name child) parent)))
        (setf (gethash (component-name child) table) child)
        (push child children)
        (setq previous (component-name child))))
    (setf (component-children parent) (nreverse children)
          (component-children-by-name parent) table)))

(defun normalize-in-order-to (in-order-to)
  "((op (dep-op component...)...)...) with bare (op component) entries kept."
  (mapcar (lambda (entry)
            (cons (car entry)
                  (mapcar (lambda (dep) (if (consp dep) dep (list dep))) (cdr entry))))
          in-order-to))

(defun register-system-definition (name &rest options &key pathname class defsystem-depends-on
                                                         source-file &allow-other-keys)
  "The function DEFSYSTEM expands to: make or update the system NAME."
  (let* ((name (coerce-name name))
         (source-file (or source-file *load-truename*))
         (directory (if source-file (pathname-directory-pathname source-file)
                        (ensure-directory-pathname *default-pathname-defaults*))))
    (when defsystem-depends-on
      (dolist (dep defsystem-depends-on)
        (let ((dep (resolve-dependency-name dep)))
          (when dep (load-system dep)))))
    (let* ((class (or class 'system))
           (class (if (symbolp class)
                      (or (find-class class nil)
                          (let ((s (find-symbol (symbol-name class) :asdf))) (and s (find-class s nil)))
                          (error 'system-definition-error-with-text
                                 :text (format nil "defsystem ~A: ~S is not a class" name class)))
                      class))
           (system (let ((old (registered-system name)))
                     (cond ((null old) (make-instance class :name name))
                           ((eq (class-of old) class) old)
                           (t (change-class old class))))))
      (setf (system-source-file system) source-file
            (system-define-epoch system) (or *definition-epoch* (incf *epoch-counter*))
            (%component-absolute-pathname system) nil)
      (let ((keys (list :author :maintainer :licence :license :homepage :bug-tracker :mailto
                        :long-name :source-control :entry-point :defsystem-depends-on
                        :weakly-depends-on)))
        (dolist (k keys)
          (multiple-value-bind (ind value tail) (get-properties options (list k))
            (declare (ignore ind))
            (when tail
              (setf (slot-value system (if (eq k :license) 'licence (find-symbol (symbol-name k) :asdf)))
                    value)))))
      (register-system system)
      (let ((*default-pathname-defaults* directory))
        ;; The system is its own component form; PATHNAME is relative to the .asd's directory.
        (setf (%component-pathname-spec system) pathname)
        (let* ((version (getf options :version))
               (form (list* :system name (remove-plist-keys '(:pathname :version :class :source-file) options))))
          (destructuring-bind (&key components depends-on in-order-to if-feature serial
                                 default-component-class description long-description
                               &allow-other-keys)
              (cddr form)
            (setf (component-sideway-dependencies system) depends-on
                  (component-in-order-to system) (normalize-in-order-to in-order-to)
                  (component-if-feature system) if-feature
                  (component-description system) description
                  (component-long-description system) long-description
                  (module-default-component-class system) default-component-class
                  (module-serial system) serial
                  (component-version system) (normalize-version version directory))
            (parse-children system components serial)
            (define-inline-methods system (plist-values options :perform) (plist-values options :explain)
                                   (plist-values options :operation-done-p)))))
      (dolist (k (loop for (k v) on options by #'cddr collect k))
        (unless (member k *descriptive-options*)
          (warn "defsystem ~A: the option ~S is not implemented in mprof-lisp's ASDF; ignored" name k)))
      system)))

(defmacro defsystem (name &body options)
  "Define the system NAME (see the ASDF manual; docs/lisp.md says which options work)."
  `(register-system-definition ',name ,@(loop for (k v) on options by #'cddr
                                               collect k collect `',v)))

;;; ---------------------------------------------------------------- dependencies

(defun resolve-dependency-name (spec)
  "The system name a :depends-on entry names, or NIL when a (:feature ...)
entry's feature is absent."
  (cond ((or (stringp spec) (symbolp spec)) (coerce-name spec))
        ((and (consp spec) (eq (car spec) :feature))
         (and (featurep (second spec)) (resolve-dependency-name (third spec))))
        ((and (consp spec) (eq (car spec) :version)) (coerce-name (second spec)))
        ((and (consp spec) (eq (car spec) :require)) nil)
        (t (error 'system-definition-error-with-text
                  :text (format nil "Invalid dependency ~S" spec)))))

(defun version-satisfies (component version)
  "Whether COMPONENT's version is at least VERSION (no VERSION: always)."
  (or (null version)
      (let ((v (if (typep component 'component) (component-version component) component)))
        (and v (version<= version v)))))

(defun require-component (name)
  (or (find-component nil (list name))
      (make-instance 'require-system-component :name (string name))))

(defun resolve-dependency (component spec)
  "The component a :depends-on entry of COMPONENT names (a sibling, or a
system for a system's entries), or NIL when a feature excludes it."
  (let ((parent (component-parent component)))
    (cond ((and (consp spec) (eq (car spec) :feature))
           (and (featurep (second spec)) (resolve-dependency component (third spec))))
          ((and (consp spec) (eq (car spec) :require))
           (make-instance 'require-system-component :name (string (second spec))))
          ((and (consp spec) (eq (car spec) :version))
           (let ((c (resolve-dependency component (second spec))))
             (when (and c (not (version-satisfies c (third spec))))
               (error 'missing-dependency-of-version :requires (coerce-name (second spec))
                                                     :version (third spec) :required-by component))
             c))
          ((consp spec)
           (error 'system-definition-error-with-text
                  :text (format nil "Invalid dependency ~S of ~A" spec component)))
          (parent
           (or (find-component parent spec)
               (error 'missing-dependency :requires (coerce-name spec) :required-by component
                                          :parent parent)))
          (t (handler-case (find-system spec)
               (missing-component ()
                 (error 'missing-dependency :requires (coerce-name spec) :required-by component)))))))

(defun resolve-in-order-to-component (component spec)
  (or (and (typep spec 'component) spec)
      (let ((parent (component-parent component)))
        (or (and parent (not (consp spec)) (find-component parent spec))
            (if (and (consp spec) (eq (car spec) :feature))
                (and (featurep (second spec)) (resolve-in-order-to-component component (third spec)))
                (find-system spec))))))

(defun component-enabled-p (component)
  (let ((f (component-if-feature component)))
    (or (null f) (featurep f))))

(defun enabled-children (component)
  (remove-if-not #'component-enabled-p (component-children component)))

(defgeneric component-depends-on (operation component)
  (:documentation "A list of (operation-designator component-designator...):
the actions that must be performed before (OPERATION . COMPONENT)."))

(defmethod component-depends-on ((o operation) (c component))
  (loop for (op . deps) in (component-in-order-to c)
        when (typep o (operation-class op))
          append deps))

(defmethod component-depends-on ((o prepare-op) (c component))
  (append (let ((parent (component-parent c)))
            (and parent `((prepare-op ,parent))))
          (let ((deps (remove nil (mapcar (lambda (d) (resolve-dependency c d))
                                          (component-sideway-dependencies c)))))
            (and deps `((load-op ,@deps))))
          (call-next-method)))

(defmethod component-depends-on ((o prepare-op) (s system))
  ;; :weakly-depends-on systems are loaded first when they can be found.
  (let ((weak (remove nil (mapcar (lambda (d)
                                    (let ((name (resolve-dependency-name d)))
                                      (and name (find-system name nil))))
                                  (system-weakly-depends-on s)))))
    (append (call-next-method) (and weak `((load-op ,@weak))))))

(defmethod component-depends-on ((o compile-op) (c component))
  `((prepare-op ,c) ,@(call-next-method)))

(defmethod component-depends-on ((o load-op) (c component))
  `((prepare-op ,c) (compile-op ,c) ,@(call-next-method)))

(defmethod component-depends-on ((o compile-op) (c parent-component))
  `((prepare-op ,c) ,@(let ((kids (enabled-children c))) (and kids `((compile-op ,@kids))))
    ,@(call-next-method)))

(defmethod component-depends-on ((o load-op) (c parent-component))
  `((prepare-op ,c) ,@(let ((kids (enabled-children c))) (and kids `((load-op ,@kids))))
    ,@(call-next-method)))

(defmethod component-depends-on ((o load-op) (c static-file))
  (call-next-method))

(defmethod component-depends-on ((o compile-op) (c static-file))
  (call-next-method))

(defmethod component-depends-on ((o load-op) (c require-system-component)) nil)
(defmethod component-depends-on ((o load-op) (c builtin-system)) nil)

(defmethod component-depends-on ((o test-op) (c component))
  `((load-op ,c) ,@(call-next-method)))

(defmethod component-depends-on ((o load-source-op) (c component))
  `((load-op ,c) ,@(call-next-method)))

;;; ---------------------------------------------------------------- performing

(defgeneric perform (operation component)
  (:documentation "Carry out OPERATION on COMPONENT."))

(defmethod perform ((o operation) (c component)) nil)

(defmethod perform ((o load-op) (c cl-source-file))
  (let ((file (component-pathname c)))
    (when *verbose-out* (format *verbose-out* "~&; loading ~A~%" (namestring file)))
    (load file)))

(defmethod perform ((o load-source-op) (c cl-source-file))
  (load (component-pathname c)))

(defmethod perform ((o load-op) (c static-file)) nil)
(defmethod perform ((o compile-op) (c static-file)) nil)

(defmethod perform ((o load-op) (c require-system-component))
  (require (component-name c)))

(defmethod perform ((o load-op) (c builtin-system))
  (require (builtin-system-module c)))

(defgeneric operation-done-p (operation component)
  (:documentation "NIL when the action must be performed whatever its time stamp."))
(defmethod operation-done-p ((o operation) (c component)) t)
(defmethod operation-done-p ((o test-op) (c component)) nil)

(defgeneric input-files (operation component))
(defmethod input-files ((o operation) (c component))
  (let ((p (and (typep c 'source-file) (component-pathname c)))) (and p (list p))))

(defgeneric output-files (operation component))
(defmethod output-files ((o operation) (c component)) nil)

(defun output-file (operation component)
  (first (output-files (make-operation operation) component)))

(defgeneric explain (operation component))
(defmethod explain ((o operation) (c component))
  (format *verbose-out* "~&; ~A~%" (action-description o c)))

(defgeneric action-description (operation component))
(defmethod action-description ((o operation) (c component))
  (format nil "~(~A~) on ~A" (class-name (class-of o)) c))
(defmethod action-description ((o load-op) (c cl-source-file))
  (format nil "loading ~A" c))
(defmethod action-description ((o test-op) (c component))
  (format nil "testing ~A" c))

(defun action-description* (action)
  (if (consp action)
      (action-description (car action) (cdr action))
      (princ-to-string action)))

(defun component-stamp (component)
  (if (typep component 'source-file)
      (let ((file (component-pathname component)))
        (and file (safe-file-write-date file)))
      0))

(defun action-up-to-date-p (operation component)
  "Whether (OPERATION . COMPONENT) was performed since its system was last
defined, and its input has not changed since."
  (let ((record (gethash (class-of operation) (component-operation-times component))))
    (and record
         (operation-done-p operation component)
         (or (eq record t)
             (and (let ((system (component-system component)))
                    (>= (cdr record) (if (typep system 'system) (system-define-epoch system) 0)))
                  (or (not (typep component 'source-file))
                      (>= (car record) (component-stamp component))))))))

(defun mark-operation-done (operation component)
  "Record that (OPERATION . COMPONENT) was performed: (time . definition epoch)."
  (setf (gethash (class-of operation) (component-operation-times component))
        (cons (max (get-universal-time) (or (component-stamp component) 0)) *epoch-counter*)))

(defun perform-with-restarts (operation component)
  "PERFORM, with the restarts RETRY and ACCEPT around it; an error escaping
it is resignalled as an ACTION-FAILED naming the action."
  (loop
    (restart-case
        (progn
          (handler-bind ((error (lambda (c)
                                  (unless (typep c 'action-failed)
                                    (error 'action-failed :operation operation :component component
                                                          :condition c)))))
            (perform operation component))
          (mark-operation-done operation component)
          (return))
      (retry ()
        :report (lambda (s) (format s "~@<Retry ~A.~@:>" (action-description operation component))))
      (accept ()
        :report (lambda (s) (format s "~@<Continue, treating ~A as having been successful.~@:>"
                                    (action-description operation component)))
        (mark-operation-done operation component)
        (return)))))

;;; ---------------------------------------------------------------- planning

(defclass sequential-plan ()
  ((actions :initform nil :accessor plan-actions-r)
   (visited :initform (make-hash-table :test 'equal) :accessor plan-visited)
   (deps :initform (make-hash-table :test 'equal) :accessor plan-deps)))

(defun plan-actions (plan) (reverse (plan-actions-r plan)))

(defun action-key (operation component)
  (cons (class-of operation) component))

(defun plan-action (plan operation component path)
  "Add (OPERATION . COMPONENT) to PLAN after the actions it depends on."
  (let ((key (action-key operation component)))
    (case (gethash key (plan-visited plan))
      (:done (return-from plan-action))
      (:visiting (error 'circular-dependency
                        :actions (reverse (cons (cons operation component) path)))))
    (setf (gethash key (plan-visited plan)) :visiting)
    (let ((direct nil)
          (path (cons (cons operation component) path)))
      (dolist (spec (component-depends-on operation component))
        (let ((op (make-operation (car spec))))
          (dolist (dep (cdr spec))
            (let ((c (if (typep dep 'component) dep (resolve-in-order-to-component component dep))))
              (when (and c (component-enabled-p c))
                (plan-action plan op c path)
                (push (action-key op c) direct))))))
      (setf (gethash key (plan-deps plan)) direct)
      (setf (gethash key (plan-visited plan)) :done)
      (push (cons operation component) (plan-actions-r plan)))))

(defun make-plan (plan-class operation component &rest keys)
  (declare (ignore keys))
  (let ((plan (make-instance (or plan-class 'sequential-plan))))
    (plan-action plan (make-operation operation) (if (typep component 'component) component
                                                     (find-system component))
                 nil)
    plan))

(defun forced-p (force component)
  (cond ((null force) nil)
        ((eq force :all) t)
        ((eq force t) (eq (component-system component) *operate-system*))
        ((listp force) (member (component-name (component-system component))
                               (mapcar #'coerce-name force) :test #'string=))
        (t nil)))

(defvar *operate-system* nil)

(defun perform-plan (plan &key force force-not verbose)
  (let ((performed (make-hash-table :test 'equal))
        (*verbose-out* (if verbose *standard-output* *verbose-out*)))
    (dolist (action (plan-actions plan))
      (destructuring-bind (operation . component) action
        (let ((key (action-key operation component)))
          (when (and (not (forced-p force-not component))
                     (or (forced-p force component)
                         (not (action-up-to-date-p operation component))
                         (some (lambda (k) (gethash k performed)) (gethash key (plan-deps plan)))))
            (perform-with-restarts operation component)
            (setf (gethash key performed) t)))))))

(defun operate (operation component &rest keys &key force force-not verbose &allow-other-keys)
  "Perform OPERATION on COMPONENT (a system designator) and everything it
needs first; returns the operation and the plan."
  (with-asdf-session ()
   (let* ((system (if (typep component 'component) component (find-system component)))
         (op (make-operation operation))
         (*operate-system* (component-system system))
         (plan (make-plan 'sequential-plan op system)))
    (declare (ignore keys))
    (perform-plan plan :force force :force-not force-not :verbose verbose)
    (values op plan))))

(defun oos (operation component &rest keys)
  (apply #'operate operation component keys))

(defun load-system (system &rest keys &key force force-not verbose version &allow-other-keys)
  "Load SYSTEM (a name) and what it depends on; T."
  (declare (ignore force force-not verbose))
  (with-asdf-session ()
    (let ((s (find-system system)))
      (when (and version (not (version-satisfies s version)))
        (error 'missing-component-of-version :requires (coerce-name system) :version version))
      (apply #'operate *load-system-operation* s (remove-plist-key :version keys))
      t)))

(defun load-systems* (systems &rest keys)
  (dolist (s systems) (apply #'load-system s keys)))

(defun load-systems (&rest systems)
  (load-systems* systems))

(defun compile-system (system &rest args)
  (apply #'operate 'compile-op system args)
  t)

(defun test-system (system &rest args)
  "Perform TEST-OP on SYSTEM (its test suite, as its .asd says); T."
  (apply #'operate 'test-op system args)
  t)

(defun require-system (system &rest keys)
  "Load SYSTEM unless it is loaded already."
  (with-asdf-session ()
    (unless (component-loaded-p (find-system system))
      (apply #'load-system system keys)))
  t)

;;; ---------------------------------------------------------------- the rest of the interface

(defvar *output-translations-parameter* nil)
(defun initialize-output-translations (&optional parameter)
  (setf *output-translations-parameter* parameter)
  (values))
(defun clear-output-translations () (values))
(defun disable-output-translations () (values))
(defun ensure-output-translations () (values))
(defun apply-output-translations (path)
  "Compiled files live beside their sources here (there are none): PATH itself."
  (and path (pathname path)))
(defun enable-asdf-binary-locations-compatibility (&rest keys)
  (declare (ignore keys))
  (not-here 'enable-asdf-binary-locations-compatibility))

(defun run-shell-command (control-string &rest args)
  "Run a shell command (FORMAT's CONTROL-STRING and ARGS); its exit code."
  (let ((command (apply #'format nil control-string args)))
    (nth-value 2 (run-program command :output (or *verbose-out* t) :error-output :output
                                      :ignore-error-status t))))

(defun upgrade-asdf () nil)

(defun register-system-packages (system packages)
  (declare (ignore system packages))
  nil)

(defun %clear-asdf-configuration ()
  (clear-source-registry)
  (clear-output-translations))

(register-clear-configuration-hook '%clear-asdf-configuration)

(register-immutable-system "asdf" :version *asdf-version*)
(register-immutable-system "uiop" :version *uiop-version*)
(register-immutable-system "asdf-package-system" :version *asdf-version*)

(dolist (feature '(:asdf :asdf2 :asdf3 :asdf3.1 :asdf3.2 :asdf3.3))
  (pushnew feature *features*))

(provide "ASDF")
(provide "asdf")
