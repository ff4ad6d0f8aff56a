;; Hash table, array and stream workloads, timed the same way in mprof-lisp
;; and SBCL. Each line is "NAME MICROSECONDS" (internal time units are
;; microseconds in both); bench/hash/run.sh turns two runs into ratios.
(defvar *n* 200000)
(defmacro timed (name &body body)
  `(let ((start (get-internal-real-time)))
     ,@body
     (format t "~a ~d~%" ,name (- (get-internal-real-time) start))))

(defvar *keys* (let ((v (make-array *n*))) (dotimes (i *n* v) (setf (aref v i) (format nil "key~d" i)))))

(timed "puthash-eql"
  (let ((h (make-hash-table)))
    (dotimes (i *n*) (setf (gethash i h) i))))
(timed "gethash-eql"
  (let ((h (make-hash-table)) (sum 0))
    (dotimes (i *n*) (setf (gethash i h) i))
    (dotimes (r 5) (dotimes (i *n*) (incf sum (gethash i h 0))))
    sum))
(timed "gethash-equal-strings"
  (let ((h (make-hash-table :test 'equal)) (sum 0))
    (dotimes (i *n*) (setf (gethash (aref *keys* i) h) i))
    (dotimes (i *n*) (incf sum (gethash (aref *keys* i) h 0)))
    sum))
(timed "remhash-all"
  (let ((h (make-hash-table)))
    (dotimes (i *n*) (setf (gethash i h) i))
    (dotimes (i *n*) (remhash i h))))
(timed "maphash"
  (let ((h (make-hash-table)) (sum 0))
    (dotimes (i *n*) (setf (gethash i h) i))
    (dotimes (r 5) (maphash (lambda (k v) (declare (ignore k)) (incf sum v)) h))
    sum))
(timed "aref-vector"
  (let ((v (make-array 1000 :initial-element 1)) (sum 0))
    (dotimes (r 1000) (dotimes (i 1000) (setf (aref v i) (+ (aref v i) 1)) (incf sum (aref v i))))
    sum))
(timed "aref-2d"
  (let ((a (make-array '(100 100) :initial-element 1)) (sum 0))
    (dotimes (r 50) (dotimes (i 100) (dotimes (j 100) (incf sum (aref a i j)))))
    sum))
(timed "vector-push-extend"
  (let ((v (make-array 0 :adjustable t :fill-pointer 0)))
    (dotimes (i *n*) (vector-push-extend i v))
    (length v)))
(timed "read-string-stream"
  (let ((text (with-output-to-string (out) (dotimes (i 20000) (format out "(~d ~s) " i (aref *keys* i))))))
    (with-input-from-string (s text)
      (loop for form = (read s nil nil) while form count form))))
(timed "read-line-file"
  (let ((path "/tmp/mprof-lisp-bench-hash.txt"))
    (with-open-file (out path :direction :output :if-exists :supersede)
      (dotimes (i 50000) (write-line (aref *keys* i) out)))
    (prog1 (with-open-file (in path) (loop for line = (read-line in nil) while line count line))
      (delete-file path))))
