;; Boxed-float arithmetic: every intermediate double is a heap object.
(defun step-x (x) (+ (* x 0.999) 1.5))
(defun integrate (n)
  (let ((x 0.0) (acc 0.0))
    (dotimes (i n)
      (setq x (step-x x))
      (setq acc (+ acc (* x 0.001))))
    acc))
(print (integrate 6000000))
