;;; A class hierarchy with :before/:after/:around methods, call-next-method,
;;; accessors, initforms and initialize-instance :after.

(defclass shape ()
  ((name :initarg :name :initform "anonymous" :accessor shape-name)
   (log :initform nil :accessor shape-log)))

(defclass circle (shape)
  ((radius :initarg :radius :initform 1 :accessor radius)))

(defclass rect (shape)
  ((width :initarg :width :reader rect-width)
   (height :initarg :height :reader rect-height)))

(defclass square (rect) ()
  (:default-initargs :name "square"))

(defmethod initialize-instance :after ((s square) &key side)
  (when side
    (setf (slot-value s 'width) side
          (slot-value s 'height) side)))

(defgeneric area (shape)
  (:documentation "The area of a shape."))

(defmethod area ((c circle)) (* 3 (radius c) (radius c)))
(defmethod area ((r rect)) (* (rect-width r) (rect-height r)))

(defmethod area :before ((s shape))
  (push :before (shape-log s)))
(defmethod area :after ((s shape))
  (push :after (shape-log s)))
(defmethod area :around ((s shape))
  (push :around (shape-log s))
  (let ((a (call-next-method)))
    (list (shape-name s) a)))
(defmethod area :around ((s square))
  (list :square (call-next-method)))

(defgeneric describe-shape (shape))
(defmethod describe-shape ((s shape)) (list :shape))
(defmethod describe-shape ((r rect)) (cons :rect (call-next-method)))
(defmethod describe-shape ((s square))
  (if (next-method-p) (cons :square (call-next-method)) :alone))

(let ((shapes (list (make-instance 'circle :name "c" :radius 2)
                    (make-instance 'rect :name "r" :width 3 :height 4)
                    (make-instance 'square :side 5))))
  (dolist (s shapes)
    (print (area s))
    (print (reverse (shape-log s)))
    (print (describe-shape s)))
  (print (mapcar (lambda (s) (class-name (class-of s))) shapes))
  (print (mapcar (lambda (s) (typep s 'rect)) shapes))
  (print (list (subtypep 'square 'shape) (subtypep 'shape 'square)
               (subtypep 'circle 'standard-object)))
  (print (type-of (first shapes))))

(let ((c (make-instance 'circle)))
  (setf (radius c) 10)
  (incf (radius c))
  (print (radius c))
  (print (shape-name c))
  (with-slots (radius (n name)) c
    (setf n "renamed")
    (incf radius 4)
    (print (list n radius)))
  (print (list (shape-name c) (radius c)))
  (with-accessors ((r radius) (n shape-name)) c
    (setf r 1)
    (print (list r n (radius c)))))
