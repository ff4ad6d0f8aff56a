;;;; UIOP for mprof-lisp, part 2 of 2 (after uiop.lisp, which says what UIOP
;;;; is here and what it is not): pathnames, the file system, streams and
;;;; files, running programs, building and configuration files.
;;;;
;;;; Invariant: every function taking a file takes a pathname designator
;;;; and translates logical pathnames before it touches the file system.

(in-package :uiop)

;;; ---------------------------------------------------------------- pathnames

(defparameter *unspecific-pathname-type* :unspecific)
(defparameter *nil-pathname* (make-pathname :directory nil :name nil :type nil :version nil
                                            :defaults (make-pathname)))
(defun nil-pathname (&optional (defaults *default-pathname-defaults*))
  (make-pathname :directory nil :name nil :type nil :version nil :device nil
                 :host (pathname-host (pathname defaults))))
(defparameter *wild* "*")
(defparameter *wild-file* (make-pathname :directory nil :name :wild :type :wild :version :wild))
(defparameter *wild-file-for-directory* (make-pathname :directory nil :name :wild :type :wild))
(defparameter *wild-directory* (make-pathname :directory '(:relative :wild) :name nil :type nil))
(defparameter *wild-inferiors* (make-pathname :directory '(:relative :wild-inferiors) :name nil :type nil))
(defparameter *wild-path* (merge-pathnames *wild-file* *wild-inferiors*))

(defun wilden (path) (merge-pathnames* *wild-path* path))

(defun normalize-pathname-directory-component (directory)
  (cond ((stringp directory) (list :absolute directory))
        ((eq directory :wild) '(:absolute :wild-inferiors))
        ((eq directory :unspecific) nil)
        (t directory)))

(defun merge-pathname-directory-components (specified defaults)
  (let ((directory (normalize-pathname-directory-component specified)))
    (cond ((null directory) defaults)
          ((eq (car directory) :absolute) directory)
          ((null defaults) directory)
          (t (append defaults (cdr directory))))))

(defun merge-pathnames* (specified &optional (defaults *default-pathname-defaults*))
  "MERGE-PATHNAMES that keeps SPECIFIED's absolute directory with its own
host, takes the host from DEFAULTS otherwise, and returns the other
argument when one is NIL."
  (cond ((null specified) defaults)
        ((null defaults) specified)
        (t (let* ((s (pathname specified)) (d (pathname defaults))
                  (absolute (eq (car (normalize-pathname-directory-component (pathname-directory s))) :absolute)))
             (make-pathname :host (pathname-host (if absolute s d))
                            :device (pathname-device (if absolute s d))
                            :directory (merge-pathname-directory-components (pathname-directory s)
                                                                            (pathname-directory d))
                            :name (or (pathname-name s) (pathname-name d))
                            :type (or (pathname-type s) (pathname-type d))
                            :version (or (pathname-version s) (pathname-version d)))))))

(defun pathname-equal (p1 p2)
  (when (stringp p1) (setf p1 (pathname p1)))
  (when (stringp p2) (setf p2 (pathname p2)))
  (or (and (null p1) (null p2))
      (and (pathnamep p1) (pathnamep p2)
           (equal (namestring p1) (namestring p2)))))

(defun absolute-pathname-p (pathspec)
  "PATHSPEC's pathname when its directory is absolute, else NIL."
  (and (typep pathspec '(or pathname string))
       (let ((p (pathname pathspec)))
         (and (eq :absolute (car (pathname-directory p))) p))))

(defun relative-pathname-p (pathspec)
  "PATHSPEC's pathname when its directory is relative (or missing), else NIL."
  (and (typep pathspec '(or pathname string))
       (let ((p (pathname pathspec)))
         (and (not (eq :absolute (car (pathname-directory p)))) p))))

(defun hidden-pathname-p (pathname)
  (let ((name (pathname-name pathname)))
    (and (stringp name) (plusp (length name)) (char= (char name 0) #\.))))

(defun file-pathname-p (pathname)
  (when pathname
    (let ((p (pathname pathname)))
      (unless (and (member (pathname-name p) '(nil :unspecific "") :test 'equal)
                   (member (pathname-type p) '(nil :unspecific "") :test 'equal))
        p))))

(defun directory-pathname-p (pathname)
  "Whether PATHNAME names a directory: it has no name and no type."
  (let ((p (and pathname (pathname pathname))))
    (and p
         (member (pathname-name p) '(nil :unspecific "") :test 'equal)
         (member (pathname-type p) '(nil :unspecific "") :test 'equal)
         t)))

(defun logical-pathname-p (x) (typep x 'logical-pathname))
(defun physical-pathname-p (x) (and (pathnamep x) (not (logical-pathname-p x))))

(defun physicalize-pathname (x)
  (let ((p (when x (pathname x))))
    (if (logical-pathname-p p) (translate-logical-pathname p) p)))

(defun pathname-directory-pathname (pathname)
  "PATHNAME without its name, type and version: its directory."
  (when pathname
    (make-pathname :name nil :type nil :version nil :defaults (pathname pathname))))

(defun pathname-parent-directory-pathname (pathname)
  (when pathname
    (let* ((p (pathname pathname)) (dir (pathname-directory p)))
      (make-pathname :name nil :type nil :version nil
                     :directory (cond ((and (consp dir) (cdr dir)
                                            (stringp (car (last dir))))
                                       (butlast dir))
                                      ((consp dir) (append dir (list :back)))
                                      (t '(:relative :back)))
                     :defaults p))))

(defun ensure-directory-pathname (pathspec &optional on-error)
  "PATHSPEC as a directory pathname: its name and type become its last
directory component."
  (cond ((null pathspec) nil)
        ((stringp pathspec) (ensure-directory-pathname (pathname pathspec) on-error))
        ((not (pathnamep pathspec))
         (if on-error (call-function on-error "Invalid pathname designator ~S" pathspec)
             (error "Invalid pathname designator ~S" pathspec)))
        ((wild-pathname-p pathspec)
         (error "Can't reliably convert wild pathname ~S" pathspec))
        ((directory-pathname-p pathspec) pathspec)
        (t (make-pathname :directory (append (or (normalize-pathname-directory-component
                                                  (pathname-directory pathspec))
                                                 (list :relative))
                                             (list (file-namestring pathspec)))
                          :name nil :type nil :version nil :defaults pathspec))))

(defun split-unix-namestring-directory-components (unix-namestring &key ensure-directory dot-dot)
  "(values :absolute|:relative directory-parts last-component file-only-p) of a Unix namestring."
  (let* ((components (split-string unix-namestring :separator "/"))
         (absolute (and (plusp (length unix-namestring)) (char= (char unix-namestring 0) #\/)))
         (last (car (last components)))
         (file-only (and (null (cdr components)) (not ensure-directory)))
         (dirs (if ensure-directory components (butlast components)))
         (filename (if ensure-directory nil (if (equal last "") nil last))))
    (values (if absolute :absolute :relative)
            (loop for c in dirs
                  unless (member c '("" ".") :test 'equal)
                    collect (if (equal c "..") (or dot-dot :back) c))
            filename
            file-only)))

(defun split-name-type (filename)
  "NAME and TYPE of FILENAME: split at the last dot, except a dot in first
position; a missing type is :UNSPECIFIC."
  (let ((dot (position #\. filename :from-end t)))
    (if (and dot (plusp dot))
        (values (subseq filename 0 dot) (subseq filename (1+ dot)))
        (values filename *unspecific-pathname-type*))))

(defun parse-unix-namestring (name &rest keys &key type defaults dot-dot ensure-directory
                              &allow-other-keys)
  "NAME (a Unix namestring; a symbol's name downcased) as a pathname: the
last component is a directory when TYPE is :DIRECTORY or ENSURE-DIRECTORY,
a name of type TYPE when TYPE is a string, else a name.type split."
  (declare (ignore keys))
  (when ensure-directory (setf type :directory))
  (etypecase name
    ((or null pathname) (return-from parse-unix-namestring name))
    (symbol (setf name (string-downcase name)))
    (string))
  (multiple-value-bind (relative path filename file-only)
      (split-unix-namestring-directory-components name :dot-dot dot-dot
                                                       :ensure-directory (eq type :directory))
    (multiple-value-bind (n ty)
        (cond ((or (eq type :directory) (null filename)) (values nil nil))
              (type (values filename type))
              (t (split-name-type filename)))
      (make-pathname :directory (unless file-only (cons relative path))
                     :name n :type ty
                     :defaults (or defaults *nil-pathname*)))))

(defun unix-namestring (pathname)
  (when pathname (sys::%native-namestring pathname)))

(defun native-namestring (x)
  (when x (sys::%native-namestring x)))

(defun parse-native-namestring (string &rest constraints &key ensure-directory &allow-other-keys)
  (declare (ignore constraints))
  (when string
    (let ((p (pathname string)))
      (if ensure-directory (ensure-directory-pathname p) p))))

(defun subpathname (pathname subpath &key type)
  "SUBPATH (a Unix namestring of type TYPE, or a pathname) under the
directory of PATHNAME."
  (or (and (pathnamep subpath) (absolute-pathname-p subpath) subpath)
      (merge-pathnames* (parse-unix-namestring subpath :type type :want-relative t)
                        (pathname-directory-pathname pathname))))

(defun subpathname* (pathname subpath &key type)
  (and pathname (subpathname (ensure-directory-pathname pathname) subpath :type type)))

(defun subpathp (maybe-subpath base-pathname)
  "MAYBE-SUBPATH relative to BASE-PATHNAME (both absolute pathnames, the
base a directory) when it is under it, else NIL."
  (let ((sub maybe-subpath) (base base-pathname))
    (and (pathnamep sub) (pathnamep base) (absolute-pathname-p sub) (absolute-pathname-p base) (directory-pathname-p base)
         (let ((sd (pathname-directory sub)) (bd (pathname-directory base)))
           (and (>= (length sd) (length bd)) (equal (subseq sd 0 (length bd)) bd)
                (make-pathname :directory (cons :relative (nthcdr (length bd) sd)) :defaults sub))))))

(defun enough-pathname (maybe-subpath base-pathname)
  "MAYBE-SUBPATH relative to BASE-PATHNAME when it is under it, else itself."
  (let ((sub (and maybe-subpath (pathname maybe-subpath)))
        (base (and base-pathname (pathname base-pathname))))
    (or (and sub base (subpathp sub base)) sub)))

(defun call-with-enough-pathname (maybe-subpath defaults-pathname thunk)
  (let ((enough (enough-pathname maybe-subpath defaults-pathname))
        (*default-pathname-defaults* (or defaults-pathname *default-pathname-defaults*)))
    (funcall thunk enough)))

(defmacro with-enough-pathname ((pathname-var &key (pathname pathname-var) (defaults *default-pathname-defaults*))
                                &body body)
  `(call-with-enough-pathname ,pathname ,defaults (lambda (,pathname-var) ,@body)))

(defun pathname-root (pathname)
  (make-pathname :directory '(:absolute) :name nil :type nil :version nil :defaults pathname))

(defun pathname-host-pathname (pathname)
  (make-pathname :directory nil :name nil :type nil :version nil :device nil :defaults pathname))

(defun make-pathname* (&rest keys &key directory host device name type version defaults &allow-other-keys)
  (declare (ignore directory host device name type version defaults))
  (apply #'make-pathname (remove-plist-keys '(:allow-other-keys) keys)))

(defun make-pathname-component-logical (x)
  (typecase x ((eql :unspecific) nil) (string (string-upcase x)) (t x)))

(defun make-pathname-logical (pathname host)
  (make-pathname :host host :directory (mapcar #'make-pathname-component-logical (pathname-directory pathname))
                 :name (make-pathname-component-logical (pathname-name pathname))
                 :type (make-pathname-component-logical (pathname-type pathname))))

(defun component-name-to-pathname-components (s &key force-directory force-relative)
  (multiple-value-bind (relabs path filename file-only)
      (split-unix-namestring-directory-components s :ensure-directory force-directory)
    (declare (ignore file-only))
    (when (and force-relative (eq relabs :absolute))
      (error "Absolute pathname designator not allowed: ~S" s))
    (values relabs path filename)))

(defun directory-separator-for-host (&optional host) (declare (ignore host)) #\/)
(defun directorize-pathname-host-device (pathname) pathname)
(defun translate-pathname* (path absolute-source destination &optional root source)
  (declare (ignore root source))
  (translate-pathname path absolute-source destination))
(defvar *output-translation-function* 'identity)
(defun relativize-directory-component (directory-component)
  (let ((d (normalize-pathname-directory-component directory-component)))
    (if (eq (car d) :absolute) (cons :relative (cdr d)) d)))
(defun relativize-pathname-directory (pathspec)
  (let ((p (pathname pathspec)))
    (make-pathname :directory (relativize-directory-component (pathname-directory p)) :defaults p)))

(defun ensure-absolute-pathname (path &optional defaults (on-error 'error))
  (cond ((absolute-pathname-p path) (pathname path))
        ((and (functionp defaults)) (ensure-absolute-pathname path (funcall defaults) on-error))
        ((and defaults (absolute-pathname-p defaults)) (merge-pathnames* path defaults))
        (t (call-function on-error "Not an absolute pathname: ~S" path))))

(defun ensure-pathname (pathname &key on-error defaults type dot-dot namestring
                                   want-pathname want-logical want-physical ensure-physical
                                   want-relative want-absolute ensure-absolute ensure-subpath
                                   want-non-wild want-wild wilden want-file want-directory
                                   ensure-directory want-existing ensure-directories-exist
                                   truename resolve-symlinks truenamize &allow-other-keys)
  "PATHNAME coerced (a namestring parsed per NAMESTRING: :unix by default, or
:native/:lisp) and checked or changed as the keywords say (the commonly used
ones: ENSURE-DIRECTORY, ENSURE-ABSOLUTE with DEFAULTS, WANT-EXISTING,
ENSURE-DIRECTORIES-EXIST, TRUENAME)."
  (declare (ignore want-pathname want-logical want-physical want-non-wild want-wild
                   want-file want-directory ensure-subpath))
  (flet ((lose (control &rest args)
           (if on-error (apply #'call-function on-error control args)
               (error "~?" control args))))
    (let ((p (cond ((null pathname) (return-from ensure-pathname nil))
                   ((pathnamep pathname) pathname)
                   ((stringp pathname)
                    (case namestring
                      ((:native :lisp) (pathname pathname))
                      (t (parse-unix-namestring pathname :type type :dot-dot dot-dot))))
                   (t (lose "Invalid pathname designator ~S" pathname)))))
      (when ensure-physical (setf p (physicalize-pathname p)))
      (when ensure-directory (setf p (ensure-directory-pathname p)))
      (when (and want-relative (absolute-pathname-p p)) (lose "Expected a relative pathname: ~S" p))
      (when (or ensure-absolute want-absolute)
        (unless (absolute-pathname-p p)
          (if (and ensure-absolute defaults)
              (setf p (merge-pathnames* p (if (functionp defaults) (funcall defaults) defaults)))
              (when want-absolute (lose "Expected an absolute pathname: ~S" p)))))
      (when wilden (setf p (wilden p)))
      (when (and want-existing (not (probe-file* p))) (lose "File ~S does not exist" p))
      (when ensure-directories-exist (ensure-directories-exist p))
      (when (or truename truenamize resolve-symlinks)
        (setf p (or (probe-file* p :truename t) p)))
      p)))

;;; ---------------------------------------------------------------- the file system

(defvar *resolve-symlinks* t)

(defun probe-file* (p &key truename)
  "P (its truename with TRUENAME) when the file or directory exists, else NIL
(never an error)."
  (when p
    (ignore-errors
     (let ((p (physicalize-pathname p)))
       (unless (wild-pathname-p p)
         (let ((found (probe-file p)))
           (and found (if truename found p))))))))

(defun truename* (p)
  (and p (ignore-errors (truename p))))

(defun truenamize (pathname)
  (or (probe-file* pathname :truename t) (and pathname (pathname pathname))))

(defun resolve-symlinks (path) (truenamize path))
(defun resolve-symlinks* (path) (if *resolve-symlinks* (truenamize path) path))

(defun file-exists-p (pathname)
  "The truename of PATHNAME when something exists there, else NIL."
  (probe-file* pathname))

(defun directory-exists-p (pathname)
  "The truename of PATHNAME when it names an existing directory, else NIL."
  (when pathname
    (let ((p (physicalize-pathname pathname)))
      (when (and (not (wild-pathname-p p))
                 (eq (sys::%file-kind (sys::%native-namestring (ensure-directory-pathname p))) :directory))
        (probe-file* (ensure-directory-pathname p))))))

(defun directory* (pathname-spec &rest keys &key &allow-other-keys)
  (declare (ignore keys))
  (directory pathname-spec))

(defun filter-logical-directory-results (directory entries merger)
  (declare (ignore directory merger))
  entries)

(defun directory-files (directory &optional (pattern *wild-file-for-directory*))
  "The files (not subdirectories) in DIRECTORY matching PATTERN."
  (let ((dir (ensure-directory-pathname directory)))
    (when (and dir (not (wild-pathname-p dir)))
      (remove-if #'directory-pathname-p (directory (merge-pathnames* pattern (physicalize-pathname dir)))))))

(defun subdirectories (directory)
  "The directories directly in DIRECTORY."
  (let ((dir (ensure-directory-pathname directory)))
    (when dir
      (directory (merge-pathnames* *wild-directory* (physicalize-pathname dir))))))

(defun collect-sub*directories (directory collectp recursep collector)
  "Call COLLECTOR on DIRECTORY when COLLECTP says so, then on its
subdirectories (recursively, where RECURSEP says so)."
  (let ((stack (list (ensure-directory-pathname directory))))
    (loop while stack
          do (let ((dir (pop stack)))
               (when (call-function collectp dir)
                 (call-function collector dir))
               (when (call-function recursep dir)
                 (setf stack (append (subdirectories dir) stack)))))))

(defun ensure-all-directories-exist (pathnames)
  (dolist (p pathnames)
    (when p (ensure-directories-exist (physicalize-pathname p)))))

(defun delete-file-if-exists (x)
  (when (and x (probe-file* x)) (delete-file x)))

(defun delete-empty-directory (directory-pathname)
  (run-program (list "rmdir" (native-namestring (ensure-directory-pathname directory-pathname)))))

(defun delete-directory-tree (directory-pathname &key (validate nil) (if-does-not-exist :error))
  "Delete the directory tree DIRECTORY-PATHNAME (an absolute directory
pathname); VALIDATE (T or a predicate) must approve it."
  (let ((dir (pathname directory-pathname)))
    (unless (and (directory-pathname-p dir) (absolute-pathname-p dir) (not (wild-pathname-p dir)))
      (error "~S was asked to delete ~S but it is not an absolute directory pathname"
             'delete-directory-tree directory-pathname))
    (unless (or (eq validate t) (and validate (call-function validate dir)))
      (error "~S was asked to delete ~S but was not provided a validation predicate"
             'delete-directory-tree directory-pathname))
    (if (directory-exists-p dir)
        (run-program (list "rm" "-rf" "--" (native-namestring dir)))
        (ecase if-does-not-exist
          (:error (error "~S was asked to delete ~S but the directory does not exist"
                         'delete-directory-tree directory-pathname))
          (:ignore nil)))))

(defun rename-file-overwriting-target (source target)
  (rename-file source target))

(defun safe-file-write-date (pathname)
  (or (and pathname (probe-file* pathname) (ignore-errors (file-write-date pathname))) 0))

(defun get-pathname-defaults (&optional (defaults *default-pathname-defaults*))
  (or (absolute-pathname-p defaults) (merge-pathnames* defaults (getcwd))))

(defun lisp-implementation-directory (&key truename) (declare (ignore truename)) nil)
(defun lisp-implementation-pathname-p (pathname) (declare (ignore pathname)) nil)

(defun %xdg (variable default-subdir)
  (let ((v (getenv variable)))
    (if (and v (plusp (length v)) (absolute-pathname-p v))
        (ensure-directory-pathname v)
        (merge-pathnames* default-subdir (user-homedir-pathname)))))

(defun xdg-config-home (&rest more) (resolve-location (cons (%xdg "XDG_CONFIG_HOME" ".config/") more)))
(defun xdg-data-home (&rest more) (resolve-location (cons (%xdg "XDG_DATA_HOME" ".local/share/") more)))
(defun xdg-cache-home (&rest more) (resolve-location (cons (%xdg "XDG_CACHE_HOME" ".cache/") more)))
(defun xdg-runtime-dir (&rest more)
  (let ((v (getenv "XDG_RUNTIME_DIR"))) (and v (resolve-location (cons (ensure-directory-pathname v) more)))))

(defun %xdg-dirs (variable defaults more)
  (let* ((v (getenv variable))
         (dirs (if (and v (plusp (length v))) (split-string v :separator ":") defaults)))
    (loop for d in dirs
          when (absolute-pathname-p d)
            collect (resolve-location (cons (ensure-directory-pathname d) more)))))

(defun xdg-config-dirs (&rest more) (%xdg-dirs "XDG_CONFIG_DIRS" '("/etc/xdg/") more))
(defun xdg-data-dirs (&rest more) (%xdg-dirs "XDG_DATA_DIRS" '("/usr/local/share/" "/usr/share/") more))
(defun xdg-config-pathname (&optional more direction) (declare (ignore direction)) (xdg-config-home more))
(defun xdg-config-pathnames (&rest more) (cons (apply #'xdg-config-home more) (apply #'xdg-config-dirs more)))
(defun xdg-data-pathname (&optional more direction) (declare (ignore direction)) (xdg-data-home more))
(defun xdg-data-pathnames (&rest more) (cons (apply #'xdg-data-home more) (apply #'xdg-data-dirs more)))
(defun xdg-cache-pathname (&optional more direction) (declare (ignore direction)) (xdg-cache-home more))
(defun uiop-directory () nil)

(defvar *user-cache* nil)
(defvar *temporary-directory* nil)

(defun temporary-directory ()
  (or *temporary-directory*
      (setf *temporary-directory*
            (let ((tmp (getenv "TMPDIR")))
              (ensure-directory-pathname (if (and tmp (plusp (length tmp))) tmp "/tmp/"))))))

(defun setup-temporary-directory () (setf *temporary-directory* nil) (temporary-directory))

(defvar *temporary-file-counter* 0)

(defun call-with-temporary-file (thunk &key (want-stream-p t) (want-pathname-p t) (direction :io)
                                         keep after directory (type "tmp") (prefix "tmp")
                                         (suffix nil) element-type external-format)
  "Call THUNK with a fresh file in DIRECTORY (the temporary directory) open
on a stream (and/or its pathname); delete it after unless KEEP."
  (declare (ignore element-type external-format))
  (let* ((dir (ensure-directory-pathname (or directory (temporary-directory))))
         (pathname (loop for n = (format nil "~A~D-~D~@[~A~]" prefix (get-universal-time)
                                         (incf *temporary-file-counter*) suffix)
                         for p = (make-pathname :name n :type type :defaults dir)
                         unless (probe-file p) return p))
         (results nil))
    (close (open pathname :direction :output :if-does-not-exist :create))
    (unwind-protect
         (setq results
               (multiple-value-list
                (if want-stream-p
                    (with-open-file (s pathname :direction (if (eq direction :io) :output direction)
                                                :if-exists :supersede)
                      (if want-pathname-p (funcall thunk s pathname) (funcall thunk s)))
                    (funcall thunk pathname))))
      (unless keep (delete-file-if-exists pathname)))
    (if after
        (funcall after pathname)
        (values-list results))))

(defmacro with-temporary-file ((&key (stream (gensym "STREAM") streamp)
                                     (pathname (gensym "PATHNAME") pathnamep)
                                     directory prefix suffix type keep direction
                                     element-type external-format)
                               &body body)
  "Run BODY with STREAM open on, and PATHNAME naming, a fresh temporary file,
deleted afterwards unless KEEP."
  `(call-with-temporary-file
    ,(if streamp
         `(lambda (,stream ,pathname) (declare (ignorable ,stream ,pathname)) ,@body)
         `(lambda (,pathname) (declare (ignorable ,pathname)) ,@body))
    :want-stream-p ,(and streamp t) :want-pathname-p t
    ,@(when directory `(:directory ,directory)) ,@(when prefix `(:prefix ,prefix))
    ,@(when suffix `(:suffix ,suffix)) ,@(when type `(:type ,type)) ,@(when keep `(:keep ,keep))
    ,@(when direction `(:direction ,direction)) ,@(when element-type `(:element-type ,element-type))
    ,@(when external-format `(:external-format ,external-format))))

(defun tmpize-pathname (x)
  (make-pathname :name (format nil "ASDF-TMP-~A" (pathname-name x)) :defaults x))

(defun add-pathname-suffix (pathname suffix &rest keys)
  (apply #'make-pathname :name (strcat (pathname-name pathname) suffix) :defaults pathname keys))

(defun call-with-staging-pathname (pathname fun)
  (let ((staging (tmpize-pathname pathname)))
    (prog1 (funcall fun staging) (rename-file staging pathname))))

(defmacro with-staging-pathname ((pathname-var &optional (pathname-value pathname-var)) &body body)
  `(call-with-staging-pathname ,pathname-value (lambda (,pathname-var) ,@body)))

;;; ---------------------------------------------------------------- streams and files

(defvar *default-stream-element-type* 'character)
(defvar *utf-8-external-format* :utf-8)
(defvar *default-encoding* :utf-8)
(defun encoding-external-format (encoding) encoding)

(defun call-with-safe-io-syntax (thunk &key (package :cl))
  (with-standard-io-syntax
    (let ((*package* (find-package* package))
          (*read-default-float-format* 'double-float)
          (*print-readably* nil)
          (*read-eval* nil))
      (funcall thunk))))

(defmacro with-safe-io-syntax ((&key (package :cl)) &body body)
  `(call-with-safe-io-syntax (lambda () ,@body) :package ,package))

(defun safe-read-from-string (string &key (package :cl) (eof-error-p t) eof-value (start 0) end preserve-whitespace)
  (declare (ignore preserve-whitespace))
  (with-safe-io-syntax (:package package)
    (read-from-string string eof-error-p eof-value :start start :end end)))

(defun call-with-output (output function &key (element-type 'character))
  (declare (ignore element-type))
  (etypecase output
    (null (with-output-to-string (s) (funcall function s)))
    ((eql t) (funcall function *standard-output*))
    (stream (funcall function output))
    (string (with-output-to-string (s output) (funcall function s)))))

(defmacro with-output ((output-var &optional (value output-var)) &body body)
  `(call-with-output ,value (lambda (,output-var) ,@body)))

(defun output-string (string &optional output)
  (if output (with-output (output) (write-string string output)) string))

(defun call-with-input (input function)
  (etypecase input
    (null (funcall function *standard-input*))
    ((eql t) (funcall function *terminal-io*))
    (stream (funcall function input))
    (string (with-input-from-string (s input) (funcall function s)))))

(defmacro with-input ((input-var &optional (value input-var)) &body body)
  `(call-with-input ,value (lambda (,input-var) ,@body)))

(defun input-string (&optional input)
  (with-input (input) (slurp-stream-string input)))

(defun call-with-input-file (pathname thunk &rest keys &key element-type external-format (if-does-not-exist :error))
  (declare (ignore element-type external-format keys))
  (with-open-file (s pathname :direction :input :if-does-not-exist if-does-not-exist)
    (funcall thunk s)))

(defmacro with-input-file ((var pathname &rest keys) &body body)
  `(call-with-input-file ,pathname (lambda (,var) ,@body) ,@keys))

(defun call-with-output-file (pathname thunk &key element-type external-format
                                                (if-exists :error) (if-does-not-exist :create))
  (declare (ignore element-type external-format))
  (with-open-file (s pathname :direction :output :if-exists if-exists :if-does-not-exist if-does-not-exist)
    (funcall thunk s)))

(defmacro with-output-file ((var pathname &rest keys) &body body)
  `(call-with-output-file ,pathname (lambda (,var) ,@body) ,@keys))

(defun null-device-pathname () #p"/dev/null")

(defmacro with-null-input ((var &rest keys) &body body)
  (declare (ignore keys))
  `(with-input-from-string (,var "") ,@body))

(defmacro with-null-output ((var &rest keys) &body body)
  (declare (ignore keys))
  `(let ((,var (make-string-output-stream))) ,@body))

(defun slurp-stream-string (input &key (element-type 'character) stripped)
  "The rest of the stream INPUT as a string."
  (declare (ignore element-type))
  (let ((text (with-output-to-string (out)
                (loop for c = (read-char input nil nil) while c do (write-char c out)))))
    (if stripped (stripln text) text)))

(defun slurp-stream-lines (input &key count)
  "The rest of INPUT's lines (at most COUNT)."
  (loop for n from 0
        for line = (and (or (null count) (< n count)) (read-line input nil nil))
        while line collect line))

(defun slurp-stream-line (input &key (at 0))
  (let ((lines (slurp-stream-lines input :count (1+ (if (listp at) (or (car at) 0) at)))))
    (access-at lines at)))

(defun slurp-stream-forms (input &key count)
  (loop with eof = '#:eof
        for n from 0
        for form = (if (and count (>= n count)) eof (read input nil eof))
        until (eq form eof) collect form))

(defun slurp-stream-form (input &key (at 0))
  (access-at (slurp-stream-forms input :count (1+ (if (listp at) (or (car at) 0) at))) at))

(defun copy-stream-to-stream (input output &key element-type buffer-size linewise prefix)
  (declare (ignore element-type buffer-size))
  (if linewise
      (loop for line = (read-line input nil nil) while line
            do (when prefix (write-string prefix output)) (write-line line output))
      (loop for c = (read-char input nil nil) while c do (write-char c output))))

(defun concatenate-files (inputs output)
  (with-open-file (o output :direction :output :if-exists :rename-and-delete :if-does-not-exist :create)
    (dolist (input inputs)
      (with-open-file (i input) (copy-stream-to-stream i o)))))

(defun copy-file (input output)
  (concatenate-files (list input) output))

(defun read-file-string (file &rest keys)
  "The contents of FILE as a string."
  (declare (ignore keys))
  (with-open-file (in file) (slurp-stream-string in)))

(defun read-file-lines (file &rest keys)
  "The lines of FILE, as a list of strings."
  (declare (ignore keys))
  (with-open-file (in file) (slurp-stream-lines in)))

(defun read-file-line (file &rest keys &key (at 0) &allow-other-keys)
  (declare (ignore keys))
  (with-open-file (in file) (slurp-stream-line in :at at)))

(defun read-file-forms (file &rest keys &key count &allow-other-keys)
  "The forms FILE holds, read with the current syntax."
  (declare (ignore keys))
  (with-open-file (in file)
    (slurp-stream-forms in :count count)))

(defun read-file-form (file &rest keys &key (at 0) &allow-other-keys)
  "The AT-th (default first) form FILE holds, read with the current syntax."
  (declare (ignore keys))
  (with-open-file (in file)
    (slurp-stream-form in :at at)))

(defun safe-read-file-line (pathname &rest keys &key (package :cl) &allow-other-keys)
  (declare (ignore keys))
  (with-safe-io-syntax (:package package) (read-file-line pathname)))

(defun safe-read-file-form (pathname &rest keys &key (package :cl) &allow-other-keys)
  (declare (ignore keys))
  (with-safe-io-syntax (:package package) (read-file-form pathname)))

(defun eval-input (input)
  (with-input (input)
    (loop with results = nil with eof = '#:eof
          for form = (read input nil eof)
          until (eq form eof)
          do (setf results (multiple-value-list (eval form)))
          finally (return (values-list results)))))

(defun eval-thunk (thunk)
  (if (stringp thunk) (eval-input thunk) (funcall thunk)))

(defun standard-eval-thunk (thunk &key (package :cl))
  (with-standard-io-syntax
    (let ((*package* (find-package package))) (eval-thunk thunk))))

(defun println (x &optional (stream *standard-output*))
  (princ x stream) (terpri stream) (finish-output stream) (values))

(defun writeln (x &rest keys &key (stream *standard-output*) &allow-other-keys)
  (apply #'write x :stream stream (remove-plist-key :stream keys))
  (terpri stream) (finish-output stream) (values))

(defun format! (stream format &rest args)
  (apply #'format stream format args)
  (when stream (finish-output (if (eq stream t) *standard-output* stream))))

(defun safe-format! (stream format &rest args)
  (ignore-errors (apply #'format! stream format args)))

;;; ---------------------------------------------------------------- programs

(define-condition subprocess-error (error)
  ((code :initarg :code :reader subprocess-error-code)
   (command :initarg :command :reader subprocess-error-command)
   (process :initarg :process :initform nil :reader subprocess-error-process))
  (:report (lambda (c s)
             (format s "Subprocess ~@[~S~% ~]~@[with command ~S~% ~]exited with error~@[ code ~D~]"
                     (slot-value c 'process) (slot-value c 'command) (slot-value c 'code)))))

(defun easy-sh-character-p (x)
  (or (alphanumericp x) (find x "+-_.,@:/=")))

(defun escape-sh-token (token &optional stream)
  (let ((text (if (and (plusp (length token)) (every #'easy-sh-character-p token))
                  token
                  (with-output-to-string (s)
                    (write-char #\' s)
                    (loop for c across token
                          do (if (char= c #\') (write-string "'\\''" s) (write-char c s)))
                    (write-char #\' s)))))
    (if stream (write-string text stream) text)))

(defun escape-sh-command (command &optional stream)
  (let ((text (if (stringp command)
                  command
                  (format nil "~{~A~^ ~}" (mapcar #'escape-sh-token command)))))
    (if stream (write-string text stream) text)))

(defun escape-shell-token (token &optional s) (escape-sh-token token s))
(defun escape-shell-command (command &optional stream) (escape-sh-command command stream))

(defun %deliver (text destination if-exists)
  "Hand program output TEXT to DESTINATION as UIOP's OUTPUT argument says."
  (cond ((null destination) nil)
        ((member destination '(:string)) text)
        ((eq destination :lines) (with-input-from-string (s text) (slurp-stream-lines s)))
        ((eq destination :forms) (with-input-from-string (s text) (slurp-stream-forms s)))
        ((eq destination :form) (with-input-from-string (s text) (read s nil nil)))
        ((eq destination :line) (with-input-from-string (s text) (read-line s nil nil)))
        ((member destination '(t :interactive)) (write-string text *standard-output*) nil)
        ((streamp destination) (write-string text destination) nil)
        ((or (pathnamep destination) (stringp destination))
         (with-open-file (o destination :direction :output :if-exists (or if-exists :supersede)
                                        :if-does-not-exist :create)
           (write-string text o))
         nil)
        ((and (consp destination) (eq (car destination) :string))
         text)
        (t (error "RUN-PROGRAM: unsupported output designator ~S" destination))))

(defun run-program (command &rest keys &key input (output nil) (error-output nil)
                                        ignore-error-status force-shell directory
                                        (if-output-exists :supersede) (if-error-output-exists :supersede)
                                        &allow-other-keys)
  "Run COMMAND (a string: through /bin/sh -c; a list: program and
arguments) and wait for it. OUTPUT and ERROR-OUTPUT: NIL, T or :INTERACTIVE
(written to *STANDARD-OUTPUT*), :STRING, :LINES, :FORMS, :LINE, :FORM, a
stream or a pathname (:OUTPUT for ERROR-OUTPUT: with the output). INPUT:
NIL, a string of text, a pathname or a stream. Returns (values output
error-output exit-code); a non-zero exit code signals SUBPROCESS-ERROR
unless IGNORE-ERROR-STATUS."
  (declare (ignore keys))
  (let* ((argv (if (or (stringp command) force-shell)
                   (list "/bin/sh" "-c" (escape-sh-command command))
                   (mapcar (lambda (x) (if (pathnamep x) (native-namestring x) (string x))) command)))
         (input-text (cond ((and (stringp input) (not (eq input t))) (read-file-string input))
                           (t (sys::%input-text (if (eq input t) nil input))))))
    (multiple-value-bind (code out err)
        (sys::%run-program (car argv) (cdr argv) input-text
                           (and directory (native-namestring directory)))
      (when (eq error-output :output)
        (setf out (concatenate 'string out err) err "" error-output nil))
      (unless (or ignore-error-status (eql code 0))
        (error 'subprocess-error :code code :command command))
      (values (%deliver out output if-output-exists)
              (%deliver err error-output if-error-output-exists)
              code))))

(defun launch-program (command &rest keys)
  (declare (ignore command keys))
  (not-implemented-error 'launch-program "only the synchronous RUN-PROGRAM is implemented"))
(defun process-alive-p (process) (declare (ignore process)) nil)
(defun wait-process (process) (declare (ignore process)) (not-implemented-error 'wait-process))
(defun terminate-process (process &key urgent) (declare (ignore process urgent))
  (not-implemented-error 'terminate-process))

;;; ---------------------------------------------------------------- building

(defvar *compile-file-warnings-behaviour* :warn)
(defvar *compile-file-failure-behaviour* :warn)
(defvar *compile-check* nil)
(defvar *uninteresting-conditions* nil)
(defvar *usual-uninteresting-conditions* nil)
(defvar *uninteresting-compiler-conditions* nil)
(defvar *uninteresting-loader-conditions* nil)

(defmacro with-compilation-unit* ((&rest keys) &body body)
  (declare (ignore keys))
  `(progn ,@body))

(defmacro with-muffled-compiler-conditions ((&optional) &body body) `(progn ,@body))
(defmacro with-muffled-loader-conditions ((&optional) &body body) `(progn ,@body))
(defmacro with-saved-deferred-warnings ((warnings-file &key source-namestring) &body body)
  (declare (ignore warnings-file source-namestring))
  `(progn ,@body))

(defun compile-file* (input-file &rest keys &key output-file &allow-other-keys)
  (declare (ignore keys output-file))
  (compile-file input-file))

(defun compile-file-pathname* (input-file &rest keys &key output-file &allow-other-keys)
  (declare (ignore keys))
  (compile-file-pathname input-file :output-file output-file))

(defun load* (x &rest keys &key &allow-other-keys)
  (if (streamp x)
      (eval-input x)
      (apply #'load x keys)))

(defun load-from-string (string)
  (eval-input string))

(defun load-pathname () *load-pathname*)
(defun current-lisp-file-pathname () (or *compile-file-pathname* *load-pathname*))
(defun lispize-pathname (input-file) (make-pathname :type "lisp" :defaults input-file))
(defun load-uiop-debug-utility (&rest keys) (declare (ignore keys)) nil)

;;; ---------------------------------------------------------------- configuration

(defvar *here-directory* nil)
(defvar *ignored-configuration-form* nil)
(defvar *clear-configuration-hook* nil)

(defun register-clear-configuration-hook (hook-function &optional call-now-p)
  (register-hook-function '*clear-configuration-hook* hook-function call-now-p))

(defun clear-configuration ()
  (call-functions *clear-configuration-hook*))

(defun upgrade-configuration () nil)

(defun user-configuration-directories ()
  (list (xdg-config-home "common-lisp/")))

(defun system-configuration-directories ()
  (list #p"/etc/common-lisp/"))

(defun in-first-directory (dirs x &key (direction :input))
  (declare (ignore direction))
  (loop for dir in dirs
        for p = (and dir (merge-pathnames* x (ensure-directory-pathname dir)))
        when (and p (probe-file* p)) return p))

(defun in-user-configuration-directory (x &key (direction :input))
  (in-first-directory (user-configuration-directories) x :direction direction))

(defun in-system-configuration-directory (x &key (direction :input))
  (in-first-directory (system-configuration-directories) x :direction direction))

(define-condition invalid-configuration (error)
  ((form :initarg :form :initform nil) (location :initarg :location :initform nil)
   (format :initarg :format :initform "invalid form") (arguments :initarg :arguments :initform nil))
  (:report (lambda (c s)
             (format s "~? (in ~S~@[ at ~S~])" (slot-value c 'format) (slot-value c 'arguments)
                     (slot-value c 'form) (slot-value c 'location)))))

(defun report-invalid-form (reporter &rest args)
  (if (functionp reporter) (apply reporter args) (apply #'error 'invalid-configuration args)))

(defun configuration-inheritance-directive-p (x)
  (member x '(:inherit-configuration :ignore-inherited-configuration)))

(defun validate-configuration-form (form tag directive-validator &key location invalid-form-reporter)
  (unless (and (consp form) (eq (car form) tag))
    (report-invalid-form invalid-form-reporter :form form :location location
                                               :format "configuration form should start with ~S"
                                               :arguments (list tag)))
  (let ((inherit 0))
    (dolist (directive (cdr form))
      (if (configuration-inheritance-directive-p directive)
          (incf inherit)
          (funcall directive-validator directive)))
    (unless (= inherit 1)
      (report-invalid-form invalid-form-reporter :form form :location location
                                                 :format "one of :inherit-configuration or :ignore-inherited-configuration is needed"))
    form))

(defun validate-configuration-file (file validator &key description)
  (declare (ignore description))
  (funcall validator (read-file-form file) :location file))

(defun validate-configuration-directory (directory tag validator &key invalid-form-reporter)
  (let ((files (sort (directory-files (ensure-directory-pathname directory) "*.conf")
                     #'string< :key #'namestring)))
    `(,tag ,@(loop for file in files
                   append (let ((forms (read-file-forms file)))
                            (dolist (form forms)
                              (funcall validator form :location file :invalid-form-reporter invalid-form-reporter))
                            forms))
           :inherit-configuration)))

(defun location-designator-p (x)
  (or (null x) (stringp x) (pathnamep x) (member x '(t :home :here :user-cache :default-directory))
      (consp x)))

(defun location-function-p (x)
  (and (consp x) (eq (car x) :function)))

(defun %resolve-location-part (x)
  (cond ((null x) nil)
        ((pathnamep x) x)
        ((stringp x) (if (and (plusp (length x)) (char= (char x (1- (length x))) #\/))
                         (parse-unix-namestring x :ensure-directory t)
                         (parse-unix-namestring x)))
        ((eq x :home) (user-homedir-pathname))
        ((eq x :here) (or *here-directory* (getcwd)))
        ((eq x :default-directory) (ensure-directory-pathname (getcwd)))
        ((eq x :user-cache) (xdg-cache-home "common-lisp/"))
        ((and (consp x) (eq (car x) :home)) (merge-pathnames* (resolve-location (cdr x)) (user-homedir-pathname)))
        ((and (consp x) (eq (car x) :getenv)) (let ((v (getenv (second x)))) (and v (ensure-directory-pathname v))))
        ((eq x :root) #p"/")
        ((and (consp x) (eq (car x) :xdg-config-home)) (apply #'xdg-config-home (cdr x)))
        (t (error "Invalid location part ~S" x))))

(defun resolve-location (x &key ensure-directory wilden directory)
  "The pathname a location designator (or list of them, each relative to
the ones before) names."
  (let ((p (if (and (consp x) (not (member (car x) '(:home :getenv :xdg-config-home))))
               (reduce (lambda (acc part)
                         (let ((q (%resolve-location-part part)))
                           (if acc (merge-pathnames* q (ensure-directory-pathname acc)) q)))
                       x :initial-value nil)
               (%resolve-location-part x))))
    (when (and p (or ensure-directory directory)) (setf p (ensure-directory-pathname p)))
    (when (and p wilden) (setf p (wilden p)))
    p))

(defun resolve-relative-location (x &key ensure-directory wilden)
  (resolve-location x :ensure-directory ensure-directory :wilden wilden))

(defun resolve-absolute-location (x &key ensure-directory wilden)
  (resolve-location x :ensure-directory ensure-directory :wilden wilden))

(pushnew :uiop *features*)
(provide "UIOP")
(provide "uiop")
