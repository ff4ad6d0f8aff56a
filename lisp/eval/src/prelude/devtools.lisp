;;;; The prelude: the development functions. TRACE and UNTRACE, DOCUMENTATION,
;;;; DESCRIBE, APROPOS, DISASSEMBLE, FUNCTION-LAMBDA-EXPRESSION, and the
;;;; questions asked on *QUERY-IO* (Y-OR-N-P, YES-OR-NO-P).
;;;;
;;;; TRACE replaces a function's global definition by a wrapper that prints
;;;; the call and the values on *TRACE-OUTPUT* as SBCL does ("  0: (F 3)",
;;;; "  0: F returned 6", two more spaces per nesting level); calls made through
;;;; the name, recursive ones included, go through the wrapper. UNTRACE puts
;;;; the original back. Documentation strings are kept by builtins
;;;; (devtools.rs), since DEFUN records them from the first prelude file on.

;;; The REPL's history variables: the REPL sets *, ** and *** to the last
;;; primary values and /, // and /// to the last lists of values
;;; (Interpreter::record_repl_values); + and - (forms) stay NIL, since the REPL
;;; evaluates a line's text rather than one form.
(defvar + nil)
(defvar ++ nil)
(defvar +++ nil)
(defvar - nil)
(defvar / nil)
(defvar // nil)
(defvar /// nil)

(defvar sys::*traced* nil "An alist (name . original function) of traced functions.")
(defvar sys::*trace-depth* 0)
(defvar sys::*trace-off* nil
  "True while the tracer itself runs: a traced function it calls (MAPCAR,
FORMAT...) is then called without being reported, so tracing never recurses.")

(defun sys::%trace-wrapper (name original)
  (lambda (&rest args)
    (if sys::*trace-off*
        (apply original args)
        (let ((depth sys::*trace-depth*) (out *trace-output*))
          (let ((sys::*trace-off* t))
            (format out "~vA~D: ~S~%" (* 2 (1+ depth)) "" depth (cons name args)))
          (let ((values (let ((sys::*trace-depth* (1+ depth)))
                          (multiple-value-list (apply original args)))))
            (let ((sys::*trace-off* t))
              (format out "~vA~D: ~S returned~{ ~S~}~%" (* 2 (1+ depth)) "" depth name values))
            (values-list values))))))

(defun sys::%trace (names)
  (let ((sys::*trace-off* t))
    (dolist (name names)
      (cond ((assoc name sys::*traced* :test #'equal))
            ((not (fboundp name))
             (warn "~S is not a defined function: not traced" name))
            ((and (symbolp name) (or (macro-function name) (special-operator-p name)))
             (warn "~S is a macro or special operator: not traced" name))
            (t (let ((original (fdefinition name)))
                 (push (cons name original) sys::*traced*)
                 (sys:%set-fdefinition name (sys::%trace-wrapper name original))))))
    (sys::%traced-names)))

(defun sys::%traced-names ()
  (let ((sys::*trace-off* t))
    (reverse (mapcar #'car sys::*traced*))))

(defun sys::%untrace (names)
  (let ((sys::*trace-off* t))
    (dolist (name (or names (mapcar #'car sys::*traced*)))
      (let ((entry (assoc name sys::*traced* :test #'equal)))
        (when entry
          (sys:%set-fdefinition name (cdr entry))
          (setq sys::*traced* (remove entry sys::*traced*))))))
  t)

(defmacro trace (&rest names)
  (if names `(sys::%trace ',names) '(sys::%traced-names)))

(defmacro untrace (&rest names) `(sys::%untrace ',names))

;;; Documentation.

(defun documentation (x doc-type)
  (cond ((functionp x)
         (let ((name (sys::%function-info x)))
           (and name (sys::%documentation name 'function))))
        ((or (symbolp x) (consp x))
         (sys::%documentation x (if (eq doc-type 'compiler-macro) 'function doc-type)))
        (t nil)))

(defun (setf documentation) (new-value x doc-type)
  (if (functionp x)
      (let ((name (sys::%function-info x)))
        (when name (sys::%set-documentation name 'function new-value)))
      (sys::%set-documentation x doc-type new-value))
  new-value)

;;; Describe.

;;; DESCRIBE calls DESCRIBE-OBJECT (clos-standard.lisp), whose method on T shows an
;;; instance's slots; symbols and functions get the description below.
(defun describe (object &optional stream)
  (let ((out (cond ((null stream) *standard-output*) ((eq stream t) *terminal-io*) (t stream))))
    (fresh-line out)
    (describe-object object out)
    (values)))

(defmethod describe-object ((object symbol) stream) (sys::%describe-basic object stream))
(defmethod describe-object ((object function) stream) (sys::%describe-basic object stream))

(defun sys::%describe-basic (object out)
  (progn
    (format out "~S~%  [~(~A~)]~%" object
            (let ((type (type-of object))) (if (consp type) (car type) type)))
    (when (symbolp object)
      (let ((package (symbol-package object)))
        (format out "~%~S names a symbol~@[ in the package ~A~]~%" object
                (and package (package-name package))))
      (when (boundp object)
        (format out "  Its value is ~S~:[~;, a special variable~]~%" (symbol-value object)
                (sys::%special-p object)))
      (let ((doc (documentation object 'variable)))
        (when doc (format out "  Variable documentation: ~A~%" doc)))
      (cond ((special-operator-p object) (format out "  It names a special operator.~%"))
            ((macro-function object) (format out "  It names a macro.~%"))
            ((fboundp object)
             (format out "  It names a ~:[compiled~;builtin~] function.~%"
                     (not (nth-value 2 (sys::%function-info (fdefinition object)))))))
      (let ((doc (documentation object 'function)))
        (when doc (format out "  Function documentation: ~A~%" doc)))
      (when (symbol-plist object)
        (format out "  Its property list is ~S~%" (symbol-plist object))))
    (when (functionp object)
      (multiple-value-bind (name closure-p lisp-p) (sys::%function-info object)
        (format out "  A ~:[builtin~;compiled~] function~@[ named ~S~]~:[~;, a closure~].~%"
                lisp-p name closure-p)))
    (values)))

(defun sys::%special-p (symbol)
  (and (symbolp symbol) (sys::%specialp symbol)))

;;; Apropos.

(defun apropos-list (string &optional package external-only)
  (let ((name (string string)) (out nil))
    (flet ((consider (s)
             (when (search name (symbol-name s) :test #'char-equal)
               (pushnew s out))))
      (if package
          (if external-only
              (do-external-symbols (s package) (consider s))
              (do-symbols (s package) (consider s)))
          (do-all-symbols (s) (consider s))))
    (sort out #'string< :key #'symbol-name)))

(defun apropos (string &optional package external-only)
  (dolist (s (apropos-list string package external-only))
    (format t "~S~:[~; (fbound)~]~:[~; (bound)~]~%" s (fboundp s) (boundp s)))
  (values))

;;; Code.

(defun disassemble (fn)
  (let ((f (cond ((functionp fn) fn)
                 ((and (consp fn) (eq (car fn) 'lambda)) (compile nil fn))
                 ((and (symbolp fn) (macro-function fn)) (macro-function fn))
                 (t (fdefinition fn)))))
    (write-string (sys::%disassemble f))
    nil))

(defun function-lambda-expression (function)
  "The source is not kept once compiled: (values NIL closure-p name)."
  (multiple-value-bind (name closure-p) (sys::%function-info function)
    (values nil closure-p name)))

;;; Questions on *QUERY-IO*.

(defun sys::%ask (format-control arguments prompt accept reject)
  (loop
    (when format-control
      (fresh-line *query-io*)
      (apply #'format *query-io* format-control arguments)
      (write-string " " *query-io*))
    (write-string prompt *query-io*)
    (finish-output *query-io*)
    (let ((answer (string-trim " " (or (read-line *query-io* nil nil) (return nil)))))
      (cond ((member answer accept :test #'string-equal) (return t))
            ((member answer reject :test #'string-equal) (return nil))
            (t (format *query-io* "~&Please type ~S or ~S.~%" (car accept) (car reject)))))))

(defun y-or-n-p (&optional format-control &rest arguments)
  (sys::%ask format-control arguments "(y or n) " '("y" "Y") '("n" "N")))

(defun yes-or-no-p (&optional format-control &rest arguments)
  (sys::%ask format-control arguments "(yes or no) " '("yes") '("no")))
