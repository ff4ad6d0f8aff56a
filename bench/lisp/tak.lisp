;;; TAK (Gabriel): function calls and fixnum arithmetic, no allocation.
(defun tak (x y z)
  (if (not (< y x))
      z
      (tak (tak (1- x) y z)
           (tak (1- y) z x)
           (tak (1- z) x y))))

(let ((r 0))
  (dotimes (i 60)
    (setq r (tak 18 12 6)))
  (print r))
