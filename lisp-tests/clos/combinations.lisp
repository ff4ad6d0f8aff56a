;;; The built-in method combinations, optional/key/rest congruence and
;;; CALL-NEXT-METHOD with arguments.

(defclass a () ())
(defclass b (a) ())
(defclass c (a) ())
(defclass d (b c) ())

(defgeneric names (x) (:method-combination list))
(defmethod names list ((x a)) 'a)
(defmethod names list ((x b)) 'b)
(defmethod names list ((x c)) 'c)
(defmethod names list ((x d)) 'd)
(print (names (make-instance 'd)))
(print (names (make-instance 'c)))

(defgeneric names-last (x) (:method-combination list :most-specific-last))
(defmethod names-last list ((x a)) 'a)
(defmethod names-last list ((x d)) 'd)
(print (names-last (make-instance 'd)))

(defgeneric cost (x) (:method-combination +))
(defmethod cost + ((x a)) 1)
(defmethod cost + ((x b)) 10)
(defmethod cost + ((x d)) 100)
(defmethod cost :around ((x d)) (list :total (call-next-method)))
(print (cost (make-instance 'd)))
(print (cost (make-instance 'b)))

(defgeneric valid (x) (:method-combination and))
(defmethod valid and ((x integer)) (> x 0))
(defmethod valid and ((x number)) (print :checked-number) t)
(print (list (valid 3) (valid -3)))

(defgeneric pick (x) (:method-combination or))
(defmethod pick or ((x integer)) nil)
(defmethod pick or ((x number)) :number)
(print (pick 1))

(defgeneric parts (x) (:method-combination append))
(defmethod parts append ((x integer)) (list :i))
(defmethod parts append ((x number)) (list :n :n2))
(print (parts 1))

(defgeneric parts2 (x) (:method-combination nconc))
(defmethod parts2 nconc ((x integer)) (list :i))
(defmethod parts2 nconc ((x number)) (list :n))
(print (parts2 1))

(defgeneric biggest (x) (:method-combination max))
(defmethod biggest max ((x integer)) 3)
(defmethod biggest max ((x number)) 7)
(defgeneric smallest (x) (:method-combination min))
(defmethod smallest min ((x integer)) 3)
(defmethod smallest min ((x number)) 7)
(print (list (biggest 1) (smallest 1)))

(defgeneric steps (x) (:method-combination progn))
(defmethod steps progn ((x integer)) (print :integer-step) :integer)
(defmethod steps progn ((x number)) (print :number-step) :number)
(print (steps 1))

(defgeneric scale (x &optional factor))
(defmethod scale ((x integer) &optional (factor 2)) (* x factor))
(defmethod scale ((x number) &optional factor) (list :number x factor))
(print (list (scale 3) (scale 3 10) (scale 1.5)))

(defgeneric resize (x &key))
(defmethod resize ((x integer) &key (by 1)) (+ x by))
(defmethod resize :around ((x integer) &key by) (list :by by (call-next-method)))
(print (list (resize 1) (resize 1 :by 5)))

(defgeneric gather (x &rest more))
(defmethod gather ((x t) &rest more) (list x more))
(defmethod gather ((x integer) &rest more) (list :int (call-next-method (* 2 x) :extra more)))
(print (gather 1 2 3))
(print (gather :k))

(defgeneric twice (x))
(defmethod twice ((x number)) (list :number x))
(defmethod twice ((x integer)) (call-next-method (* 2 x)))
(print (twice 21))

(defgeneric (setf label) (value object))
(defclass tagged () ((label :initform nil :reader label)))
(defmethod (setf label) (value (o tagged)) (setf (slot-value o 'label) (string-upcase value)))
(let ((o (make-instance 'tagged)))
  (setf (label o) "hello")
  (print (label o)))

(defgeneric fnext (x))
(defmethod fnext ((x number)) (list :number x))
(defmethod fnext ((x integer))
  (list (funcall #'next-method-p) (apply #'call-next-method (list (* 2 x)))))
(print (fnext 3))

;; No applicable primary method is an error even when an :around method applies.
(defgeneric p1 (x) (:method-combination +) (:method :around ((x t)) 1) (:method + ((x integer)) x))
(print (handler-case (p1 'a) (error () :error)))
(print (p1 5))
(defgeneric p2 (x) (:method :around ((x t)) 1) (:method ((x integer)) x))
(print (handler-case (p2 'a) (error () :error)))
(print (p2 5))
