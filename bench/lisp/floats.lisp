;;; Boxed double-float arithmetic: numerical integration and a small
;;; particle simulation (every intermediate float is a heap object).
(defun integrate (f a b n)
  (let* ((h (/ (- b a) n))
         (s (* 0.5d0 (+ (funcall f a) (funcall f b)))))
    (do ((i 1 (1+ i)))
        ((>= i n) (* s h))
      (setq s (+ s (funcall f (+ a (* i h))))))))

(defun poly (x) (+ (* 3.0d0 x x) (* -2.0d0 x) 1.0d0))

(defun simulate (steps)
  (let ((x 0.0d0) (v 1.0d0) (dt 0.001d0))
    (dotimes (i steps)
      (let ((a (- (* 0.5d0 x))))
        (setq v (+ v (* a dt)))
        (setq x (+ x (* v dt)))))
    x))

(let ((r 0.0d0))
  (dotimes (k 15)
    (setq r (+ r (integrate #'poly 0.0d0 2.0d0 50000))))
  (format t "~,6f~%" r))
(format t "~,6f~%" (simulate 900000))
