;;;; Gray streams: binary input and output streams of the program's own.

(defclass octet-sink (fundamental-binary-output-stream)
  ((bytes :initform nil :accessor bytes)))
(defmethod stream-write-byte ((s octet-sink) byte)
  (push byte (bytes s))
  byte)
(defmethod stream-element-type ((s octet-sink)) '(unsigned-byte 8))

(defclass octet-source (fundamental-binary-input-stream)
  ((bytes :initarg :bytes :accessor bytes)))
(defmethod stream-read-byte ((s octet-source))
  (if (bytes s) (pop (bytes s)) :eof))
(defmethod stream-element-type ((s octet-source)) '(unsigned-byte 8))

(let ((out (make-instance 'octet-sink)))
  (print (write-byte 7 out))
  (write-sequence #(1 2 3 4) out :start 1)
  (write-sequence '(9 8) out)
  (print (reverse (bytes out)))
  (print (list (stream-element-type out) (output-stream-p out) (input-stream-p out))))

(let ((in (make-instance 'octet-source :bytes '(10 20 30 40 50)))
      (v (make-array 3 :initial-element 0)))
  (print (list (read-byte in) (read-sequence v in) v (read-sequence v in) v
               (read-byte in nil :eof)
               (handler-case (read-byte in) (end-of-file () :end-of-file)))))

;; Character operations on a binary stream have no method.
(print (handler-case (read-char (make-instance 'octet-source :bytes '(65))) (error () :error)))
