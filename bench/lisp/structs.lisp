;;; Structures: allocation, slot access and update through accessors.
(defstruct vec3 (x 0) (y 0) (z 0))

(defun vadd (a b)
  (make-vec3 :x (+ (vec3-x a) (vec3-x b))
             :y (+ (vec3-y a) (vec3-y b))
             :z (+ (vec3-z a) (vec3-z b))))

(defun vdot (a b)
  (+ (* (vec3-x a) (vec3-x b)) (* (vec3-y a) (vec3-y b)) (* (vec3-z a) (vec3-z b))))

(let ((acc (make-vec3))
      (sum 0))
  (dotimes (i 500000)
    (let ((v (make-vec3 :x i :y (- i) :z 2)))
      (setq acc (vadd acc v))
      (setf (vec3-z acc) (mod (vec3-z acc) 1000))
      (setq sum (+ sum (vdot v v)))))
  (print (list (vec3-x acc) (vec3-y acc) (vec3-z acc) sum)))
