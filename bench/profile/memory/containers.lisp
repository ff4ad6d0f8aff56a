;; A 1,000,000-entry hash table and a 1,000,000-element vector grown by
;; vector-push-extend, both held at the end.
(defvar *h* (make-hash-table))
(dotimes (i 1000000) (setf (gethash i *h*) i))
(defvar *v* (make-array 0 :adjustable t :fill-pointer 0))
(dotimes (i 1000000) (vector-push-extend i *v*))
(print (list (hash-table-count *h*) (length *v*)))
