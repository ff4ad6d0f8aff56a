;;; The initialization protocol, DEFGENERIC's :METHOD option and method
;;; introspection.

(defclass widget ()
  ((id :initarg :id :reader id)
   (label :initarg :label :initform "none" :accessor label)
   (log :initform nil :accessor widget-log)))

(defmethod initialize-instance :before ((w widget) &key id)
  (format t "~&before init ~a~%" id))
(defmethod initialize-instance :around ((w widget) &rest initargs &key &allow-other-keys)
  (format t "~&around init ~s~%" initargs)
  (call-next-method))
(defmethod shared-initialize :after ((w widget) slot-names &key label)
  (push (list :shared slot-names label) (widget-log w)))

(let ((w (make-instance 'widget :id 1 :label "ok")))
  (print (list (id w) (label w) (widget-log w)))
  (reinitialize-instance w :label "again")
  (print (list (label w) (widget-log w))))

(defclass gadget (widget) ((size :initarg :size :initform 0 :accessor size))
  (:default-initargs :id 99))
(let ((g (make-instance 'gadget :size 3)))
  (print (list (id g) (size g) (label g))))

(let ((raw (allocate-instance (find-class 'gadget))))
  (print (list (slot-boundp raw 'id) (slot-boundp raw 'size)))
  (initialize-instance raw :id 5)
  (print (list (id raw) (size raw))))

(defgeneric classify (x)
  (:documentation "Classify a number.")
  (:method ((x integer)) (list :integer (call-next-method)))
  (:method ((x number)) :number)
  (:method ((x t)) :other))
(print (mapcar #'classify (list 1 2.5 "s")))

(let ((m (find-method #'classify '() (list (find-class 'number)))))
  (print (method-qualifiers m))
  (remove-method #'classify m)
  (print (handler-case (classify 1) (error () :no-next))))

(defgeneric ordered (x))
(defmethod ordered :before ((x integer)) nil)
(defmethod ordered ((x integer)) 1)
(defmethod ordered ((x number)) 2)
(defmethod ordered ((x t)) 3)
(print (mapcar #'method-qualifiers (compute-applicable-methods #'ordered (list 5))))
(print (length (compute-applicable-methods #'ordered (list "s"))))

(print (handler-case (type-of (make-instance 'widget :no-such 1)) (error () :invalid-initarg)))
(defmethod initialize-instance :after ((g gadget) &key extra) (when extra (setf (size g) extra)))
(print (size (make-instance 'gadget :extra 42)))
(print (size (make-instance 'gadget :whatever 1 :allow-other-keys t)))
