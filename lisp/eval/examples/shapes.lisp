;;; A small Lisp library loaded by the embed example (examples/embed.rs).
;;; Shapes are lists: (:rect width height) or (:circle radius).

(defparameter *pi* 3.141592653589793d0)

(defun area (shape)
  (cond ((eq (car shape) :rect) (* (cadr shape) (caddr shape)))
        ((eq (car shape) :circle) (* *pi* (cadr shape) (cadr shape)))
        (t (error "unknown shape ~s" shape))))

(defun total-area (shapes)
  (let ((sum 0))
    (dolist (s shapes sum)
      (setq sum (+ sum (area s))))))

(defun describe-shape (shape)
  (format nil "~(~a~) with area ~,2f" (car shape) (area shape)))
