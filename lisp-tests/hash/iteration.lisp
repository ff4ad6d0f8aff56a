;; Iterating while removing the current entry (MAPHASH and
;; WITH-HASH-TABLE-ITERATOR), including keys that share a hash bucket
;; (strings equal in their first 64 characters), and consistency of
;; counts and contents afterwards.
(defun long-key (suffix)
  (concatenate 'string (make-string 70 :initial-element #\k) suffix))

(defun sorted-values (h)
  (let ((vs nil))
    (maphash (lambda (k v) (declare (ignore k)) (push v vs)) h)
    (sort vs #'<)))

;; Remove every entry while mapping: every entry is still visited once.
(let ((h (make-hash-table)) (visited 0))
  (dotimes (i 1000) (setf (gethash i h) i))
  (maphash (lambda (k v) (declare (ignore v)) (incf visited) (remhash k h)) h)
  (print (list visited (hash-table-count h))))

;; Remove every third entry, double the others.
(let ((h (make-hash-table)) (visited 0))
  (dotimes (i 30) (setf (gethash i h) i))
  (maphash (lambda (k v) (incf visited) (if (zerop (mod k 3)) (remhash k h) (setf (gethash k h) (* 2 v)))) h)
  (print visited)
  (print (hash-table-count h))
  (print (sorted-values h)))

;; Colliding keys: remove the first, the middle or every entry while mapping.
(dolist (victims '(("1") ("2") ("1" "2" "3") ()))
  (let ((h (make-hash-table :test 'equal)) (visited nil))
    (dolist (s '("1" "2" "3")) (setf (gethash (long-key s) h) (parse-integer s)))
    (setf (gethash "short" h) 0)
    (maphash (lambda (k v)
               (push v visited)
               (when (member (princ-to-string v) victims :test #'string=) (remhash k h)))
             h)
    (print (list (sort visited #'<) (hash-table-count h) (sorted-values h)
                 (gethash (long-key "2") h) (gethash "short" h)))))

;; The iterator macro with removal.
(let ((h (make-hash-table)) (seen nil))
  (dotimes (i 20) (setf (gethash i h) (* i i)))
  (with-hash-table-iterator (next h)
    (loop (multiple-value-bind (more k v) (next)
            (unless more (return))
            (push v seen)
            (when (oddp k) (remhash k h)))))
  (print (length seen))
  (print (reduce #'+ seen))
  (print (hash-table-count h)))

;; Nested iteration over the same table.
(let ((h (make-hash-table)) (pairs 0))
  (dotimes (i 10) (setf (gethash i h) t))
  (maphash (lambda (a x) (declare (ignore x))
             (maphash (lambda (b y) (declare (ignore y)) (when (< a b) (incf pairs))) h))
           h)
  (print pairs))

;; A table emptied by CLRHASH inside MAPHASH stops the iteration.
(let ((h (make-hash-table)) (visited 0))
  (dotimes (i 10) (setf (gethash i h) i))
  (maphash (lambda (k v) (declare (ignore k v)) (incf visited) (clrhash h)) h)
  (print (list visited (hash-table-count h))))
(terpri)
