;;; The cost of a generic function call beside plain function calls doing
;;; the same work. Each case runs N calls in a loop; the empty loop's time is
;;; subtracted, and each case is reported in nanoseconds per call and as a
;;; multiple of one plain (defun) call. Run by bench/clos/run.sh.

(defclass circle () ((r :initarg :r :reader r)))
(defclass square () ((s :initarg :s :reader s)))

;; The same work three ways: a defun, a generic function with one method,
;; and one with two methods called on both classes alternately.
(defun plain-area (c) (* 3 (slot-value c 'r)))
(defgeneric area-1 (shape))
(defmethod area-1 ((c circle)) (* 3 (slot-value c 'r)))
(defgeneric area-2 (shape))
(defmethod area-2 ((c circle)) (* 3 (slot-value c 'r)))
(defmethod area-2 ((q square)) (* 3 (slot-value q 's)))
(defun plain-area-2 (x) (if (typep x 'circle) (* 3 (slot-value x 'r)) (* 3 (slot-value x 's))))
;; Standard method combination with an :after method, and call-next-method.
(defgeneric area-after (shape))
(defmethod area-after ((c circle)) (* 3 (slot-value c 'r)))
(defmethod area-after :after ((c circle)) nil)
(defgeneric area-next (shape))
(defmethod area-next ((c t)) (* 3 (slot-value c 'r)))
(defmethod area-next ((c circle)) (call-next-method))
;; Two-argument dispatch.
(defgeneric meet (a b))
(defmethod meet ((a circle) (b square)) 1)
(defmethod meet ((a square) (b circle)) 2)
(defun plain-meet (a b) (if (typep a 'circle) (if (typep b 'square) 1 0) 2))

(defvar *n* 1000000)
(defvar *c* (make-instance 'circle :r 2))
(defvar *q* (make-instance 'square :s 3))
(defvar *shapes* (vector *c* *q*))

(defmacro timed (&body body)
  `(let ((start (get-internal-run-time)))
     (dotimes (i *n*) ,@body)
     (/ (- (get-internal-run-time) start) (/ internal-time-units-per-second 1000000000.0) *n*)))

(defun report ()
  (let* ((empty (timed (svref *shapes* (logand i 1))))
         (plain (- (timed (plain-area (svref *shapes* 0))) empty)))
    (format t "~&empty loop: ~,1F ns per iteration~%" empty)
    (flet ((row (name ns)
             (format t "~&~26A ~7,1F ns  ~5,2F plain calls~%" name (- ns empty) (/ (- ns empty) plain))))
      (row "defun" (+ plain empty))
      (row "gf, 1 method" (timed (area-1 (svref *shapes* 0))))
      (row "defun, 2 classes" (timed (plain-area-2 (svref *shapes* (logand i 1)))))
      (row "gf, 2 methods, 2 classes" (timed (area-2 (svref *shapes* (logand i 1)))))
      (row "gf, primary + :after" (timed (area-after (svref *shapes* 0))))
      (row "gf, call-next-method" (timed (area-next (svref *shapes* 0))))
      (row "defun, 2 arguments" (timed (plain-meet (svref *shapes* (logand i 1)) (svref *shapes* (- 1 (logand i 1))))))
      (row "gf, 2-argument dispatch" (timed (meet (svref *shapes* (logand i 1)) (svref *shapes* (- 1 (logand i 1))))))
      (row "reader (generic)" (timed (r (svref *shapes* 0))))
      (row "slot-value" (timed (slot-value (svref *shapes* 0) 'r)))
      (row "make-instance" (timed (make-instance 'circle :r i))))))

(report)
