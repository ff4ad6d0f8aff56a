;;;; Gray streams as CLOS classes: the standard stream generic functions
;;;; (CLOSE, OPEN-STREAM-P...) take methods, STREAM is a specializer that
;;;; matches Gray and the implementation's streams, and the stream types.

(defclass counting-stream (fundamental-character-output-stream)
  ((count :initform 0 :accessor char-count)
   (closed :initform nil :accessor closed)))
(defmethod stream-write-char ((s counting-stream) c)
  (declare (ignore c))
  (incf (char-count s)))
(defmethod close ((s counting-stream) &key abort)
  (declare (ignore abort))
  (setf (closed s) t)
  (call-next-method))

(defgeneric describe-stream (s))
(defmethod describe-stream ((s stream)) 'a-stream)
(defmethod describe-stream ((s fundamental-stream)) (list 'gray (call-next-method)))
(defmethod describe-stream ((s string-stream)) (list 'string (call-next-method)))
(defmethod describe-stream ((s t)) 'not-a-stream)

(let ((s (make-instance 'counting-stream)))
  (format s "hello ~a" 'world)
  (print (char-count s))
  (print (list (describe-stream s) (describe-stream (make-string-output-stream))
               (describe-stream *standard-output*) (describe-stream 3)))
  (print (list (streamp s) (typep s 'stream) (typep s 'fundamental-stream)
               (typep s 'fundamental-input-stream) (typep s 'string-stream)
               (subtypep 'counting-stream 'stream)))
  (print (list (close s) (closed s) (open-stream-p s)))
  (with-open-stream (s2 (make-instance 'counting-stream))
    (write-string "abc" s2)
    (print (char-count s2))))

;; A method that writes to its own stream recurses until the stack is
;; exhausted: a Lisp condition, as any runaway recursion.
(defclass loop-stream (fundamental-character-output-stream) ())
(defmethod stream-write-char ((s loop-stream) c) (write-char c s))
(print (handler-case (write-char #\a (make-instance 'loop-stream))
         (storage-condition () :stack-exhausted)))

;; Composite streams over Gray streams.
(let* ((a (make-instance 'counting-stream)) (b (make-instance 'counting-stream))
       (bs (make-broadcast-stream a b (make-string-output-stream))))
  (format bs "12345")
  (write-char #\6 (make-two-way-stream *standard-input* a))
  (print (list (char-count a) (char-count b))))
