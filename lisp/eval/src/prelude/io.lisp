;;;; The prelude: streams, files and the environment. The stream operations
;;;; are builtins (streams.rs, system.rs); here are the macros around them,
;;;; LOAD and TIME.

(defconstant internal-time-units-per-second 1000000)

(defmacro with-open-stream ((var stream) &body body)
  `(let ((,var ,stream))
     (unwind-protect (progn ,@body)
       (when ,var (close ,var)))))

(defmacro with-open-file ((var filename &rest options) &body body)
  `(with-open-stream (,var (open ,filename ,@options)) ,@body))

(defmacro with-input-from-string ((var string &key index (start 0) end) &body body)
  (let ((start-var (gensym "START")))
    `(let* ((,start-var ,start)
            (,var (make-string-input-stream ,string ,start-var ,end)))
       (multiple-value-prog1 (progn ,@body)
         ,@(when index
             `((setf ,index (+ ,start-var (sys:%string-input-position ,var)))))))))

(defun sys::%append-to-string (string text)
  ;; WITH-OUTPUT-TO-STRING into a string with a fill pointer appends to it.
  (dotimes (i (length text) string)
    (vector-push-extend (aref text i) string)))

(defmacro with-output-to-string ((var &optional string &key element-type) &body body)
  (declare (ignore element-type))
  (if string
      (let ((target (gensym "STRING")))
        `(let ((,target ,string) (,var (make-string-output-stream)))
           (multiple-value-prog1 (locally ,@body)
             (sys::%append-to-string ,target (get-output-stream-string ,var)))))
      ;; The body may start with declarations (of VAR too).
      `(let ((,var (make-string-output-stream)))
         ,@body
         (get-output-stream-string ,var))))

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

;;; READ-SEQUENCE and WRITE-SEQUENCE, over the character operations (every
;;; stream is a character stream).

(defun read-sequence (sequence stream &key (start 0) end)
  "Read characters from STREAM into SEQUENCE from START below END (or its
length); returns the index of the first element not filled, less than END
only when the stream ended."
  (let ((end (or end (length sequence))))
    (unless (<= 0 start end (length sequence))
      (error 'type-error :datum start :expected-type `(integer 0 ,end)))
    (do ((i start (1+ i)))
        ((>= i end) i)
      (let ((c (read-char stream nil :eof)))
        (when (eq c :eof) (return i))
        (setf (elt sequence i) c)))))

(defun write-sequence (sequence stream &key (start 0) end)
  "Write the characters of SEQUENCE from START below END to STREAM; returns SEQUENCE."
  (let ((end (or end (length sequence))))
    (unless (<= 0 start end (length sequence))
      (error 'type-error :datum start :expected-type `(integer 0 ,end)))
    (if (stringp sequence)
        (write-string sequence stream :start start :end end)
        (do ((i start (1+ i))) ((>= i end)) (write-char (elt sequence i) stream)))
    sequence))
