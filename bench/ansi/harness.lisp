;;;; harness.lisp -- a small, portable runner for the ANSI Common Lisp test
;;;; suite (pfdietz/ansi-test), loadable by SBCL and by mprof-lisp alike.
;;;;
;;;; It replaces the suite's RT (rt.lsp) with a minimal DEFTEST that only
;;;; records tests, and provides SIGNALS-ERROR / SIGNALS-TYPE-ERROR with the
;;;; suite's meaning.  The driver (run.py) cuts the suite's files into
;;;; top-level chunks and writes them to a job file of
;;;;   (:chunk FILE LINE KIND TEXT)
;;;; entries, KIND being :FORM or the name string of a literal DEFTEST.
;;;; RUN-JOB reads each chunk's text with READ-FROM-STRING and evaluates it
;;;; inside HANDLER-CASE, so a form one implementation cannot read or
;;;; evaluate costs that form only.  Then every recorded test runs on its
;;;; own, errors caught, its output captured, and one line per test is
;;;; printed on the real standard output:
;;;;   @@RUN name / @@PASS name / @@FAIL name :: reason / @@SKIP name
;;;; The driver watches these lines to enforce a per-test time limit and to
;;;; restart the process past a test that hung or crashed.

(defpackage "REGRESSION-TEST"
  (:use "COMMON-LISP")
  (:nicknames "RT" "RTEST")
  (:export "*COMPILE-TESTS*" "*DO-TESTS-WHEN-DEFINED*" "*TEST*"
           "CONTINUE-TESTING" "DEFTEST" "DO-TEST" "DO-TESTS"
           "DO-EXTENDED-TESTS" "GET-TEST" "PENDING-TESTS" "REM-ALL-TESTS"
           "REM-TEST" "DEFNOTE" "MY-AREF" "*CATCH-ERRORS*" "*PASSED-TESTS*"
           "*FAILED-TESTS*" "DISABLE-NOTE" "*EXPECTED-FAILURES*"
           "*UNEXPECTED-FAILURES*" "*UNEXPECTED-SUCCESSES*"))

(defpackage "CL-TEST"
  (:use "COMMON-LISP" "REGRESSION-TEST")
  ;; As the suite's cl-test-package.lsp does; ansi-aux-macros.lsp then
  ;; defines these two as thin wrappers of the CL macros.
  (:shadow "HANDLER-CASE" "HANDLER-BIND")
  (:export "RANDOM-FROM-SEQ" "RANDOM-CASE" "COIN" "RANDOM-PERMUTE"
           "*UNIVERSE*" "*MINI-UNIVERSE*" "*CL-SYMBOLS*" "SIGNALS-ERROR"
           "TYPEF"))

(defpackage "ANSI-HARNESS" (:use "COMMON-LISP"))

;;; ------------------------------------------------------------------
;;; RT replacement: DEFTEST records (name props form vals) in order.

(in-package "REGRESSION-TEST")

(defvar *test* nil)
(defvar *compile-tests* nil)
(defvar *do-tests-when-defined* nil)
(defvar *catch-errors* t)
(defvar *passed-tests* nil)
(defvar *failed-tests* nil)
(defvar *expected-failures* nil)
(defvar *unexpected-failures* nil)
(defvar *unexpected-successes* nil)
(defvar *entries* nil "Entries (name props form vals), newest first.")
(defvar *entries-table* (make-hash-table :test 'equal))
(defvar *notes* (make-hash-table :test 'equal) "Note name -> disabled flag.")

(defun add-entry (name props form vals)
  (let ((old (gethash name *entries-table*)))
    (if old
        ;; Redefinition replaces the test in place, as RT does.
        (setf (second old) props (third old) form (fourth old) vals)
        (let ((e (list name props form vals)))
          (setf (gethash name *entries-table*) e)
          (push e *entries*))))
  (setq *test* name)
  name)

(defmacro deftest (name &rest body)
  (let ((props '()))
    (loop while (keywordp (first body))
          do (push (pop body) props)
             (push (pop body) props))
    `(add-entry ',name ',(nreverse props) ',(first body) ',(rest body))))

(defun defnote-fn (name contents disabled)
  (declare (ignore contents))
  (setf (gethash name *notes*) disabled)
  name)

(defmacro defnote (name contents &optional disabled)
  `(defnote-fn ',name ',contents ',disabled))

(defun disable-note (name)
  (setf (gethash name *notes*) t)
  name)

(defun entry-disabled-p (entry)
  (let ((notes (getf (second entry) :notes)))
    (dolist (n (if (listp notes) notes (list notes)) nil)
      (when (gethash n *notes*) (return t)))))

(defun my-aref (a &rest args) (apply #'aref a args))
(defun my-row-major-aref (a index) (row-major-aref a index))

(defun equalp-with-case (x y)
  "RT's result comparison: EQUALP without case folding of characters."
  (cond
    ((eq x y) t)
    ((consp x)
     (and (consp y)
          (equalp-with-case (car x) (car y))
          (equalp-with-case (cdr x) (cdr y))))
    ((stringp x) (and (stringp y) (string= x y)))
    ((and (typep x 'array) (= (array-rank x) 0))
     (and (typep y 'array) (= (array-rank y) 0)
          (equalp-with-case (aref x) (aref y))))
    ((typep x 'vector)
     (and (typep y 'vector)
          (= (length x) (length y))
          (dotimes (i (length x) t)
            (unless (equalp-with-case (aref x i) (aref y i))
              (return nil)))))
    ((typep x 'array)
     (and (typep y 'array)
          (equal (array-dimensions x) (array-dimensions y))
          (dotimes (i (array-total-size x) t)
            (unless (equalp-with-case (row-major-aref x i)
                                      (row-major-aref y i))
              (return nil)))))
    ((and (numberp x) (numberp y) (zerop x) (zerop y))
     (eq (type-of x) (type-of y)))
    (t (eql x y))))

;;; ------------------------------------------------------------------
;;; The error-checking macros the test files use, with the suite's
;;; meaning: T when FORM signals a condition of type ERROR-NAME (and, for a
;;; TYPE-ERROR, the datum is really not of the expected type).  Any other
;;; outcome is NIL plus a description, so the test fails and the report
;;; says why.

(in-package "CL-TEST")

(defun printable-p (c)
  (cl:handler-case (progn (format nil "~a" c) t)
    (error () nil)))

(defmacro signals-error (form error-name &key (safety 3) (name nil name-p) (inline nil))
  (declare (ignore safety))
  (let ((c (gensym "C")))
    `(cl:handler-case
         (apply #'values nil :no-error
                (multiple-value-list ,(if inline form `(eval ',form))))
       (,error-name (,c)
         (cond
           ,@(when (eq error-name 'type-error)
               `(((typep (type-error-datum ,c) (type-error-expected-type ,c))
                  (values nil :datum-is-of-expected-type))))
           ,@(when (and name-p (member error-name '(undefined-function unbound-variable)))
               `(((not (eq (cell-error-name ,c) ',name))
                  (values nil :wrong-cell-error-name (cell-error-name ,c)))))
           (t (printable-p ,c))))
       (error (,c) (values nil :wrong-error (type-of ,c))))))

(defmacro signals-error-always (form error-name)
  `(values (signals-error ,form ,error-name)
           (signals-error ,form ,error-name)))

(defmacro signals-type-error (var datum-form form &key (safety 3) (inline nil))
  (declare (ignore safety))
  (let ((c (gensym "C"))
        (lambda-form `(lambda (,var) ,form)))
    `(let ((,var ,datum-form))
       (cl:handler-case
           (apply #'values nil :no-error
                  (multiple-value-list
                   (funcall ,(if inline `(function ,lambda-form) `(eval ',lambda-form))
                            ,var)))
         (type-error (,c)
           (let ((datum (type-error-datum ,c))
                 (expected-type (type-error-expected-type ,c)))
             (cond ((not (eql ,var datum)) (list :datum-mismatch ,var datum))
                   ((typep datum expected-type) (list :is-typep datum expected-type))
                   (t (printable-p ,c)))))
         (error (,c) (values nil :wrong-error (type-of ,c)))))))

;;; Referenced by cl-test-package.lsp; chapters never need to load files.
(defun compile-and-load (&rest args) (declare (ignore args)) nil)

;;; ------------------------------------------------------------------
;;; Runner.

(in-package "ANSI-HARNESS")

(defvar *out* *standard-output* "The real standard output, for @@ lines.")
(defvar *eof* (list :eof))

(defun bounded-print (x &optional (depth 4) (budget (list 40)))
  "Readable-ish text of X that terminates on circular or huge structure."
  (cond
    ((<= (car budget) 0) "...")
    ((consp x)
     (if (<= depth 0)
         "(...)"
         (with-output-to-string (s)
           (write-string "(" s)
           (loop for tail = x then (cdr tail)
                 for i from 0
                 while (consp tail)
                 do (when (> i 0) (write-string " " s))
                    (when (or (>= i 10) (<= (car budget) 0))
                      (write-string "..." s)
                      (return))
                    (decf (car budget))
                    (write-string (bounded-print (car tail) (1- depth) budget) s)
                 finally (when tail
                           (write-string " . " s)
                           (write-string (bounded-print tail (1- depth) budget) s)))
           (write-string ")" s))))
    ((and (vectorp x) (not (stringp x)))
     (format nil "#~a" (bounded-print (coerce (subseq x 0 (min 10 (length x))) 'list)
                                      depth budget)))
    (t (decf (car budget))
       (let ((text (handler-case (prin1-to-string x)
                     (error () "#<unprintable>"))))
         (if (> (length text) 200) (concatenate 'string (subseq text 0 200) "...") text)))))

(defun one-line (text)
  (substitute #\Space #\Newline
              (if (> (length text) 400) (concatenate 'string (subseq text 0 400) "...") text)))

(defun name-string (name)
  (let ((*package* (find-package "CL-TEST")))
    (handler-case (prin1-to-string name)
      (error () "#<unprintable-name>"))))

(defun condition-text (c)
  (one-line (format nil "~s: ~a" (type-of c)
                    (handler-case (princ-to-string c)
                      (error () "#<error printing condition>")))))

(defun emit (fmt &rest args)
  (fresh-line *out*)
  (apply #'format *out* fmt args)
  (terpri *out*)
  (finish-output *out*))

(defun load-chunk (file line kind text)
  "Read and evaluate one top-level chunk; report failures, never signal."
  (let ((form (handler-case (read-from-string text nil *eof*)
                (serious-condition (c)
                  (if (stringp kind)
                      (emit "@@FAIL ~a :: READ ~a" kind (condition-text c))
                      (emit "@@LOADERR ~a:~a :: READ ~a" file line (condition-text c)))
                  (return-from load-chunk nil)))))
    (when (eq form *eof*)              ; e.g. a #+sbcl form elsewhere
      (return-from load-chunk nil))
    (handler-case
        (let ((*standard-output* (make-string-output-stream)))
          (handler-bind ((warning #'muffle-warning))
            (eval form)))
      (serious-condition (c)
        (if (stringp kind)
            (emit "@@FAIL ~a :: DEFINE ~a" kind (condition-text c))
            (emit "@@LOADERR ~a:~a :: ~a :: ~a" file line
                  (one-line (bounded-print (if (consp form) (list (car form) (and (consp (cdr form)) (cadr form))) form)))
                  (condition-text c)))
        ;; A failed DEFVAR/DEFPARAMETER still binds the variable (to NIL)
        ;; so the forms built on it degrade instead of all failing.
        (when (and (consp form)
                   (member (car form) '(defvar defparameter))
                   (symbolp (cadr form))
                   (not (boundp (cadr form))))
          (handler-case (eval `(defparameter ,(cadr form) nil))
            (error () nil)))))))

(defun run-entry (entry)
  (let ((name (first entry)) (form (third entry)) (vals (fourth entry)))
    (let ((ns (name-string name)))
      (emit "@@RUN ~a" ns)
      (let ((result
              (handler-case
                  (let ((*standard-output* (make-string-output-stream))
                        (rt:*test* name))
                    (handler-bind ((warning #'muffle-warning))
                      (cons :values (multiple-value-list (eval form)))))
                (serious-condition (c) (cons :error c)))))
        (cond
          ((eq (car result) :error)
           (emit "@@FAIL ~a :: ERROR ~a" ns (condition-text (cdr result))))
          ((handler-case (rt::equalp-with-case (cdr result) vals)
             (serious-condition () nil))
           (emit "@@PASS ~a" ns))
          (t
           (emit "@@FAIL ~a :: VALUES ~a expected ~a" ns
                 (one-line (bounded-print (cdr result)))
                 (one-line (bounded-print vals)))))))))

(defun run-job (path &optional skip skip-chunks)
  "Load every chunk of the job file at PATH but those numbered in
SKIP-CHUNKS, then run the tests not in SKIP (a list of name strings, as
printed in @@ lines)."
  (let ((*package* (find-package "CL-TEST"))
        (count 0))
    (with-open-file (in path)
      (loop for entry = (read in nil *eof*)
            until (eq entry *eof*)
            do (unless (member count skip-chunks)
                 (emit "@@CHUNK ~a ~a:~a" count (second entry) (third entry))
                 (apply #'load-chunk (rest entry)))
               (incf count)))
    (emit "@@LOADED ~a chunks, ~a tests" count (length rt::*entries*))
    (dolist (e (reverse rt::*entries*))
      (let ((ns (name-string (first e))))
        (cond ((member ns skip :test #'string=))
              ((rt::entry-disabled-p e) (emit "@@SKIP ~a" ns))
              (t (run-entry e)))))
    (emit "@@DONE")))
