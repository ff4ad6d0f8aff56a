;; Hash tables: the four tests, gethash's two values and default, setf and
;; incf of gethash, remhash, clrhash, counts, maphash with removal, the
;; iterator macro, sxhash, and errors.
(defun sorted-entries (h)
  (let ((entries nil))
    (maphash (lambda (k v) (push (list k v) entries)) h)
    (sort entries (lambda (a b) (string< (prin1-to-string (car a)) (prin1-to-string (car b)))))))

(let ((h (make-hash-table)))
  (print (hash-table-p h))
  (print (hash-table-p (list 1)))
  (print (hash-table-count h))
  (print (hash-table-test h))
  (print (multiple-value-list (gethash 'missing h)))
  (print (multiple-value-list (gethash 'missing h 'default)))
  (print (setf (gethash 'a h) 1))
  (setf (gethash 'b h) 2 (gethash 3 h) 'three)
  (print (multiple-value-list (gethash 'a h)))
  (print (multiple-value-list (gethash 3 h)))
  (setf (gethash 'c h) nil)
  (print (multiple-value-list (gethash 'c h 'default)))
  (print (hash-table-count h))
  (setf (gethash 'a h) 100)
  (print (gethash 'a h))
  (print (hash-table-count h))
  (print (sorted-entries h))
  (print (remhash 'a h))
  (print (remhash 'a h))
  (print (hash-table-count h))
  (print (multiple-value-list (gethash 'a h)))
  (print (eq (clrhash h) h))
  (print (hash-table-count h))
  (print (multiple-value-list (gethash 'b h))))

;; Counting with incf and a default.
(let ((counts (make-hash-table :test 'equal)))
  (dolist (w '("the" "cat" "the" "dog" "the" "cat"))
    (incf (gethash w counts 0)))
  (print (sorted-entries counts))
  (push 'x (gethash "lists" counts))
  (push 'y (gethash "lists" counts))
  (print (gethash "lists" counts)))

;; EQ vs EQL vs EQUAL vs EQUALP.
(defun probe (test key1 key2)
  (let ((h (make-hash-table :test test)))
    (setf (gethash key1 h) 'found)
    (nth-value 1 (gethash key2 h))))
(print (list (probe 'eq 'sym 'sym) (probe 'eq 1 1) (probe 'eq #\a #\a)))
(print (list (probe 'eql 1.5 1.5) (probe 'eql (expt 2 100) (expt 2 100)) (probe 'eql 1/3 1/3) (probe 'eql 1 1.0)))
(print (list (probe 'eql "abc" (copy-seq "abc")) (probe 'equal "abc" (copy-seq "abc")) (probe 'equal "abc" "ABC")))
(print (list (probe 'equal (list 1 (list 2 "x")) (list 1 (list 2 "x"))) (probe 'equal (list 1 2) (list 1 3))))
(print (list (probe 'equalp "abc" "ABC") (probe 'equalp 1 1.0) (probe 'equalp #\a #\A)
             (probe 'equalp (vector 1 2 "x") (vector 1 2 "X")) (probe 'equalp '(a "b") '(a "B"))))
(print (list (probe 'equal (vector 1) (vector 1)) (probe 'equalp 1/2 0.5)))
(print (list (probe #'eq 'a 'a) (probe #'eql 2.0 2.0) (probe #'equal "k" "k") (probe #'equalp "k" "K")))
(print (mapcar (lambda (test) (hash-table-test (make-hash-table :test test)))
               (list 'eq 'eql 'equal 'equalp #'eq #'eql #'equal #'equalp)))
(print (hash-table-test (make-hash-table :size 100 :rehash-size 2.0 :rehash-threshold 0.8)))

;; Many entries: growth and lookups.
(let ((h (make-hash-table :test 'equal)))
  (dotimes (i 2000)
    (setf (gethash (format nil "key~d" i) h) i))
  (print (hash-table-count h))
  (print (gethash "key1234" h))
  (let ((sum 0))
    (maphash (lambda (k v) (declare (ignore k)) (incf sum v)) h)
    (print sum))
  (dotimes (i 1000)
    (remhash (format nil "key~d" (* 2 i)) h))
  (print (hash-table-count h))
  (print (list (gethash "key7" h) (gethash "key8" h))))

;; Insertion order is kept while nothing is removed (as SBCL does).
(let ((h (make-hash-table)))
  (dolist (k '(5 3 9 1 7)) (setf (gethash k h) (* k k)))
  (let ((keys nil)) (maphash (lambda (k v) (declare (ignore v)) (push k keys)) h) (print (reverse keys))))

;; MAPHASH may remove or update the entry it is given.
(let ((h (make-hash-table)))
  (dotimes (i 10) (setf (gethash i h) i))
  (maphash (lambda (k v) (if (evenp k) (remhash k h) (setf (gethash k h) (* v 10)))) h)
  (print (hash-table-count h))
  (print (sorted-entries h))
  (print (maphash (lambda (k v) (list k v)) h)))

;; WITH-HASH-TABLE-ITERATOR
(let ((h (make-hash-table)) (seen nil))
  (dolist (k '(a b c)) (setf (gethash k h) (string-downcase (symbol-name k))))
  (with-hash-table-iterator (next-entry h)
    (loop
      (multiple-value-bind (more key value) (next-entry)
        (unless more (return))
        (push (list key value) seen))))
  (print (sort seen #'string< :key (lambda (e) (symbol-name (car e)))))
  (with-hash-table-iterator (next (make-hash-table))
    (print (multiple-value-list (next)))))

;; LOOP over hash tables.
(let ((h (make-hash-table)))
  (setf (gethash 1 h) 'one (gethash 2 h) 'two)
  (print (sort (loop for k being the hash-keys of h collect k) #'<))
  (print (sort (loop for k being the hash-keys of h using (hash-value v) collect (list k v)) #'< :key #'car)))

;; Hash tables as values, and structures as keys.
(let ((outer (make-hash-table)))
  (setf (gethash 'inner outer) (make-hash-table))
  (setf (gethash 'x (gethash 'inner outer)) 42)
  (print (gethash 'x (gethash 'inner outer))))

;; sxhash: equal objects have equal hashes; always a non-negative fixnum.
(print (= (sxhash "hello") (sxhash (copy-seq "hello"))))
(print (= (sxhash (list 1 2 "x")) (sxhash (list 1 2 "x"))))
(print (= (sxhash 42) (sxhash 42)))
(print (every (lambda (x) (let ((h (sxhash x))) (and (typep h 'fixnum) (>= h 0))))
              (list 1 -1 "s" 'sym 1.5 (expt 10 30) #\a (list 1 2) (vector 1))))

;; The setf function, called directly.
(let ((h (make-hash-table)))
  (funcall #'(setf gethash) 'v 'k h)
  (print (gethash 'k h)))

;; Errors.
(print (handler-case (gethash 1 'not-a-table) (type-error (c) (type-error-datum c))))
(print (handler-case (hash-table-count 5) (type-error () 'type-error)))
(print (handler-case (make-hash-table :test 'string=) (error () 'error)))
(print (handler-case (remhash 1 nil) (type-error () 'type-error)))
(print (handler-case (maphash #'list 7) (type-error () 'type-error)))
(terpri)
