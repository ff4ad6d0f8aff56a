;;;; The prelude: pathnames, modules and compiling files.
;;;;
;;;; Pathnames are their namestrings here (#P"x" reads as "x"): the functions
;;;; below take a namestring apart at its last / and the last dot after it,
;;;; and build one back. That is enough for programs that compute the names of
;;;; files to load (merge-pathnames, make-pathname) and for REQUIRE.
;;;; COMPILE-FILE "compiles" by checking that the file reads and loads: the
;;;; interpreter has no other object format, so the result is the source.

(defvar *default-pathname-defaults* "")
(defvar *compile-file-pathname* nil)
(defvar *compile-file-truename* nil)
(defvar *load-verbose* nil)
(defvar *load-print* nil)
(defvar *compile-verbose* nil)
(defvar *compile-print* nil)
(defvar *modules* nil)
(defvar sys::*module-directories* nil
  "Directories (namestrings ending in /) REQUIRE searches for NAME.lisp.")

(defun namestring (pathname)
  (if (streamp pathname) (sys::%stream-name pathname) (string pathname)))

(defun pathname (designator) (namestring designator))
(defun pathnamep (object) (declare (ignore object)) nil)

(defun sys::%split-namestring (name)
  "(directory-part name type) of a namestring; the directory keeps its slash."
  (let* ((name (namestring name))
         (slash (position #\/ name :from-end t))
         (dir (if slash (subseq name 0 (1+ slash)) nil))
         (file (if slash (subseq name (1+ slash)) name))
         (dot (position #\. file :from-end t)))
    (if (and dot (plusp dot))
        (list dir (subseq file 0 dot) (subseq file (1+ dot)))
        (list dir (if (string= file "") nil file) nil))))

(defun pathname-name (pathname &key case)
  (declare (ignore case))
  (second (sys::%split-namestring pathname)))

(defun pathname-type (pathname &key case)
  (declare (ignore case))
  (third (sys::%split-namestring pathname)))

(defun pathname-directory (pathname &key case)
  (declare (ignore case))
  (let ((dir (first (sys::%split-namestring pathname))))
    (when dir
      (let ((parts nil) (start 0) (absolute (and (plusp (length dir)) (char= (char dir 0) #\/))))
        (dotimes (i (length dir))
          (when (char= (char dir i) #\/)
            (when (> i start) (push (subseq dir start i) parts))
            (setq start (1+ i))))
        (cons (if absolute :absolute :relative) (nreverse parts))))))

(defun pathname-host (pathname &key case) (declare (ignore pathname case)) nil)
(defun pathname-device (pathname &key case) (declare (ignore pathname case)) nil)
(defun pathname-version (pathname) (declare (ignore pathname)) nil)

(defun directory-namestring (pathname)
  (or (first (sys::%split-namestring pathname)) ""))

(defun file-namestring (pathname)
  (let ((parts (sys::%split-namestring pathname)))
    (format nil "~@[~A~]~@[.~A~]" (second parts) (third parts))))

(defun sys::%directory-string (directory)
  (cond ((null directory) "")
        ((stringp directory) directory)
        (t (format nil "~:[~;/~]~{~A/~}"
                   (eq (car directory) :absolute)
                   (mapcar (lambda (d) (if (member d '(:up :back)) ".." d)) (cdr directory))))))

(defun make-pathname (&key host device directory name type version defaults case)
  (declare (ignore host device version case))
  (let ((d (and defaults (sys::%split-namestring defaults))))
    (format nil "~A~@[~A~]~@[.~A~]"
            (if directory (sys::%directory-string directory) (or (first d) ""))
            (or name (second d))
            (or type (third d)))))

(defun merge-pathnames (pathname &optional (defaults *default-pathname-defaults*) default-version)
  (declare (ignore default-version))
  (let ((p (sys::%split-namestring pathname))
        (d (sys::%split-namestring defaults)))
    (format nil "~A~@[~A~]~@[.~A~]"
            (let ((dir (first p)))
              (cond ((null dir) (or (first d) ""))
                    ((char= (char dir 0) #\/) dir)
                    (t (concatenate 'string (or (first d) "") dir))))
            (or (second p) (second d))
            (or (third p) (third d)))))

(defun enough-namestring (pathname &optional (defaults *default-pathname-defaults*))
  (let ((name (namestring pathname)) (dir (directory-namestring defaults)))
    (if (and (plusp (length dir)) (eql 0 (search dir name)))
        (subseq name (length dir))
        name)))

(defun truename (pathname)
  ;; "" names the current directory (the default pathname's).
  (or (probe-file (if (equal (namestring pathname) "") "." pathname))
      (error 'sys::simple-file-error :pathname (namestring pathname)
                                     :format-control "The file ~S does not exist."
                                     :format-arguments (list (namestring pathname)))))

(defun user-homedir-pathname (&optional host)
  (declare (ignore host))
  (let ((home (sys::%getenv "HOME")))
    (if home (concatenate 'string (string-right-trim "/" home) "/") "/")))

(defun compile-file-pathname (input-file &key output-file &allow-other-keys)
  (or output-file (namestring input-file)))

(defun compile-file (input-file &key output-file verbose print external-format)
  "Check that INPUT-FILE loads (there is no compiled format: the result is the
source itself, which LOAD accepts), as (values output-file warnings-p failure-p)."
  (declare (ignore print external-format))
  (let ((*compile-file-pathname* (namestring input-file))
        (*compile-file-truename* (truename input-file)))
    (when (or verbose *compile-verbose*)
      (format t "~&; compiling file ~S~%" (namestring input-file)))
    (load input-file)
    (values (or output-file (namestring input-file)) nil nil)))

(defun provide (module-name)
  (pushnew (string module-name) *modules* :test #'string=)
  t)

(defun require (module-name &optional pathnames)
  "Load MODULE-NAME unless it was PROVIDEd: from PATHNAMES if given, else from
NAME.lisp (or name.lisp) in the directories of SYS::*MODULE-DIRECTORIES*."
  (let ((name (string module-name)))
    (unless (member name *modules* :test #'string=)
      (let ((files (if pathnames
                       (if (listp pathnames) pathnames (list pathnames))
                       (let ((found nil))
                         (dolist (dir sys::*module-directories*)
                           (dolist (n (list name (string-downcase name)))
                             (let ((f (concatenate 'string (namestring dir) n ".lisp")))
                               (when (and (not found) (probe-file f)) (setq found f)))))
                         (if found
                             (list found)
                             (error "Don't know how to REQUIRE ~A: no ~A.lisp in SYS::*MODULE-DIRECTORIES* ~S"
                                    name name sys::*module-directories*))))))
        (dolist (f files) (load f))))
    t))

(defun ensure-directories-exist (pathspec &key verbose)
  "Create the directories of PATHSPEC's directory part; (values pathspec created)."
  (declare (ignore verbose))
  (values pathspec (sys::%create-directories (directory-namestring pathspec))))

(defun file-write-date (pathspec)
  "The file's modification time as a universal time (a FILE-ERROR when there is
no such file, NIL when the system cannot tell)."
  (sys::%file-write-date (truename pathspec)))
