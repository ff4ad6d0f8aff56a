;;;; The prelude: modules and compiling files. PROVIDE and REQUIRE keep
;;;; *MODULES*; REQUIRE loads a module embedded in the binary
;;;; (builtins/modules.rs: ASDF, UIOP...) before it searches the directories
;;;; of SYS::*MODULE-DIRECTORIES* for NAME.lisp. SYS::*BUILTIN-SYSTEMS* lists
;;;; the ASDF systems the embedded modules provide, which ASDF finds before
;;;; its source registry.
;;;;
;;;; COMPILE-FILE "compiles" by checking that the file reads and loads: the
;;;; interpreter has no other object format, so the result is the source.
;;;;
;;;; Invariant: a module name in *MODULES* is a string; an embedded module,
;;;; once loaded, is there under its upper-case name, and REQUIRE finds it
;;;; whatever the case of the name it is given.

(defvar *compile-file-pathname* nil)
(defvar *compile-file-truename* nil)
(defvar *load-verbose* nil)
(defvar *load-print* nil)
(defvar *compile-verbose* nil)
(defvar *compile-print* nil)
(defvar *modules* nil)
(defvar sys::*module-directories* nil
  "Directories (namestrings ending in /) REQUIRE searches for NAME.lisp.")

(defvar sys::*builtin-systems*
  (let ((pairs nil))
    (dolist (module (sys::%embedded-modules) (nreverse pairs))
      (dolist (system (cdr module))
        (push (cons system (car module)) pairs))))
  "(system-name . module-name) for each ASDF system an embedded module
provides; ASDF loads such a system by REQUIRE-ing the module.")

(defun compile-file-pathname (input-file &key output-file &allow-other-keys)
  (if output-file
      (merge-pathnames output-file (merge-pathnames input-file))
      (merge-pathnames input-file)))

(defun compile-file (input-file &key output-file verbose print external-format)
  "Check that INPUT-FILE loads (there is no compiled format: the result is the
source itself, which LOAD accepts), as (values output-truename warnings-p failure-p)."
  (declare (ignore print external-format output-file))
  (let* ((*compile-file-pathname* (merge-pathnames input-file))
         (*compile-file-truename* (truename *compile-file-pathname*)))
    (when (or verbose *compile-verbose*)
      (format t "~&; compiling file ~S~%" (namestring *compile-file-truename*)))
    (load *compile-file-truename*)
    (values *compile-file-truename* nil nil)))

(defmacro with-compilation-unit ((&key override policy) &body body)
  (declare (ignore override policy))
  `(progn ,@body))

(defun provide (module-name)
  (pushnew (string module-name) *modules* :test #'string=)
  t)

(defun sys::%load-embedded-module (name)
  "Load the module NAME embedded in the binary; NIL when there is none."
  (let ((parts (sys::%embedded-module name)))
    (when parts
      (dolist (part parts)
        (let ((*package* (find-package "COMMON-LISP-USER"))
              (*readtable* *readtable*)
              (*load-pathname* nil)
              (*load-truename* nil))
          (sys:%load-source (car part) (cdr part))))
      (provide (string-upcase name))
      t)))

(defun require (module-name &optional pathnames)
  "Load MODULE-NAME unless it was PROVIDEd: from PATHNAMES if given, else
the module of that name embedded in the binary, else NAME.lisp (or
name.lisp) in the directories of SYS::*MODULE-DIRECTORIES*."
  (let ((name (string module-name)))
    (unless (or (member name *modules* :test #'string=)
                (and (null pathnames) (sys::%embedded-module name)
                     (member name *modules* :test #'string-equal)))
      (cond (pathnames
             (dolist (f (if (listp pathnames) pathnames (list pathnames)))
               (load f)))
            ((sys::%load-embedded-module name))
            (t
             (let ((found nil))
               (dolist (dir sys::*module-directories*)
                 (dolist (n (list name (string-downcase name)))
                   (let ((f (merge-pathnames (concatenate 'string n ".lisp") (pathname dir))))
                     (when (and (not found) (probe-file f)) (setq found f)))))
               (unless found
                 (error "Don't know how to REQUIRE ~A: it is not a module of this Lisp (~{~A~^, ~}) ~
                         and there is no ~A.lisp in SYS::*MODULE-DIRECTORIES* ~S"
                        name (mapcar #'car (sys::%embedded-modules))
                        name sys::*module-directories*))
               (load found)))))
    t))

;;; ---- programs and the command line (MPROF-EXT) ----

(export (list (intern "RUN-PROGRAM" "MPROF-EXT") (intern "*POSIX-ARGV*" "MPROF-EXT")) "MPROF-EXT")

(defvar mprof-ext:*posix-argv* (mprof-ext:posix-argv)
  "The command line: \"mprof-lisp\", then the program's arguments.")

(defun sys::%input-text (input)
  "The text a program's INPUT designates: a string is the text itself, a
stream is read to its end, a pathname names a file; NIL is no input."
  (cond ((null input) nil)
        ((stringp input) input)
        ((pathnamep input)
         (with-open-file (in input)
           (with-output-to-string (out)
             (loop for line = (read-line in nil nil) while line do (write-line line out)))))
        ((streamp input)
         (with-output-to-string (out)
           (loop for c = (read-char input nil nil) while c do (write-char c out))))
        (t (error "RUN-PROGRAM: the input ~S is not NIL, a string, a pathname or a stream" input))))

(defun sys::%deliver-output (text destination)
  "Hand a program's output TEXT to DESTINATION: NIL drops it, :STRING returns
it, T writes it to *STANDARD-OUTPUT*, a stream gets it written."
  (cond ((null destination) nil)
        ((eq destination :string) text)
        ((eq destination t) (write-string text *standard-output*) nil)
        ((streamp destination) (write-string text destination) nil)
        (t (error "RUN-PROGRAM: the output ~S is not NIL, T, :STRING or a stream" destination))))

(defun mprof-ext:run-program (program args &key input output error-output directory)
  "Run PROGRAM (found on PATH when it has no slash) with the argument strings
ARGS and wait for it. INPUT: NIL, a string (the text), a pathname or a
stream. OUTPUT and ERROR-OUTPUT: NIL (dropped), T (*STANDARD-OUTPUT*),
:STRING or a stream. Returns (values exit-code output error-output), the
last two strings when asked for with :STRING; the exit code is NIL when a
signal ended the program."
  (multiple-value-bind (code out err)
      (sys::%run-program (if (pathnamep program) (sys::%native-namestring program) program)
                         (mapcar #'string args)
                         (sys::%input-text input)
                         (and directory (sys::%native-namestring directory)))
    (values code (sys::%deliver-output out output) (sys::%deliver-output err error-output))))
