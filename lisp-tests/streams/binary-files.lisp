;;;; Binary and bidirectional files: READ-SEQUENCE and WRITE-SEQUENCE on
;;;; (UNSIGNED-BYTE 8) files, FILE-LENGTH and FILE-POSITION, :DIRECTION :IO,
;;;; element types given as DEFTYPE names, STREAM-ELEMENT-TYPE and
;;;; STREAM-EXTERNAL-FORMAT, FILE-STRING-LENGTH, and the WITH- macros with
;;;; declarations.

(deftype octet () '(unsigned-byte 8))
(defvar *bin* "/tmp/mprof-binary-files-test.bin")
(defvar *txt* "/tmp/mprof-binary-files-test.txt")

(with-open-file (out *bin* :direction :output :if-exists :supersede :element-type 'octet)
  (write-sequence #(0 1 2 3 250 251 252) out :start 1)
  (write-byte 255 out)
  (print (list (stream-element-type out) (stream-external-format out) (file-position out))))

(with-open-file (in *bin* :element-type '(unsigned-byte 8))
  (declare (ignorable in))
  (let ((v (make-array 5 :initial-element 0)) (w (make-array 10 :initial-element nil)))
    (print (list (file-length in) (read-sequence v in) v (file-position in)
                 (read-sequence w in :start 2) w (read-byte in nil :eof)))
    (file-position in 2)
    (print (list (read-byte in) (file-position in)))))

(with-open-file (in *bin* :element-type '(signed-byte 8))
  (print (list (stream-element-type in) (read-byte in) (progn (file-position in 4) (read-byte in)))))

;; :IO: read and write the same file.
(with-open-file (s *bin* :direction :io :element-type 'octet :if-exists :overwrite)
  (print (list (read-byte s) (read-byte s) (input-stream-p s) (output-stream-p s)))
  (write-byte 99 s)
  (file-position s :end)
  (write-sequence #(7 7) s)
  (print (file-position s)))
(with-open-file (in *bin* :element-type 'octet)
  (let ((v (make-array 10)))
    (print (list (file-length in) (read-sequence v in) v))))

(with-open-file (s *txt* :direction :io :if-exists :supersede :if-does-not-exist :create)
  (write-string "hello world" s)
  (file-position s 6)
  (print (list (read-line s) (stream-element-type s))))
(with-open-file (s *txt* :direction :io :if-exists :append)
  (write-line "!" s))
(with-open-file (in *txt*)
  (print (list (read-line in) (stream-external-format in) (file-string-length in "abc"))))
(print (handler-case (with-open-file (s *txt* :direction :io) s) (file-error () :file-error)))

;; Character operations on binary files and the other way round are errors.
(print (list (handler-case (with-open-file (in *bin* :element-type 'octet) (read-char in))
               (error () :error))
             (handler-case (with-open-file (in *txt*) (read-byte in)) (error () :error))
             (handler-case (with-open-file (out *bin* :direction :output :if-exists :supersede
                                                      :element-type 'octet)
                             (write-byte 256 out))
               (type-error () :type-error))))

(print (with-input-from-string (s "abc") (declare (ignorable s)) (read-char s)))
(print (with-output-to-string (s) (declare (ignorable s)) (write-string "out" s)))
(print (with-open-stream (s (make-string-input-stream "x y")) (declare (ignorable s)) (read s)))
(print (read-delimited-list #\) (make-string-input-stream "1 2 (3) 4) 5")))

;; The file of the WRITE-BYTE that failed was deleted: WITH-OPEN-FILE closed it
;; with :ABORT T.
(print (probe-file *bin*))
(delete-file *txt*)

;; Integers wider than a byte, and the defaults of :IF-DOES-NOT-EXIST.
(dolist (type '((unsigned-byte 16) (signed-byte 12) (unsigned-byte 64) (signed-byte 100) (mod 4000)))
  (let ((values (list 0 1 (1- (expt 2 11)) (if (member (car type) '(signed-byte)) -5 77))))
    (with-open-file (out *bin* :direction :output :if-exists :supersede :element-type type)
      (dolist (v values) (write-byte v out)))
    (with-open-file (in *bin* :element-type type)
      (print (list type (subtypep type (stream-element-type in)) (file-length in)
                   (loop for b = (read-byte in nil :eof) until (eq b :eof) collect b))))))
(print (list (open "/tmp/mprof-no-such-file.txt" :direction :probe)
             (handler-case (open "/tmp/mprof-no-such-file.txt" :direction :output :if-exists :append)
               (file-error () :file-error))))
(delete-file *bin*)
