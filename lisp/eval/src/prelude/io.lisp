;;;; The prelude: streams, files and the environment. The stream operations
;;;; are builtins (streams.rs, files.rs, composite_streams.rs, system.rs);
;;;; here are the macros around them (which take declarations at the head of
;;;; their bodies), OPEN's element types, READ-SEQUENCE and WRITE-SEQUENCE,
;;;; LOAD and TIME. (Gray streams and the generic stream functions are
;;;; gray-streams.lisp's.)

(defconstant internal-time-units-per-second 1000000)

;; The WITH- macros take declarations at the head of their bodies.
;; Left by a non-local exit, the stream is closed with :ABORT T (a file it made
;; is deleted).
(defmacro with-open-stream ((var stream) &body body)
  (let ((abort (gensym "ABORT")))
    (multiple-value-bind (decls forms) (sys::%split-declarations body)
      `(let ((,var ,stream) (,abort t))
         ,@decls
         (unwind-protect (multiple-value-prog1 (progn ,@forms) (setq ,abort nil))
           (when ,var (close ,var :abort ,abort)))))))

(defmacro with-open-file ((var filename &rest options) &body body)
  `(with-open-stream (,var (open ,filename ,@options)) ,@body))

(defun open (filename &rest options &key (element-type nil element-type-p) &allow-other-keys)
  "SYS::%OPEN with DEFTYPE names in ELEMENT-TYPE expanded (its other
keywords are checked there)."
  (if element-type-p
      (apply #'sys::%open filename :element-type (sys::%expand-type element-type) options)
      (apply #'sys::%open filename options)))

(defmacro with-input-from-string ((var string &key index (start 0) end) &body body)
  (let ((start-var (gensym "START")))
    (multiple-value-bind (decls forms) (sys::%split-declarations body)
      `(let* ((,start-var ,start)
              (,var (make-string-input-stream ,string ,start-var ,end)))
         ,@decls
         (multiple-value-prog1 (progn ,@forms)
           ,@(when index
               `((setf ,index (+ ,start-var (sys:%string-input-position ,var))))))))))

(defun sys::%append-to-string (string text)
  ;; WITH-OUTPUT-TO-STRING into a string with a fill pointer appends to it.
  (dotimes (i (length text) string)
    (vector-push-extend (aref text i) string)))

(defmacro with-output-to-string ((var &optional string &key (element-type nil element-type-p)) &body body)
  (multiple-value-bind (decls forms) (sys::%split-declarations body)
    (if string
        (let ((target (gensym "STRING")))
          ;; ELEMENT-TYPE is evaluated (after STRING) though every string holds any character.
          `(let ((,target ,string) (,var (progn ,@(when element-type-p (list element-type))
                                                (make-string-output-stream))))
             ,@decls
             (multiple-value-prog1 (progn ,@forms)
               (sys::%append-to-string ,target (get-output-stream-string ,var)))))
        `(let ((,var (progn ,@(when element-type-p (list element-type))
                            (make-string-output-stream))))
           ,@decls
           ,@forms
           (get-output-stream-string ,var)))))

(defvar *load-pathname* nil)
(defvar *load-truename* nil)

(defun load (filespec &key verbose print (if-does-not-exist t) external-format)
  (declare (ignore verbose print external-format))
  (let ((text (sys:%read-file (sys::%native-namestring filespec) (null if-does-not-exist))))
    (when text
      ;; LOAD binds *PACKAGE*: an IN-PACKAGE in the file stays in the file.
      (let ((*package* *package*)
            (*load-pathname* (merge-pathnames filespec))
            (*load-truename* (probe-file filespec)))
        (sys:%load-source text (sys::%native-namestring filespec)))
      t)))

(defun sys::%report-time (real-micros run-micros bytes)
  (let ((out *trace-output*))
    (fresh-line out)
    (format out "Evaluation took:~%")
    (format out "  ~,3f seconds of real time~%" (/ real-micros 1000000.0))
    (format out "  ~,6f seconds of total run time~%" (/ run-micros 1000000.0))
    (format out "  ~:d bytes consed~%" bytes)
    (format out "  ~%")))

(defun sys::%time (thunk)
  (let* ((counting (sys:%time-begin))
         (bytes (sys:%bytes-consed))
         (run (get-internal-run-time))
         (real (get-internal-real-time)))
    (unwind-protect
         (multiple-value-prog1 (funcall thunk)
           (let ((real-after (get-internal-real-time))
                 (run-after (get-internal-run-time))
                 (bytes-after (sys:%bytes-consed)))
             (sys::%report-time (- real-after real) (- run-after run) (- bytes-after bytes))))
      (sys:%time-end counting))))

(defmacro time (form)
  `(sys::%time (lambda () ,form)))

;; The REPL prints a form's values with this, through the VM, so printing
;; streams, runs print methods and can be interrupted. NEWLINE: the output
;; does not end with one (the REPL knows; the stream's column may not, after
;; the REPL's own messages).
(defun sys::%print-values (newline &rest values)
  (when (and newline values) (terpri))
  (dolist (v values) (prin1 v) (terpri))
  (values))
;; Within print methods: #<TYPE body {address}>, as SBCL lays it out.
(defmacro print-unreadable-object ((object stream &key type identity) &body body)
  `(sys::%print-unreadable ,object ,stream ,type ,identity ,(if body `(lambda () ,@body) nil)))

(defun sys::%print-unreadable (object stream type identity body)
  (let ((stream (cond ((null stream) *standard-output*) ((eq stream t) *terminal-io*) (t stream))))
    (when *print-readably*
      (error 'print-not-readable :object object))
    (write-string "#<" stream)
    (when type
      (prin1 (type-of object) stream)
      (write-char #\Space stream))
    (when body (funcall body))
    (when identity
      (when body (write-char #\Space stream))
      (format stream "{~X}" (sys:%object-address object)))
    (write-char #\> stream)
    nil))

(defun sys::%proper-sequence-p (x)
  "Not a dotted or circular list."
  (or (not (listp x))
      (and (ignore-errors (list-length x)) t)))

(defun sys::%check-sequence-bounds (sequence start end)
  "END (or SEQUENCE's length): START and END are bounding indices of SEQUENCE."
  (unless (and (typep sequence 'sequence) (sys::%proper-sequence-p sequence))
    (error 'type-error :datum sequence :expected-type '(and sequence (satisfies sys::%proper-sequence-p))))
  (let ((length (length sequence)))
    (unless (and (integerp start) (<= 0 start length))
      (error 'type-error :datum start :expected-type `(integer 0 ,length)))
    (unless (or (null end) (and (integerp end) (<= start end length)))
      (error 'type-error :datum end :expected-type `(or null (integer ,start ,length))))
    (or end length)))

;; READ-SEQUENCE and WRITE-SEQUENCE are in gray-streams.lisp (they call Gray streams).

(defun read-delimited-list (char &optional stream recursive-p)
  "Read objects from STREAM up to the character CHAR; the list of them."
  (declare (ignore recursive-p))
  (let ((stream (sys::%input-stream stream)) (items nil))
    (loop
      (let ((c (peek-char t stream t nil t)))
        (when (char= c char)
          (read-char stream)
          (return (nreverse items)))
        (push (read stream t nil t) items)))))
