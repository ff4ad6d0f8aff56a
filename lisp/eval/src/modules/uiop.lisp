;;;; UIOP for mprof-lisp, part 1 of 2 (uiop-files.lisp follows): the part of
;;;; ASDF's portability library that
;;;; libraries and their .asd files call, written for this implementation (it
;;;; is not the real UIOP, which does not support mprof-lisp). Loaded by
;;;; (require :uiop), and by (require :asdf) first; embedded in the binary
;;;; (builtins/modules.rs).
;;;;
;;;; Implemented: DEFINE-PACKAGE (:mix, :reexport, :use-reexport,
;;;; :mix-reexport, :unintern, :recycle accepted), symbols and packages
;;;; (SYMBOL-CALL, FIND-SYMBOL*...), strings and lists (STRCAT, SPLIT-STRING,
;;;; STRING-PREFIX-P, IF-LET, ENSURE-LIST...), features and the OS (FEATUREP,
;;;; GETENV, OS-UNIX-P, IMPLEMENTATION-TYPE...), versions (VERSION<=,
;;;; PARSE-VERSION), pathnames (PARSE-UNIX-NAMESTRING, SUBPATHNAME,
;;;; MERGE-PATHNAMES*, ENSURE-DIRECTORY-PATHNAME...), the file system
;;;; (DIRECTORY-FILES, SUBDIRECTORIES, FILE-EXISTS-P, DIRECTORY-EXISTS-P...),
;;;; reading files (READ-FILE-FORM(S), READ-FILE-STRING, READ-FILE-LINES),
;;;; streams, RUN-PROGRAM (synchronous, through MPROF-EXT:RUN-PROGRAM),
;;;; WITH-TEMPORARY-FILE, QUIT and the command line. What is not here
;;;; (LAUNCH-PROGRAM, CHDIR...) signals an error naming it
;;;; (NOT-IMPLEMENTED-ERROR). docs/lisp.md lists both.
;;;;
;;;; Invariant: the package UIOP holds every exported name, and its
;;;; nicknames are the real UIOP's sub-packages (UIOP/PACKAGE, UIOP/OS...), so
;;;; code naming uiop/os:getenv finds it.

(defpackage :uiop
  (:use :common-lisp)
  (:nicknames :uiop/package :uiop/common-lisp :uiop/utility :uiop/version :uiop/os
              :uiop/pathname :uiop/filesystem :uiop/stream :uiop/image :uiop/launch-program
              :uiop/run-program :uiop/lisp-build :uiop/configuration :uiop/backward-driver
              :uiop/driver)
  (:export
   ;; packages and symbols
   #:define-package #:ensure-package #:find-package* #:find-symbol* #:symbol-call #:intern*
   #:export* #:import* #:shadowing-import* #:unintern* #:make-symbol* #:package-names
   #:standard-case-symbol-name #:find-standard-case-symbol #:symbol-test-to-feature-expression
   #:coerce-class #:package-definition-form
   ;; utilities
   #:with-upgradability #:uiop-debug #:if-let #:while-collecting #:appendf #:nest
   #:ensure-list #:remove-plist-key #:remove-plist-keys #:ensure-gethash #:list-to-hash-set
   #:length=n-p #:emptyp #:strcat #:first-char #:last-char #:split-string #:string-prefix-p
   #:string-suffix-p #:string-enclosed-p #:stripln #:frob-substrings #:base-string-p
   #:strings-common-element-type #:reduce/strcat #:standard-case-symbol-name
   #:ensure-function #:call-function #:call-functions #:register-hook-function
   #:match-condition-p #:match-any-condition-p #:call-with-muffled-conditions
   #:with-muffled-conditions #:not-implemented-error #:parameter-error #:style-warn
   #:access-at #:access-at-count #:boolean-to-feature-expression #:timestamp< #:timestamp<=
   #:earlier-timestamp #:latest-timestamp #:stamp< #:stamp<= #:earliest-stamp #:latest-stamp
   #:lexicographic< #:lexicographic<= #:*uiop-version* #:uiop-version
   #:version< #:version<= #:parse-version #:unparse-version #:version-compatible-p
   #:deprecated-function-condition
   ;; the OS and the implementation
   #:featurep #:os-unix-p #:os-windows-p #:os-macosx-p #:os-genera-p #:os-haiku-p #:os-oldmac-p
   #:os-mezzano-p #:detect-os #:*implementation-type* #:implementation-type
   #:operating-system #:architecture #:lisp-version-string #:implementation-identifier
   #:hostname #:getenv #:getenvp #:getcwd #:chdir #:with-current-directory
   #:*stdin* #:*stdout* #:*stderr* #:raw-command-line-arguments #:command-line-arguments
   #:*command-line-arguments* #:argv0 #:quit #:die #:*image-dumped-p*
   #:register-image-restore-hook #:register-image-dump-hook #:*image-restore-hook*
   #:*image-dump-hook* #:print-backtrace #:print-condition-backtrace #:fatal-condition
   #:handle-fatal-condition #:call-with-fatal-condition-handler #:with-fatal-condition-handler
   #:shell-boolean-exit #:dump-image #:create-image #:restore-image
   ;; pathnames
   #:*nil-pathname* #:nil-pathname #:*wild* #:*wild-file* #:*wild-file-for-directory*
   #:*wild-directory* #:*wild-inferiors* #:*wild-path* #:wilden #:*unspecific-pathname-type*
   #:normalize-pathname-directory-component #:merge-pathname-directory-components
   #:merge-pathnames* #:pathname-equal #:absolute-pathname-p #:relative-pathname-p
   #:hidden-pathname-p #:file-pathname-p #:directory-pathname-p #:logical-pathname-p
   #:physical-pathname-p #:physicalize-pathname #:pathname-directory-pathname
   #:pathname-parent-directory-pathname #:ensure-directory-pathname #:ensure-absolute-pathname
   #:ensure-pathname #:split-unix-namestring-directory-components #:split-name-type
   #:parse-unix-namestring #:unix-namestring #:subpathname #:subpathname* #:subpathp
   #:enough-pathname #:with-enough-pathname #:call-with-enough-pathname
   #:native-namestring #:parse-native-namestring #:pathname-root #:pathname-host-pathname
   #:make-pathname* #:make-pathname-logical #:make-pathname-component-logical
   #:component-name-to-pathname-components #:directory-separator-for-host
   #:directorize-pathname-host-device #:translate-pathname*
   #:*output-translation-function* #:wilden #:relativize-pathname-directory
   #:relativize-directory-component #:ensure-absolute-pathname
   ;; the file system
   #:truename* #:truenamize #:probe-file* #:file-exists-p #:directory-exists-p
   #:resolve-symlinks #:resolve-symlinks* #:*resolve-symlinks* #:directory* #:directory-files
   #:subdirectories #:collect-sub*directories #:filter-logical-directory-results
   #:ensure-all-directories-exist #:delete-file-if-exists #:delete-empty-directory
   #:delete-directory-tree #:rename-file-overwriting-target #:safe-file-write-date
   #:lisp-implementation-directory #:lisp-implementation-pathname-p #:get-pathname-defaults
   #:xdg-config-home #:xdg-data-home #:xdg-cache-home #:xdg-runtime-dir #:xdg-config-dirs
   #:xdg-data-dirs #:xdg-config-pathname #:xdg-config-pathnames #:xdg-data-pathname
   #:xdg-data-pathnames #:xdg-cache-pathname #:uiop-directory #:*user-cache*
   #:*temporary-directory* #:temporary-directory #:setup-temporary-directory
   #:with-temporary-file #:call-with-temporary-file #:tmpize-pathname
   #:add-pathname-suffix #:with-staging-pathname #:call-with-staging-pathname
   ;; streams and files
   #:*default-stream-element-type* #:*utf-8-external-format* #:*default-encoding*
   #:encoding-external-format #:with-safe-io-syntax #:call-with-safe-io-syntax
   #:safe-read-from-string #:safe-read-file-form #:safe-read-file-line
   #:with-output #:output-string #:with-input #:input-string #:with-input-file
   #:call-with-input-file #:with-output-file #:call-with-output-file
   #:slurp-stream-string #:slurp-stream-lines #:slurp-stream-line #:slurp-stream-forms
   #:slurp-stream-form #:copy-stream-to-stream #:concatenate-files #:copy-file
   #:read-file-string #:read-file-lines #:read-file-line #:read-file-forms #:read-file-form
   #:eval-input #:eval-thunk #:standard-eval-thunk #:println #:writeln #:finish-outputs
   #:format! #:safe-format! #:*stdin* #:with-null-input #:with-null-output
   #:null-device-pathname
   ;; programs
   #:run-program #:launch-program #:subprocess-error #:subprocess-error-code
   #:subprocess-error-command #:subprocess-error-process #:escape-shell-token
   #:escape-shell-command #:escape-sh-token #:escape-sh-command #:easy-sh-character-p
   #:process-alive-p #:wait-process #:terminate-process
   ;; building
   #:compile-file* #:compile-file-pathname* #:load* #:load-from-string #:load-pathname
   #:with-compilation-unit* #:*compile-file-warnings-behaviour* #:*compile-file-failure-behaviour*
   #:with-muffled-compiler-conditions #:with-muffled-loader-conditions
   #:with-saved-deferred-warnings #:*compile-check* #:lispize-pathname
   #:current-lisp-file-pathname #:load-uiop-debug-utility #:*uninteresting-conditions*
   #:*usual-uninteresting-conditions* #:*uninteresting-compiler-conditions*
   #:*uninteresting-loader-conditions*
   ;; configuration
   #:*ignored-configuration-form* #:user-configuration-directories
   #:system-configuration-directories #:in-first-directory #:in-user-configuration-directory
   #:in-system-configuration-directory #:validate-configuration-form
   #:validate-configuration-file #:validate-configuration-directory
   #:configuration-inheritance-directive-p #:report-invalid-form #:invalid-configuration
   #:resolve-location #:location-designator-p #:location-function-p #:*here-directory*
   #:resolve-relative-location #:resolve-absolute-location #:upgrade-configuration
   #:register-clear-configuration-hook #:clear-configuration))

(in-package :uiop)

(defparameter *uiop-version* "3.3.6")
(defun uiop-version () *uiop-version*)

(defmacro with-upgradability ((&optional) &body body)
  `(progn ,@body))

(define-condition not-implemented-error (error)
  ((functionality :initarg :functionality :initform nil)
   (format-control :initarg :format-control :initform nil)
   (format-arguments :initarg :format-arguments :initform nil))
  (:report (lambda (c s)
             (format s "~A is not implemented in mprof-lisp's UIOP~@[: ~?~]"
                     (slot-value c 'functionality)
                     (slot-value c 'format-control) (slot-value c 'format-arguments)))))

(defun not-implemented-error (functionality &optional format-control &rest format-arguments)
  (error 'not-implemented-error :functionality functionality
                                :format-control format-control :format-arguments format-arguments))

(define-condition parameter-error (error)
  ((functionality :initarg :functionality :initform nil)
   (format-control :initarg :format-control :initform "")
   (format-arguments :initarg :format-arguments :initform nil))
  (:report (lambda (c s)
             (format s "~A: ~?" (slot-value c 'functionality)
                     (slot-value c 'format-control) (slot-value c 'format-arguments)))))

(defun parameter-error (format-control functionality &rest format-arguments)
  (error 'parameter-error :functionality functionality
                          :format-control format-control :format-arguments format-arguments))

(defun style-warn (datum &rest arguments)
  (if (stringp datum)
      (warn 'simple-style-warning* :format-control datum :format-arguments arguments)
      (apply #'warn datum arguments)))

(define-condition simple-style-warning* (style-warning simple-condition) ())

(define-condition deprecated-function-condition (condition) ())

;;; ---------------------------------------------------------------- packages

(defun find-package* (package-designator &optional (error t))
  (let ((package (find-package package-designator)))
    (cond (package package)
          (error (error "No package named ~S" (string package-designator)))
          (t nil))))

(defun find-symbol* (name package-designator &optional (error t))
  "The symbol named NAME in PACKAGE-DESIGNATOR, and its status; with ERROR,
an error when the package or the symbol does not exist."
  (let ((package (find-package* package-designator error)))
    (if (null package)
        (values nil nil)
        (multiple-value-bind (symbol status) (find-symbol (string name) package)
          (when (and error (not status))
            (error "There is no symbol ~A in package ~A" (string name) (package-name package)))
          (values symbol status)))))

(defun symbol-call (package name &rest args)
  "Call the function named NAME in PACKAGE (both designators, looked up at call time)."
  (apply (find-symbol* name package) args))

(defun intern* (name package-designator &optional (error t))
  (intern (string name) (find-package* package-designator error)))

(defun export* (name package-designator)
  (let ((package (find-package* package-designator)))
    (export (intern* name package) package)))

(defun import* (symbol package-designator)
  (import (list symbol) (find-package* package-designator)))

(defun shadowing-import* (symbol package-designator)
  (let ((package (find-package* package-designator)))
    (if (fboundp 'shadowing-import)
        (funcall 'shadowing-import (list symbol) package)
        (let ((existing (find-symbol (symbol-name symbol) package)))
          (when (and existing (not (eq existing symbol))
                     (eq (symbol-package existing) package))
            (unintern existing package))
          (import (list symbol) package)))))

(defun unintern* (name package-designator &optional (error t))
  (let ((package (find-package* package-designator error)))
    (when package
      (multiple-value-bind (symbol status) (find-symbol (string name) package)
        (when status (unintern symbol package))))))

(defun make-symbol* (name)
  (etypecase name
    (string (make-symbol name))
    (symbol (copy-symbol name))))

(defun package-names (package)
  (cons (package-name package) (package-nicknames package)))

(defun standard-case-symbol-name (name-designator)
  (string-upcase (string name-designator)))

(defun find-standard-case-symbol (name-designator package-designator &optional (error t))
  (find-symbol* (standard-case-symbol-name name-designator) package-designator error))

(defun coerce-class (class &key (package :cl) (super t) (error 'error))
  (let ((class (cond ((or (null class) (typep class 'class)) class)
                     ((symbolp class) (find-class class nil))
                     ((stringp class) (let ((s (find-symbol* class package nil)))
                                        (and s (find-class s nil))))
                     (t nil))))
    (cond ((and class (or (eq super t) (subtypep class super))) class)
          (error (if (functionp error) (funcall error "Cannot coerce ~S to a class" class)
                     (error "Cannot coerce ~S to a class" class)))
          (t nil))))

(defun %package-external-symbols (package)
  (let ((symbols nil))
    (do-external-symbols (s package) (push s symbols))
    symbols))

(defun ensure-package (name &key nicknames documentation use shadow shadowing-import-from
                              import-from export intern recycle mix reexport unintern
                              local-nicknames)
  "Make the package NAME, or bring the existing one to this definition."
  (declare (ignore documentation recycle))
  (let* ((name (string name))
         (package (or (find-package name) (make-package name :use nil))))
    (dolist (nick nicknames)
      (let ((other (find-package (string nick))))
        (unless (eq other package)
          (when other (error "define-package ~A: the nickname ~A names the package ~A"
                             name (string nick) (package-name other)))
          (let ((all (cons (string nick) (package-nicknames package))))
            (if (fboundp 'rename-package)
                (funcall 'rename-package package name all)
                (not-implemented-error 'rename-package "define-package :nicknames on an existing package"))))))
    (dolist (n unintern) (unintern* n package nil))
    (when shadow (shadow (mapcar #'string shadow) package))
    (dolist (spec shadowing-import-from)
      (dolist (n (cdr spec))
        (shadowing-import* (find-symbol* n (car spec)) package)))
    (dolist (spec import-from)
      (dolist (n (cdr spec))
        (import (list (find-symbol* n (car spec))) package)))
    ;; :MIX: the external symbols of each package, conflicts going to the first.
    (let ((taken (make-hash-table :test 'equal)))
      (dolist (p mix)
        (dolist (s (%package-external-symbols (find-package* p)))
          (let ((n (symbol-name s)))
            (unless (gethash n taken)
              (setf (gethash n taken) t)
              (multiple-value-bind (here status) (find-symbol n package)
                (cond ((null status) (import (list s) package))
                      ((eq here s))
                      ((eq status :inherited) (shadowing-import* s package))))))))
      (dolist (p use)
        (let ((p (find-package* p)))
          (unless (member p (package-use-list package))
            (dolist (s (%package-external-symbols p))
              (let ((n (symbol-name s)))
                (multiple-value-bind (here status) (find-symbol n package)
                  (when (and status (not (eq here s)) (gethash n taken)
                             (not (member here (package-shadowing-symbols* package))))
                    (shadowing-import* here package)))))
            (use-package p package)))))
    (dolist (n intern) (intern (string n) package))
    (dolist (n export) (export (list (intern (string n) package)) package))
    (dolist (p reexport)
      (dolist (s (%package-external-symbols (find-package* p)))
        (export (list (find-symbol (symbol-name s) package)) package)))
    (when local-nicknames
      (if (fboundp 'add-package-local-nickname)
          (dolist (pair local-nicknames)
            (funcall 'add-package-local-nickname (string (first pair)) (find-package* (second pair)) package))
          (not-implemented-error :local-nicknames "package-local nicknames are not supported here")))
    package))

(defun package-shadowing-symbols* (package)
  (if (fboundp 'package-shadowing-symbols) (funcall 'package-shadowing-symbols package) nil))

(defmacro define-package (package &rest clauses)
  "DEFPACKAGE with UIOP's extra clauses :MIX, :REEXPORT, :USE-REEXPORT,
:MIX-REEXPORT, :UNINTERN and :RECYCLE; without :USE, :MIX or their
-REEXPORT forms the package uses COMMON-LISP."
  (let ((nicknames nil) (documentation nil) (use nil) (use-p nil) (shadow nil)
        (shadowing-import-from nil) (import-from nil) (export nil) (intern nil) (recycle nil)
        (mix nil) (reexport nil) (unintern nil) (local-nicknames nil))
    (dolist (clause clauses)
      (let ((kw (car clause)) (args (cdr clause)))
        (case kw
          (:nicknames (setq nicknames (append nicknames args)))
          (:documentation (setq documentation (car args)))
          (:use (setq use (append use args) use-p t))
          (:shadow (setq shadow (append shadow args)))
          (:shadowing-import-from (setq shadowing-import-from (append shadowing-import-from (list args))))
          (:import-from (setq import-from (append import-from (list args))))
          (:export (setq export (append export args)))
          (:intern (setq intern (append intern args)))
          (:recycle (setq recycle (append recycle args)))
          (:mix (setq mix (append mix args) use-p t))
          (:reexport (setq reexport (append reexport args)))
          (:use-reexport (setq use (append use args) reexport (append reexport args) use-p t))
          (:mix-reexport (setq mix (append mix args) reexport (append reexport args) use-p t))
          (:unintern (setq unintern (append unintern args)))
          (:local-nicknames (setq local-nicknames (append local-nicknames args)))
          (t (error "define-package ~S: unrecognized clause ~S" package clause)))))
    `(eval-when (:compile-toplevel :load-toplevel :execute)
       (ensure-package ',package :nicknames ',nicknames :documentation ',documentation
                                 :use ',(if use-p use '(:common-lisp))
                                 :shadow ',shadow :shadowing-import-from ',shadowing-import-from
                                 :import-from ',import-from :export ',export :intern ',intern
                                 :recycle ',recycle :mix ',mix :reexport ',reexport
                                 :unintern ',unintern :local-nicknames ',local-nicknames))))

(defun package-definition-form (package-designator &key (nicknamesp t) (usep t) (shadowp t)
                                                     (shadowing-import-p t) (exportp t)
                                                     (importp t) internp (error t))
  (declare (ignore shadowing-import-p importp internp))
  (let ((package (find-package* package-designator error)))
    (when package
      `(defpackage ,(package-name package)
         ,@(when nicknamesp `((:nicknames ,@(package-nicknames package))))
         ,@(when usep `((:use ,@(mapcar #'package-name (package-use-list package)))))
         ,@(when shadowp `((:shadow ,@(mapcar #'symbol-name (package-shadowing-symbols* package)))))
         ,@(when exportp `((:export ,@(mapcar #'symbol-name (%package-external-symbols package)))))))))

;;; ---------------------------------------------------------------- utilities

(defmacro uiop-debug (&rest keys) (declare (ignore keys)) nil)

(defmacro if-let (bindings then-form &optional else-form)
  "Bind as LET; THEN-FORM when every value is true, else ELSE-FORM."
  (let ((bindings (if (and (consp bindings) (symbolp (car bindings))) (list bindings) bindings)))
    `(let ,bindings
       (if (and ,@(mapcar #'car bindings)) ,then-form ,else-form))))

(defmacro while-collecting ((&rest collectors) &body body)
  "Run BODY with each of COLLECTORS a local function adding its argument to a
list; return the lists as values."
  (let ((vars (mapcar (lambda (c) (gensym (symbol-name c))) collectors))
        (x (gensym "X")))
    `(let ,(mapcar (lambda (v) `(,v nil)) vars)
       (flet ,(mapcar (lambda (c v) `(,c (,x) (push ,x ,v) ,x)) collectors vars)
         ,@body)
       (values ,@(mapcar (lambda (v) `(reverse ,v)) vars)))))

(defmacro appendf (place &rest args)
  `(setf ,place (append ,place ,@args)))

(defmacro nest (&rest things)
  (reduce (lambda (outer inner) `(,@outer ,inner)) things :from-end t))

(defun ensure-list (x) (if (listp x) x (list x)))

(defun remove-plist-key (key plist)
  (loop for (k v) on plist by #'cddr unless (eq k key) append (list k v)))

(defun remove-plist-keys (keys plist)
  (loop for (k v) on plist by #'cddr unless (member k keys) append (list k v)))

(defun ensure-gethash (key table default)
  (multiple-value-bind (value found) (gethash key table)
    (if found
        (values value t)
        (values (setf (gethash key table) (if (functionp default) (funcall default) default)) nil))))

(defun list-to-hash-set (list &aux (h (make-hash-table :test 'equal)))
  (dolist (x list h) (setf (gethash x h) t)))

(defun length=n-p (x n)
  (loop for l on x for i downfrom n do (when (zerop i) (return nil)) finally (return (zerop i))))

(defun emptyp (x)
  "Whether X is an empty sequence (or NIL)."
  (or (null x) (and (typep x 'sequence) (zerop (length x)))))

(defun base-string-p (string) (stringp string))
(defun strings-common-element-type (strings) (declare (ignore strings)) 'character)

(defun reduce/strcat (strings &key key start end)
  (let ((strings (subseq strings (or start 0) end)))
    (apply #'concatenate 'string (mapcar (lambda (s) (string (if key (funcall key s) s))) strings))))

(defun strcat (&rest strings)
  "The concatenation of the string designators STRINGS."
  (reduce/strcat strings))

(defun first-char (s) (and (stringp s) (plusp (length s)) (char s 0)))
(defun last-char (s) (and (stringp s) (plusp (length s)) (char s (1- (length s)))))

(defun split-string (string &key max (separator '(#\Space #\Tab)))
  "The substrings of STRING between SEPARATOR characters (a character, a
string of them or a list); with MAX, at most MAX pieces, split from the end."
  (let* ((seps (cond ((characterp separator) (list separator))
                     ((stringp separator) (coerce separator 'list))
                     (t separator)))
         (parts nil)
         (end (length string))
         (count 1))
    (loop for i from (1- (length string)) downto 0
          do (when (and (member (char string i) seps)
                        (or (null max) (< count (max 1 max))))
               (push (subseq string (1+ i) end) parts)
               (setq end i)
               (incf count)))
    (cons (subseq string 0 end) parts)))

(defun string-prefix-p (prefix string)
  (let ((prefix (string prefix)) (string (string string)))
    (and (<= (length prefix) (length string)) (string= prefix string :end2 (length prefix)))))

(defun string-suffix-p (string suffix)
  (let ((string (string string)) (suffix (string suffix)))
    (and (<= (length suffix) (length string))
         (string= suffix string :start2 (- (length string) (length suffix))))))

(defun string-enclosed-p (prefix string suffix)
  (and (string-prefix-p prefix string) (string-suffix-p string suffix)
       (>= (length string) (+ (length (string prefix)) (length (string suffix))))))

(defun stripln (x)
  "X without its final newline (LF, CR or CRLF); the newline as the second value."
  (let ((n (length x)))
    (cond ((and (>= n 2) (char= (char x (- n 2)) #\Return) (char= (char x (1- n)) #\Newline))
           (values (subseq x 0 (- n 2)) (subseq x (- n 2))))
          ((and (>= n 1) (member (char x (1- n)) '(#\Newline #\Return)))
           (values (subseq x 0 (1- n)) (subseq x (1- n))))
          (t (values x nil)))))

(defun frob-substrings (string substrings &optional frob)
  "STRING with each occurrence of one of SUBSTRINGS replaced by FROB's
output (a string: that string; NIL: removed)."
  (with-output-to-string (out)
    (let ((i 0) (n (length string)))
      (loop while (< i n)
            do (let ((found (find-if (lambda (sub) (and (plusp (length sub))
                                                        (<= (+ i (length sub)) n)
                                                        (string= sub string :start2 i :end2 (+ i (length sub)))))
                                     substrings)))
                 (if found
                     (progn (cond ((stringp frob) (write-string frob out))
                                  ((functionp frob) (funcall frob found (lambda (s) (write-string s out)))))
                            (incf i (length found)))
                     (progn (write-char (char string i) out) (incf i))))))))

(defun ensure-function (fun &key (package :cl))
  (cond ((functionp fun) fun)
        ((and (consp fun) (eq (car fun) 'lambda)) (coerce fun 'function))
        ((symbolp fun) (fdefinition fun))
        ((stringp fun) (fdefinition (let ((*package* (find-package* package))) (read-from-string fun))))
        (t (error "Cannot make a function of ~S" fun))))

(defun call-function (function-spec &rest arguments)
  (apply (ensure-function function-spec) arguments))

(defun call-functions (function-specs)
  (map () #'call-function function-specs))

(defun register-hook-function (variable hook &optional call-now-p)
  (pushnew hook (symbol-value variable) :test 'equal)
  (when call-now-p (call-function hook)))

(defun match-condition-p (x condition)
  (etypecase x
    (symbol (typep condition x))
    (function (funcall x condition))
    (string (and (typep condition 'simple-condition)
                 (equal (simple-condition-format-control condition) x)))))

(defun match-any-condition-p (condition conditions)
  (some (lambda (x) (match-condition-p x condition)) conditions))

(defun call-with-muffled-conditions (thunk conditions)
  (handler-bind ((t (lambda (c) (when (match-any-condition-p c conditions)
                                  (let ((r (find-restart 'muffle-warning c)))
                                    (when r (invoke-restart r)))))))
    (funcall thunk)))

(defmacro with-muffled-conditions ((conditions) &body body)
  `(call-with-muffled-conditions (lambda () ,@body) ,conditions))

(defun access-at (object at)
  (if (listp at)
      (if at (access-at (access-at object (car at)) (cdr at)) object)
      (etypecase at
        (integer (if (listp object) (nth at object) (elt object at)))
        (null object))))

(defun access-at-count (at)
  (if (listp at) (length at) 1))

(defun boolean-to-feature-expression (value) (if value '(:and) '(:or)))

(defun symbol-test-to-feature-expression (name package)
  (boolean-to-feature-expression (find-symbol* name package nil)))

;;; timestamps: NIL is infinitely early, T infinitely late.
(defun stamp< (x y)
  (cond ((null x) (not (null y))) ((null y) nil) ((eq x t) nil) ((eq y t) t) (t (< x y))))
(defun stamp<= (x y) (not (stamp< y x)))
(defun earliest-stamp (&rest stamps) (reduce (lambda (x y) (if (stamp< y x) y x)) stamps :initial-value t))
(defun latest-stamp (&rest stamps) (reduce (lambda (x y) (if (stamp< x y) y x)) stamps :initial-value nil))
(defun timestamp< (x y) (stamp< x y))
(defun timestamp<= (x y) (stamp<= x y))
(defun earlier-timestamp (x y) (if (stamp< x y) x y))
(defun latest-timestamp (&rest stamps) (apply #'latest-stamp stamps))

(defun lexicographic< (element< x y)
  (cond ((null y) nil) ((null x) t)
        ((funcall element< (car x) (car y)) t)
        ((funcall element< (car y) (car x)) nil)
        (t (lexicographic< element< (cdr x) (cdr y)))))

(defun lexicographic<= (element< x y) (not (lexicographic< element< y x)))

;;; ---------------------------------------------------------------- versions

(defun parse-version (version-string &optional on-error)
  "The list of integers of a dotted version string (\"3.1.2\" -> (3 1 2)),
or NIL when it is not one (ON-ERROR, a function or condition type, is
called or signalled then)."
  (block nil
    (unless (stringp version-string)
      (when on-error (call-function on-error "Invalid version ~S" version-string))
      (return nil))
    (let ((parts (split-string version-string :separator ".")))
      (unless (and parts (every (lambda (p) (and (plusp (length p)) (every #'digit-char-p p))) parts))
        (when (and on-error (not (member on-error '(nil))))
          (if (functionp on-error)
              (funcall on-error "Invalid version ~S" version-string)
              (warn "Invalid version ~S" version-string)))
        (return nil))
      (mapcar #'parse-integer parts))))

(defun unparse-version (version-list)
  (format nil "~{~D~^.~}" version-list))

(defun version< (version1 version2)
  (let ((v1 (parse-version version1 nil)) (v2 (parse-version version2 nil)))
    (and v1 v2 (lexicographic< '< v1 v2))))

(defun version<= (version1 version2)
  "Whether the version string VERSION1 is at most VERSION2 (\"3.1\" <= \"3.3.6\")."
  (let ((v1 (parse-version version1 nil)) (v2 (parse-version version2 nil)))
    (and v1 v2 (lexicographic<= '< v1 v2))))

(defun version-compatible-p (provided-version required-version)
  (version<= required-version provided-version))

;;; ---------------------------------------------------------------- the OS

(defun featurep (x &optional (*features* *features*))
  "Whether the feature expression X holds (keywords, :AND, :OR, :NOT)."
  (cond ((atom x) (and (member x *features*) t))
        ((eq :not (car x)) (assert (null (cddr x))) (not (featurep (cadr x))))
        ((eq :or (car x)) (some #'featurep (cdr x)))
        ((eq :and (car x)) (every #'featurep (cdr x)))
        (t (parameter-error "~S: malformed feature specification ~S" 'featurep x))))

(defun os-unix-p () (featurep :unix))
(defun os-windows-p () (featurep '(:or :windows :win32 :mswindows)))
(defun os-macosx-p () (featurep '(:or :darwin :macosx)))
(defun os-genera-p () nil)
(defun os-oldmac-p () nil)
(defun os-haiku-p () (featurep :haiku))
(defun os-mezzano-p () nil)

(defun detect-os ()
  (cond ((os-macosx-p) :os-macosx) ((os-unix-p) :os-unix) ((os-windows-p) :os-windows) (t :os-unknown)))

(defvar *implementation-type* :mprof-lisp)
(defun implementation-type () *implementation-type*)

(defun operating-system ()
  (cond ((featurep :linux) :linux) ((os-macosx-p) :macosx) ((featurep :freebsd) :freebsd)
        ((os-unix-p) :unix) (t :unknown)))

(defun architecture ()
  (cond ((featurep :x86-64) :x64) ((featurep :arm64) :arm64) (t (intern (machine-type) :keyword))))

(defun lisp-version-string () (lisp-implementation-version))

(defun implementation-identifier ()
  (format nil "~(mprof-lisp-~A-~A-~A~)" (lisp-version-string) (operating-system) (architecture)))

(defun hostname () (machine-instance))

(defun getenv (x)
  "The value of the environment variable X, or NIL."
  (mprof-ext:getenv (string x)))

(defun getenvp (x)
  (let ((v (getenv x))) (and v (plusp (length v)) t)))

(defun getcwd () (pathname (sys::%cwd)))

(defun chdir (x)
  (declare (ignore x))
  (not-implemented-error 'chdir "the process's directory cannot be changed"))

(defmacro with-current-directory ((&optional dir) &body body)
  `(let ((*default-pathname-defaults* (if ,dir (ensure-directory-pathname ,dir) *default-pathname-defaults*)))
     ,@body))

(defvar *stdin* *standard-input*)
(defvar *stdout* *standard-output*)
(defvar *stderr* *error-output*)

(defvar *image-dumped-p* nil)
(defvar *image-restore-hook* nil)
(defvar *image-dump-hook* nil)
(defvar *command-line-arguments* (cdr mprof-ext:*posix-argv*))

(defun raw-command-line-arguments () mprof-ext:*posix-argv*)
(defun command-line-arguments (&optional (arguments (raw-command-line-arguments))) (cdr arguments))
(defun argv0 () (car (raw-command-line-arguments)))

(defun register-image-restore-hook (hook &optional (call-now-p t))
  (register-hook-function '*image-restore-hook* hook call-now-p))

(defun register-image-dump-hook (hook &optional call-now-p)
  (register-hook-function '*image-dump-hook* hook call-now-p))

(defun dump-image (&rest args) (declare (ignore args)) (not-implemented-error 'dump-image))
(defun create-image (&rest args) (declare (ignore args)) (not-implemented-error 'create-image))
(defun restore-image (&rest args) (declare (ignore args)) (not-implemented-error 'restore-image))

(defun finish-outputs (&rest streams)
  (dolist (s (or streams (list *stdout* *stderr* *standard-output* *error-output* *trace-output*)))
    (ignore-errors (finish-output s))))

(defun quit (&optional (code 0) (finish-output t))
  "End the program with the exit code CODE."
  (when finish-output (finish-outputs))
  (mprof-ext:exit :code code))

(defun die (code format &rest arguments)
  (format *stderr* "~&~?~&" format arguments)
  (quit code))

(defun shell-boolean-exit (x) (quit (if x 0 1)))

(defun print-backtrace (&key (stream *debug-io*) count condition)
  (declare (ignore count condition))
  (format stream "~&(no backtrace: mprof-lisp prints one with an unhandled error)~%"))

(defun print-condition-backtrace (condition &key (stream *stderr*) count)
  (declare (ignore count))
  (format stream "~&~A~%" condition))

(define-condition fatal-condition (condition) ())

(defun handle-fatal-condition (condition)
  (format *stderr* "~&Fatal condition:~%~A~%" condition)
  (quit 99))

(defun call-with-fatal-condition-handler (thunk)
  (handler-bind ((error #'handle-fatal-condition)) (funcall thunk)))

(defmacro with-fatal-condition-handler ((&optional) &body body)
  `(call-with-fatal-condition-handler (lambda () ,@body)))

