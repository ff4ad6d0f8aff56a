;;; Hash tables: EQL tables with fixnum keys and EQUAL tables with string keys.
(defun fill-table (n)
  (let ((h (make-hash-table)))
    (dotimes (i n h) (setf (gethash i h) (* i i)))))

(defun sum-table (h n)
  (let ((s 0))
    (dotimes (i n s) (setq s (+ s (gethash i h 0))))))

(defun word-counts (words rounds)
  (let ((h (make-hash-table :test #'equal)))
    (dotimes (r rounds)
      (dolist (w words) (incf (gethash w h 0))))
    h))

(let ((total 0))
  (dotimes (k 40)
    (let ((h (fill-table 50000)))
      (setq total (+ total (sum-table h 50000) (hash-table-count h)))))
  (print total))
(let ((h (word-counts '("alpha" "beta" "gamma" "delta" "alpha" "epsilon" "beta" "alpha") 80000)))
  (print (list (gethash "alpha" h) (gethash "beta" h) (gethash "zeta" h 0) (hash-table-count h))))
