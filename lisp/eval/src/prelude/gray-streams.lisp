;;;; The prelude: Gray streams, as SBCL's SB-GRAY and CLISP's GRAY packages
;;;; have them, in the package MPROF-GRAY (nickname GRAY): the FUNDAMENTAL-*
;;;; classes, the STREAM-* generic functions with the Gray proposal's default
;;;; methods (and methods on the implementation's streams, which call the CL
;;;; functions), and CLOSE, OPEN-STREAM-P, INPUT-STREAM-P, OUTPUT-STREAM-P,
;;;; INTERACTIVE-STREAM-P and STREAM-ELEMENT-TYPE as generic functions.
;;;;
;;;; How the CL stream functions reach a Gray stream: they are builtins, which
;;;; raise Raise::Gray when the stream they are given (directly, through a
;;;; designator or through composite streams) is a Gray stream, before doing
;;;; anything; the VM then calls SYS::%GRAY-<name> here with the same
;;;; arguments (vm/call.rs). So the common case pays one type check. A
;;;; function here calls the Gray generic function on a Gray stream, or goes
;;;; one link down a composite stream and calls the CL function again.
;;;; Printing functions and FORMAT print into a string stream that starts at
;;;; the Gray stream's column (STREAM-LINE-COLUMN; NIL makes ~T write two
;;;; spaces and ~& a newline, as SBCL's) and hand the text to
;;;; STREAM-WRITE-STRING.
;;;;
;;;; Invariant: the Gray generic functions have methods only for Gray
;;;; streams, so a call here never comes back through a CL function on the
;;;; same stream unless a program's method does so; such a method ends in a
;;;; stack-exhausted condition, as any runaway Lisp recursion does.

(defpackage "MPROF-GRAY"
  (:use "COMMON-LISP")
  (:nicknames "GRAY")
  (:export "FUNDAMENTAL-STREAM" "FUNDAMENTAL-INPUT-STREAM" "FUNDAMENTAL-OUTPUT-STREAM"
           "FUNDAMENTAL-CHARACTER-STREAM" "FUNDAMENTAL-BINARY-STREAM"
           "FUNDAMENTAL-CHARACTER-INPUT-STREAM" "FUNDAMENTAL-CHARACTER-OUTPUT-STREAM"
           "FUNDAMENTAL-BINARY-INPUT-STREAM" "FUNDAMENTAL-BINARY-OUTPUT-STREAM"
           "STREAM-READ-CHAR" "STREAM-UNREAD-CHAR" "STREAM-READ-CHAR-NO-HANG"
           "STREAM-PEEK-CHAR" "STREAM-LISTEN" "STREAM-READ-LINE" "STREAM-CLEAR-INPUT"
           "STREAM-WRITE-CHAR" "STREAM-LINE-COLUMN" "STREAM-START-LINE-P"
           "STREAM-WRITE-STRING" "STREAM-TERPRI" "STREAM-FRESH-LINE"
           "STREAM-FINISH-OUTPUT" "STREAM-FORCE-OUTPUT" "STREAM-CLEAR-OUTPUT"
           "STREAM-ADVANCE-TO-COLUMN" "STREAM-READ-BYTE" "STREAM-WRITE-BYTE"
           "STREAM-READ-SEQUENCE" "STREAM-WRITE-SEQUENCE" "STREAM-FILE-POSITION"
           "STREAM-LINE-LENGTH"))

(in-package "MPROF-GRAY")

;;; ---- the classes

(defclass fundamental-stream (standard-object stream)
  ((sys::open-p :initform t))
  (:documentation "The root of Gray streams."))
(defclass fundamental-input-stream (fundamental-stream) ())
(defclass fundamental-output-stream (fundamental-stream) ())
(defclass fundamental-character-stream (fundamental-stream) ())
(defclass fundamental-binary-stream (fundamental-stream) ())
(defclass fundamental-character-input-stream (fundamental-input-stream fundamental-character-stream) ())
(defclass fundamental-character-output-stream (fundamental-output-stream fundamental-character-stream) ())
(defclass fundamental-binary-input-stream (fundamental-input-stream fundamental-binary-stream) ())
(defclass fundamental-binary-output-stream (fundamental-output-stream fundamental-binary-stream) ())

(defmacro sys::%defmethod-plain (name ((var class) &rest more) &body body)
  "DEFMETHOD NAME ((VAR CLASS) . MORE) for a method that calls no next method
and specializes only its first argument: the method function without
DEFMETHOD's local macros, which would cost start-up time to compile (the
methods here are part of the prelude)."
  (let ((lambda-list (cons var more)))
    `(sys::%defmethod ',name nil (list ',class) ',lambda-list
                      (sys::named-lambda (method ,name (,class)) (sys::.next. ,@lambda-list)
                        (declare (ignorable sys::.next.
                                            ,@(remove-if (lambda (a) (member a lambda-list-keywords))
                                                         (mapcar (lambda (a) (if (consp a) (car a) a)) lambda-list))))
                        (block ,name ,@body))
                      nil)))

(defun sys::%gray-stream-p (object)
  (typep object 'fundamental-stream))

(defun sys::%no-gray-method (function stream &rest args)
  (apply #'no-applicable-method (fdefinition function) stream args))

(defun sys::%not-a-stream (object)
  (error 'type-error :datum object :expected-type 'stream))

(defun sys::%synonym-target (stream)
  (symbol-value (synonym-stream-symbol stream)))

;;; ---- CL's stream functions that are generic functions

(defgeneric close (stream &key abort))
(sys::%defmethod-plain close ((stream stream) &key abort) (sys::%close stream :abort abort))
(sys::%defmethod-plain close ((stream fundamental-stream) &key abort)
  (setf (slot-value stream 'sys::open-p) nil)
  t)
(sys::%defmethod-plain close ((object t) &key abort)
  (sys::%not-a-stream object))

(defgeneric open-stream-p (stream))
(sys::%defmethod-plain open-stream-p ((stream stream)) (sys::%open-stream-p stream))
(sys::%defmethod-plain open-stream-p ((stream fundamental-stream)) (slot-value stream 'sys::open-p))
(sys::%defmethod-plain open-stream-p ((object t)) (sys::%not-a-stream object))

(defgeneric input-stream-p (stream))
(sys::%defmethod-plain input-stream-p ((stream stream)) (sys::%input-stream-p stream))
(sys::%defmethod-plain input-stream-p ((stream fundamental-stream)) nil)
(sys::%defmethod-plain input-stream-p ((stream fundamental-input-stream)) t)
(sys::%defmethod-plain input-stream-p ((object t)) (sys::%not-a-stream object))

(defgeneric output-stream-p (stream))
(sys::%defmethod-plain output-stream-p ((stream stream)) (sys::%output-stream-p stream))
(sys::%defmethod-plain output-stream-p ((stream fundamental-stream)) nil)
(sys::%defmethod-plain output-stream-p ((stream fundamental-output-stream)) t)
(sys::%defmethod-plain output-stream-p ((object t)) (sys::%not-a-stream object))

;; Through a synonym stream to a Gray stream (the builtins raise for it).
(defun sys::%gray-%input-stream-p (stream) (input-stream-p (sys::%synonym-target stream)))
(defun sys::%gray-%output-stream-p (stream) (output-stream-p (sys::%synonym-target stream)))

(defgeneric interactive-stream-p (stream))
(sys::%defmethod-plain interactive-stream-p ((stream stream))
  (case (sys::%stream-kind stream)
    (:synonym (interactive-stream-p (sys::%synonym-target stream)))
    (:two-way (interactive-stream-p (two-way-stream-input-stream stream)))
    (t (sys::%interactive-stream-p stream))))
(sys::%defmethod-plain interactive-stream-p ((stream fundamental-stream)) nil)
(sys::%defmethod-plain interactive-stream-p ((object t)) (sys::%not-a-stream object))

(defgeneric stream-element-type (stream))
(sys::%defmethod-plain stream-element-type ((stream stream))
  (flet ((both (in out)
           (let ((a (stream-element-type in)) (b (stream-element-type out)))
             (if (equal a b) a `(and ,a ,b)))))
    (case (sys::%stream-kind stream)
      (:synonym (stream-element-type (sys::%synonym-target stream)))
      (:two-way (both (two-way-stream-input-stream stream) (two-way-stream-output-stream stream)))
      (:echo (both (echo-stream-input-stream stream) (echo-stream-output-stream stream)))
      (:broadcast (let ((l (broadcast-stream-streams stream)))
                    (if l (stream-element-type (car (last l))) t)))
      (:concatenated (let ((l (concatenated-stream-streams stream)))
                       (if l (stream-element-type (car l)) nil)))
      (t (sys::%stream-element-type stream)))))
(sys::%defmethod-plain stream-element-type ((stream fundamental-stream))
  (sys::%no-gray-method 'stream-element-type stream))
(sys::%defmethod-plain stream-element-type ((stream fundamental-character-stream)) 'character)
(sys::%defmethod-plain stream-element-type ((object t)) (sys::%not-a-stream object))

(defun stream-external-format (stream)
  (case (sys::%stream-kind stream)
    ((nil) (sys::%not-a-stream stream))
    (:gray (error "~S is a Gray stream: it has no external format." stream))
    (:synonym (stream-external-format (sys::%synonym-target stream)))
    (:two-way (stream-external-format (two-way-stream-output-stream stream)))
    (:echo (stream-external-format (echo-stream-output-stream stream)))
    (:broadcast (let ((l (broadcast-stream-streams stream)))
                  (if l (stream-external-format (car (last l))) :default)))
    (:concatenated (let ((l (concatenated-stream-streams stream)))
                     (if l (stream-external-format (car l)) :default)))
    (t (sys::%stream-external-format stream))))

;;; ---- the Gray generic functions, their defaults, and their methods on
;;; ---- the implementation's streams

(defmacro sys::%define-gray-generic (name lambda-list &rest defaults)
  "Define the generic function NAME with the default methods DEFAULTS, each
(class . body). (SBCL also has methods on its own streams, which call the CL
functions; nothing needs them, and they would cost start-up time.)"
  `(progn
     (defgeneric ,name ,(mapcar (lambda (a) (if (consp a) (car a) a)) lambda-list))
     ,@(mapcar (lambda (d)
                 `(sys::%defmethod-plain ,name ((stream ,(car d)) ,@(cdr lambda-list)) ,@(cdr d)))
               defaults)))

(sys::%define-gray-generic stream-read-char (stream))

(sys::%define-gray-generic stream-unread-char (stream character))

(sys::%define-gray-generic stream-read-char-no-hang (stream)
  (fundamental-character-input-stream (stream-read-char stream)))

(sys::%define-gray-generic stream-peek-char (stream)
  (fundamental-character-input-stream
   (let ((char (stream-read-char stream)))
     (unless (eq char :eof) (stream-unread-char stream char))
     char)))

(sys::%define-gray-generic stream-listen (stream)
  (fundamental-character-input-stream
   (let ((char (stream-read-char-no-hang stream)))
     (when (characterp char)
       (stream-unread-char stream char)
       t))))

(sys::%define-gray-generic stream-read-line (stream)
  (fundamental-character-input-stream
   (let ((out (make-string-output-stream)))
     (loop (let ((c (stream-read-char stream)))
             (cond ((eq c :eof) (return (values (get-output-stream-string out) t)))
                   ((char= c #\Newline) (return (values (get-output-stream-string out) nil)))
                   (t (write-char c out))))))))

(sys::%define-gray-generic stream-clear-input (stream)
  (fundamental-input-stream nil))

(sys::%define-gray-generic stream-write-char (stream character))

(sys::%define-gray-generic stream-line-column (stream)
  (fundamental-character-output-stream nil))

(sys::%define-gray-generic stream-line-length (stream)
  (fundamental-character-output-stream nil))

(sys::%define-gray-generic stream-start-line-p (stream)
  (fundamental-character-output-stream (eql (stream-line-column stream) 0)))

(sys::%define-gray-generic stream-write-string (stream string &optional (start 0) end)
  (fundamental-character-output-stream
   (let ((end (or end (length string))))
     (do ((i start (1+ i)))
         ((>= i end) string)
       (stream-write-char stream (char string i))))))

(sys::%define-gray-generic stream-terpri (stream)
  (fundamental-character-output-stream (stream-write-char stream #\Newline) nil))

(sys::%define-gray-generic stream-fresh-line (stream)
  (fundamental-character-output-stream
   (unless (stream-start-line-p stream)
     (stream-terpri stream)
     t)))

(sys::%define-gray-generic stream-finish-output (stream)
  (fundamental-output-stream nil))

(sys::%define-gray-generic stream-force-output (stream)
  (fundamental-output-stream nil))

(sys::%define-gray-generic stream-clear-output (stream)
  (fundamental-output-stream nil))

(sys::%define-gray-generic stream-advance-to-column (stream column)
  (fundamental-character-output-stream
   (let ((current (stream-line-column stream)))
     (when current
       (dotimes (i (- column current))
         (stream-write-char stream #\Space))
       t))))

(sys::%define-gray-generic stream-read-byte (stream))

(sys::%define-gray-generic stream-write-byte (stream integer))

(sys::%define-gray-generic stream-read-sequence (stream sequence &optional (start 0) end)
  (fundamental-input-stream
   (let ((end (or end (length sequence)))
         (binary (not (typep stream 'fundamental-character-stream))))
     (do ((i start (1+ i)))
         ((>= i end) i)
       (let ((e (if binary (stream-read-byte stream) (stream-read-char stream))))
         (when (eq e :eof) (return i))
         (setf (elt sequence i) e))))))

(sys::%define-gray-generic stream-write-sequence (stream sequence &optional (start 0) end)
  (fundamental-output-stream
   (let ((end (or end (length sequence))))
     (do ((i start (1+ i)))
         ((>= i end) sequence)
       (let ((e (elt sequence i)))
         (if (characterp e) (stream-write-char stream e) (stream-write-byte stream e)))))))

(sys::%define-gray-generic stream-file-position (stream &optional position)
  (fundamental-stream nil))

;;; ---- READ-SEQUENCE and WRITE-SEQUENCE

(defun sys::%binary-stream-p (stream)
  (let ((type (stream-element-type stream)))
    (and (consp type) (member (car type) '(unsigned-byte signed-byte)) t)))

(defun read-sequence (sequence stream &key (start 0) end)
  "Read elements from STREAM into SEQUENCE from START below END (or its
length); returns the index of the first element not filled, less than END
only when the stream ended."
  (let ((end (sys::%check-sequence-bounds sequence start end)))
    (cond ((typep stream 'fundamental-stream)
           (stream-read-sequence stream sequence start end))
          ((sys::%binary-stream-p stream)
           (or (and (vectorp sequence) (sys::%read-bytes stream sequence start end))
               (do ((i start (1+ i)))
                   ((>= i end) i)
                 (let ((b (read-byte stream nil :eof)))
                   (when (eq b :eof) (return i))
                   (setf (elt sequence i) b)))))
          (t
           (do ((i start (1+ i)))
               ((>= i end) i)
             (let ((c (read-char stream nil :eof)))
               (when (eq c :eof) (return i))
               (setf (elt sequence i) c)))))))

(defun write-sequence (sequence stream &key (start 0) end)
  "Write the elements of SEQUENCE from START below END to STREAM; returns SEQUENCE."
  (let ((end (sys::%check-sequence-bounds sequence start end)))
    (cond ((typep stream 'fundamental-stream)
           (stream-write-sequence stream sequence start end))
          ((stringp sequence) (write-string sequence stream :start start :end end))
          ((sys::%binary-stream-p stream)
           (unless (and (vectorp sequence) (sys::%write-bytes stream sequence start end))
             (do ((i start (1+ i))) ((>= i end)) (write-byte (elt sequence i) stream))))
          (t (do ((i start (1+ i))) ((>= i end)) (write-char (elt sequence i) stream))))
    sequence))

;;; ---- the CL functions on Gray streams and composite streams reaching
;;; ---- them (called by the VM in place of the builtins, see above)

(defun sys::%out-designator (designator)
  (cond ((null designator) *standard-output*)
        ((eq designator t) *terminal-io*)
        (t designator)))

(defun sys::%output-components (stream)
  "The streams output to the composite STREAM goes to, one link down."
  (case (sys::%stream-kind stream)
    (:synonym (list (sys::%synonym-target stream)))
    (:two-way (list (two-way-stream-output-stream stream)))
    (:echo (list (echo-stream-output-stream stream)))
    (:broadcast (broadcast-stream-streams stream))
    ((nil) (sys::%not-a-stream stream))
    (t (list stream))))

(defun sys::%gray-output (designator gray-function function)
  "Call GRAY-FUNCTION on the Gray stream DESIGNATOR stands for, or FUNCTION
on each stream one link down the composite stream it stands for; the last value."
  (let ((stream (sys::%out-designator designator)))
    (if (typep stream 'fundamental-stream)
        (funcall gray-function stream)
        (let ((result nil))
          (dolist (s (sys::%output-components stream) result)
            (setq result (funcall function s)))))))

(defun sys::%gray-write-char (character &optional stream)
  (sys::%gray-output stream
                     (lambda (s) (stream-write-char s character))
                     (lambda (s) (write-char character s)))
  character)

(defun sys::%gray-write-string (string &optional stream &key (start 0) end)
  (sys::%gray-output stream
                     (lambda (s) (stream-write-string s string start end))
                     (lambda (s) (write-string string s :start start :end end)))
  string)

(defun sys::%gray-write-line (string &optional stream &key (start 0) end)
  (sys::%gray-output stream
                     (lambda (s) (stream-write-string s string start end) (stream-terpri s))
                     (lambda (s) (write-line string s :start start :end end)))
  string)

(defun sys::%gray-terpri (&optional stream)
  (sys::%gray-output stream #'stream-terpri #'terpri)
  nil)

(defun sys::%gray-fresh-line (&optional stream)
  (sys::%gray-output stream #'stream-fresh-line #'fresh-line))

(defun sys::%gray-finish-output (&optional stream)
  (sys::%gray-output stream #'stream-finish-output #'finish-output)
  nil)

(defun sys::%gray-force-output (&optional stream)
  (sys::%gray-output stream #'stream-force-output #'force-output)
  nil)

(defun sys::%gray-clear-output (&optional stream)
  (sys::%gray-output stream #'stream-clear-output #'clear-output)
  nil)

(defun sys::%gray-write-byte (integer stream)
  (sys::%gray-output stream
                     (lambda (s) (stream-write-byte s integer))
                     (lambda (s) (write-byte integer s)))
  integer)

(defun sys::%gray-column (stream)
  "The column output to STREAM starts at (NIL when unknown)."
  (if (typep stream 'fundamental-stream)
      (stream-line-column stream)
      (sys::%stream-column stream)))

(defun sys::%text-at-column (column function)
  "The text FUNCTION writes to a string stream starting at COLUMN (NIL: unknown)."
  (let ((out (make-string-output-stream)))
    (sys::%set-stream-column out column)
    (funcall function out)
    (get-output-stream-string out)))

(defun sys::%gray-print-with (designator function)
  "Print with FUNCTION (of a stream) to what DESIGNATOR stands for: to a Gray
stream as one string, starting at its column when pretty printing."
  (sys::%gray-output designator
                     (lambda (s)
                       (stream-write-string
                        s (sys::%text-at-column (if *print-pretty* (stream-line-column s) 0) function)))
                     function))

(defun sys::%gray-prin1 (object &optional stream)
  (sys::%gray-print-with stream (lambda (s) (prin1 object s)))
  object)

(defun sys::%gray-princ (object &optional stream)
  (sys::%gray-print-with stream (lambda (s) (princ object s)))
  object)

(defun sys::%gray-print (object &optional stream)
  (sys::%gray-output stream
                     (lambda (s)
                       (stream-terpri s)
                       (stream-write-string
                        s (sys::%text-at-column 0 (lambda (o) (prin1 object o))))
                       (stream-write-char s #\Space))
                     (lambda (s) (print object s)))
  object)

(defun sys::%gray-write (object &rest keys &key stream &allow-other-keys)
  (sys::%gray-print-with stream (lambda (s) (apply #'write object :stream s keys)))
  object)

(defun sys::%format-needs-column-p (control)
  "Whether the output of FORMAT CONTROL can depend on the column it starts
at (~T, ~&, ~<...~>, ~_, ~I)."
  (if (not (stringp control))
      t
      (let ((n (length control)) (i 0))
        (loop
          (when (>= i n) (return nil))
          (if (char/= (char control i) #\~)
              (incf i)
              (let ((j (1+ i)))
                (loop (when (>= j n) (return))
                      (let ((c (char control j)))
                        (cond ((char= c #\') (incf j 2))
                              ((or (digit-char-p c) (member c '(#\, #\# #\v #\V #\: #\@ #\+ #\-))) (incf j))
                              (t (return)))))
                (when (and (< j n) (member (char-upcase (char control j)) '(#\T #\& #\< #\_ #\I)))
                  (return t))
                (setq i (1+ j))))))))

(defun sys::%gray-format (destination control &rest args)
  (let ((stream (if (eq destination t) *standard-output* destination)))
    (if (typep stream 'fundamental-stream)
        (let ((column (if (sys::%format-needs-column-p control) (stream-line-column stream) 0)))
          (stream-write-string stream (sys::%text-at-column column (lambda (out) (apply #'format out control args)))))
        (dolist (s (sys::%output-components stream))
          (apply #'format s control args)))
    nil))

;; The pretty printer's operations do nothing on a stream that is not a pretty stream.
(defun sys::%gray-pprint-newline (kind &optional stream)
  (declare (ignore kind stream))
  nil)
(defun sys::%gray-pprint-indent (relative-to n &optional stream)
  (declare (ignore relative-to n stream))
  nil)
(defun sys::%gray-pprint-tab (kind colnum colinc &optional stream)
  (declare (ignore kind colnum colinc stream))
  nil)

;;; Input.

(defun sys::%gray-eof (stream eof-error-p eof-value)
  (if eof-error-p
      (error 'end-of-file :stream stream)
      eof-value))

(defun sys::%composite-read (stream reader eof-error-p eof-value)
  "Read an element of the composite STREAM with READER (a function of a
stream, eof-error-p and eof-value: READ-CHAR, READ-BYTE...), one link down."
  (case (sys::%stream-kind stream)
    (:synonym (funcall reader (sys::%synonym-target stream) eof-error-p eof-value))
    (:two-way (funcall reader (two-way-stream-input-stream stream) eof-error-p eof-value))
    (:echo
     (or (sys::%echo-pop-unread stream)
         (let ((e (funcall reader (echo-stream-input-stream stream) nil stream)))
           (cond ((eq e stream) (sys::%gray-eof stream eof-error-p eof-value))
                 ((characterp e) (write-char e (echo-stream-output-stream stream)) e)
                 ((integerp e) (write-byte e (echo-stream-output-stream stream)) e)
                 (t e)))))
    (:concatenated
     (loop
       (let ((streams (concatenated-stream-streams stream)))
         (when (null streams)
           (return (sys::%gray-eof stream eof-error-p eof-value)))
         (let ((e (funcall reader (car streams) nil stream)))
           (if (eq e stream)
               (sys::%concatenated-pop stream)
               (return e))))))
    ((nil) (sys::%not-a-stream stream))
    (t (funcall reader stream eof-error-p eof-value))))

(defun sys::%gray-read-char (&optional stream (eof-error-p t) eof-value recursive-p)
  (declare (ignore recursive-p))
  (let ((s (sys::%input-stream stream)))
    (if (typep s 'fundamental-stream)
        (let ((c (stream-read-char s)))
          (if (eq c :eof) (sys::%gray-eof s eof-error-p eof-value) c))
        (sys::%composite-read s (lambda (in e v) (read-char in e v)) eof-error-p eof-value))))

(defun sys::%gray-read-char-no-hang (&optional stream (eof-error-p t) eof-value recursive-p)
  (declare (ignore recursive-p))
  (let ((s (sys::%input-stream stream)))
    (if (typep s 'fundamental-stream)
        (let ((c (stream-read-char-no-hang s)))
          (if (eq c :eof) (sys::%gray-eof s eof-error-p eof-value) c))
        (sys::%composite-read s (lambda (in e v) (read-char-no-hang in e v)) eof-error-p eof-value))))

(defun sys::%gray-read-byte (stream &optional (eof-error-p t) eof-value)
  (if (typep stream 'fundamental-stream)
      (let ((b (stream-read-byte stream)))
        (if (eq b :eof) (sys::%gray-eof stream eof-error-p eof-value) b))
      (sys::%composite-read stream (lambda (in e v) (read-byte in e v)) eof-error-p eof-value)))

(defun sys::%gray-peek-char (&optional peek-type stream (eof-error-p t) eof-value recursive-p)
  (declare (ignore recursive-p))
  (let ((s (sys::%input-stream stream)))
    (cond ((and (null peek-type) (typep s 'fundamental-stream))
           (let ((c (stream-peek-char s)))
             (if (eq c :eof) (sys::%gray-eof s eof-error-p eof-value) c)))
          ((eq (sys::%stream-kind s) :synonym)
           (peek-char peek-type (sys::%synonym-target s) eof-error-p eof-value))
          ((eq (sys::%stream-kind s) :two-way)
           (peek-char peek-type (two-way-stream-input-stream s) eof-error-p eof-value))
          (t
           ;; Read up to the character wanted and give it back.
           (loop
             (let ((c (read-char s nil s)))
               (cond ((eq c s) (return (sys::%gray-eof s eof-error-p eof-value)))
                     ((cond ((null peek-type) t)
                            ((eq peek-type t) (not (sys::%whitespace-p c)))
                            (t (char= c peek-type)))
                      (unread-char c s)
                      (return c)))))))))

(defun sys::%gray-unread-char (character &optional stream)
  (let ((s (sys::%input-stream stream)))
    (case (sys::%stream-kind s)
      (:gray (stream-unread-char s character))
      (:synonym (unread-char character (sys::%synonym-target s)))
      (:two-way (unread-char character (two-way-stream-input-stream s)))
      (:echo (sys::%echo-push-unread s character))
      (:concatenated (let ((l (concatenated-stream-streams s)))
                       (when l (unread-char character (car l)))))
      ((nil) (sys::%not-a-stream s)))
    nil))

(defun sys::%gray-read-line (&optional stream (eof-error-p t) eof-value recursive-p)
  (declare (ignore recursive-p))
  (let ((s (sys::%input-stream stream)))
    (case (sys::%stream-kind s)
      (:gray
       (multiple-value-bind (line missing-newline-p) (stream-read-line s)
         (if (and missing-newline-p (zerop (length line)))
             (values (sys::%gray-eof s eof-error-p eof-value) t)
             (values line missing-newline-p))))
      (:synonym (read-line (sys::%synonym-target s) eof-error-p eof-value))
      (:two-way (read-line (two-way-stream-input-stream s) eof-error-p eof-value))
      (t
       (let ((out (make-string-output-stream)) (any nil))
         (loop
           (let ((c (read-char s nil s)))
             (cond ((eq c s)
                    (return (if any
                                (values (get-output-stream-string out) t)
                                (values (sys::%gray-eof s eof-error-p eof-value) t))))
                   ((char= c #\Newline) (return (values (get-output-stream-string out) nil)))
                   (t (setq any t) (write-char c out))))))))))

(defun sys::%gray-listen (&optional stream)
  (let ((s (sys::%input-stream stream)))
    (case (sys::%stream-kind s)
      (:gray (stream-listen s))
      (:synonym (listen (sys::%synonym-target s)))
      (:two-way (listen (two-way-stream-input-stream s)))
      (:echo (let ((c (sys::%echo-pop-unread s)))
               (if c
                   (progn (sys::%echo-push-unread s c) t)
                   (listen (echo-stream-input-stream s)))))
      (:concatenated (let ((l (concatenated-stream-streams s)))
                       (and l (listen (car l)))))
      (t (listen s)))))

(defun sys::%gray-clear-input (&optional stream)
  (let ((s (sys::%input-stream stream)))
    (case (sys::%stream-kind s)
      (:gray (stream-clear-input s))
      (:synonym (clear-input (sys::%synonym-target s)))
      (:two-way (clear-input (two-way-stream-input-stream s)))
      (:echo (clear-input (echo-stream-input-stream s)))
      (:concatenated (let ((l (concatenated-stream-streams s)))
                       (when l (clear-input (car l))))))
    nil))

;; READ on a Gray stream, an echo or concatenated stream, or a file held in
;; memory: the reader written in Lisp, through READ-CHAR.
(defun sys::%gray-%read (&optional stream (eof-error-p t) eof-value recursive-p)
  (sys::%lisp-read (sys::%input-stream stream) eof-error-p eof-value recursive-p))

(defun sys::%gray-%read-preserving-whitespace (&optional stream (eof-error-p t) eof-value recursive-p)
  (sys::%lisp-read (sys::%input-stream stream) eof-error-p eof-value recursive-p t))

(defun sys::%gray-file-position (stream &optional (position nil position-p))
  (case (sys::%stream-kind stream)
    (:gray (if position-p (stream-file-position stream position) (stream-file-position stream)))
    (:synonym (if position-p
                  (file-position (sys::%synonym-target stream) position)
                  (file-position (sys::%synonym-target stream))))
    (:broadcast (let ((l (last (broadcast-stream-streams stream))))
                  (cond ((null l) (if position-p nil 0))
                        (position-p (file-position (car l) position))
                        (t (file-position (car l))))))
    ((nil) (sys::%not-a-stream stream))
    (t nil)))

;; As SBCL's CL-USER uses SB-GRAY, so the Gray names are at hand in programs.
(use-package "MPROF-GRAY" "COMMON-LISP-USER")

(in-package "MPROF-SYSTEM")
