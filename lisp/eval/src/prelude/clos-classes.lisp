;;;; The prelude: CLOS classes, part 1 of 3 (classes and slots; then
;;;; clos-generic.lisp: generic functions and dispatch; clos-standard.lisp:
;;;; the standard generic functions and the defining macros).
;;;;
;;;; Metaobjects (classes, generic functions, methods) are structures of
;;;; internal types whose precedence includes STANDARD-OBJECT, so TYPEP,
;;;; TYPE-OF and the printer (through PRINT-OBJECT) treat them as instances.
;;;; Their fields are read by index (SYS::%MO-REF); slot 0 is a dummy, so the
;;;; instance fast path of builtins/clos.rs never mistakes one for an instance.
;;;;
;;;; Every class has a metaobject: built-in classes are made here, standard
;;;; classes by DEFCLASS, and structure and condition classes on first need
;;;; from their structure type (so DEFSTRUCT and DEFINE-CONDITION stay as
;;;; they are). A standard class's instances are heap structures of its own
;;;; structure type (named by the class, so the profiler's bin table shows
;;;; the class name); slot 0 holds the layout token (see builtins/clos.rs),
;;;; an uninterned symbol whose SLOTS property lists the instance slot names
;;;; of that layout, so an obsolete instance can be brought up to date.
;;;;
;;;; Invariants: SYS::%CLASS-KEY of an object determines its class; every
;;;; dispatch cache is keyed by it and flushed whenever a class or a method
;;;; changes (SYS::%FLUSH-ALL-CACHES).

(defmacro sys::%mo-ref (object index) `(sys:%struct-ref ,object ,index nil))
(defmacro sys::%mo-set (object index value) `(sys:%struct-set ,object ,index ,value nil))

;;; STANDARD-OBJECT is a structure type only so the printer finds the
;;; PRINT-OBJECT dispatcher (its report) along every instance's precedence.
(sys:%make-struct-type 'standard-object '(standard-object) nil nil)

(defvar sys::*class-slots*
  '(sys::%metaobject name direct-superclasses direct-slots precedence-list slots
    sys::stype default-initargs direct-subclasses documentation
    sys::direct-default-initargs sys::layout sys::initargs-cache sys::initialization-cache
    sys::make-instance-cache))

(dolist (ty '((class) (built-in-class class) (standard-class class)
              (structure-class class) (sys::condition-class class)))
  (sys:%make-struct-type (car ty) (append ty '(standard-object)) sys::*class-slots* nil))

;;; Class fields by index (see SYS::*CLASS-SLOTS*).
(defun sys::%class-direct-superclasses (c) (sys::%mo-ref c 2))
(defun sys::%class-direct-slots (c) (sys::%mo-ref c 3))
(defun sys::%class-cpl (c) (sys::%mo-ref c 4))
(defun sys::%class-slots (c) (sys::%mo-ref c 5))
(defun sys::%class-stype (c) (sys::%mo-ref c 6))
(defun sys::%class-default-initargs (c) (sys::%mo-ref c 7))
(defun sys::%class-direct-subclasses (c) (sys::%mo-ref c 8))
(defun sys::%class-layout (c) (sys::%mo-ref c 11))

(defun sys::%classp (x)
  (sys::%builtin-typep x 'class))

(defun sys::%make-class-object (kind name supers)
  (let ((c (sys:%make-instance (sys:%find-struct-type kind))))
    (sys::%mo-set c 1 name)
    (sys::%mo-set c 2 supers)
    c))

(defvar sys::*class-table* (make-hash-table :test 'eq)
  "Class name -> class metaobject (FIND-CLASS).")
(defvar sys::*stype-classes* (make-hash-table :test 'eq)
  "Structure type -> class metaobject, for CLASS-OF of structures and instances.")

;;; Built-in classes, with SBCL's precedence lists.
(defvar sys::*built-in-classes*
  '((t) (sequence t) (number t) (real number t) (rational real number t)
    (integer rational real number t) (fixnum integer rational real number t)
    (bignum integer rational real number t) (ratio rational real number t)
    (float real number t) (double-float float real number t)
    (single-float float real number t) (character t) (symbol t)
    (list sequence t) (cons list sequence t) (null symbol list sequence t)
    (complex number t)
    (array t) (vector array sequence t) (string vector array sequence t)
    (bit-vector vector array sequence t)
    (function t) (hash-table t) (package t) (stream t) (random-state t)
    (file-stream stream t) (string-stream stream t) (synonym-stream stream t)
    (two-way-stream stream t) (echo-stream stream t) (broadcast-stream stream t)
    (concatenated-stream stream t)
    (standard-object t) (structure-object t) (condition t)))

(dolist (entry sys::*built-in-classes*)
  (let ((c (sys::%make-class-object
            (if (eq (car entry) 'standard-object) 'standard-class 'built-in-class)
            (car entry) nil)))
    (setf (gethash (car entry) sys::*class-table*) c)))
(dolist (entry sys::*built-in-classes*)
  (let ((c (gethash (car entry) sys::*class-table*)))
    (sys::%mo-set c 4 (mapcar (lambda (n) (gethash n sys::*class-table*)) entry))
    (when (cdr entry)
      (sys::%mo-set c 2 (list (gethash (car (cdr entry)) sys::*class-table*))))))
(setf (gethash 'null sys::*class-table*)
      (let ((c (gethash 'null sys::*class-table*)))
        (sys::%mo-set c 2 (list (gethash 'symbol sys::*class-table*) (gethash 'list sys::*class-table*)))
        c))
(sys::%mo-set (gethash 'standard-object sys::*class-table*) 6 (sys:%find-struct-type 'standard-object))

;;; The class of each code SYS:%CLASS-KEY answers for a non-structure.
(defvar sys::*built-in-class-vector*
  (let ((names (sys:%built-in-class-names)))
    (let ((v (make-array (length names))))
      (dotimes (i (length names) v)
        (setf (svref v i) (gethash (nth i names) sys::*class-table*))))))

;;; Structure and condition classes are made from their structure types
;;; when first needed.
(defun sys::%structure-class-of-type (stype)
  (or (gethash stype sys::*stype-classes*)
      (let* ((prec (sys:%type-precedence stype))
             (name (car prec))
             (condition (sys::%builtin-typep (sys:%make-instance stype) 'condition))
             (root (if condition 'condition 'structure-object))
             (c (sys::%make-class-object (if condition 'sys::condition-class 'structure-class) name nil)))
        (setf (gethash stype sys::*stype-classes*) c)
        (setf (gethash name sys::*class-table*) c)
        (let ((supers (remove nil (mapcar (lambda (n) (find-class n nil)) (cdr prec)))))
          (sys::%mo-set c 2 (if supers (list (car supers)) (list (find-class root))))
          (sys::%mo-set c 4 (cons c (append supers
                                            (if (member root (cdr prec)) (list (find-class t))
                                                (list (find-class root) (find-class t)))))))
        (sys::%mo-set c 6 stype)
        (sys::%mo-set c 5 (mapcar (lambda (n) (vector n nil nil nil :instance t nil nil))
                                  (sys:%struct-type-slots stype)))
        c)))

(defun sys::%class-of-key (key)
  (if (integerp key)
      (svref sys::*built-in-class-vector* key)
      (or (gethash key sys::*stype-classes*)
          (sys::%structure-class-of-type key))))

(defun class-of (object)
  (sys::%class-of-key (sys:%class-key object)))

(defun find-class (symbol &optional (errorp t) environment)
  (declare (ignore environment))
  (or (gethash symbol sys::*class-table*)
      (let ((stype (sys:%find-struct-type symbol)))
        (and stype (not (gethash stype sys::*stype-classes*))
             (sys::%structure-class-of-type stype)))
      (when errorp
        (error "There is no class named ~S." symbol))))

(defun (setf find-class) (class symbol &optional errorp environment)
  (declare (ignore errorp environment))
  (if class
      (setf (gethash symbol sys::*class-table*) class)
      (remhash symbol sys::*class-table*))
  class)

(defun sys::%class-name (class) (sys::%mo-ref class 1))

;;; Slot definitions: #(name initargs initform initfunction allocation
;;; type documentation location), location an instance index or, for a
;;; class slot, the (name . value) cell its defining class owns.
(defmacro sys::%sd-name (sd) `(svref ,sd 0))
(defmacro sys::%sd-initargs (sd) `(svref ,sd 1))
(defmacro sys::%sd-initfunction (sd) `(svref ,sd 3))
(defmacro sys::%sd-allocation (sd) `(svref ,sd 4))
(defmacro sys::%sd-type (sd) `(svref ,sd 5))
(defmacro sys::%sd-location (sd) `(svref ,sd 7))

(defun sys::%find-slot-definition (class name)
  (dolist (sd (sys::%class-slots class) nil)
    (when (eq (sys::%sd-name sd) name) (return sd))))

;;; The class precedence list: a topological sort of the class and its
;;; superclasses under each class's local precedence order; ties go to the
;;; candidate with a direct subclass rightmost in the list so far (CLHS 4.3.5).
(defun sys::%compute-cpl (class)
  (let ((all nil) (todo (list class)) (pairs nil))
    (loop while todo
          do (let ((c (pop todo)))
               (unless (member c all :test #'eq)
                 (push c all)
                 (let ((prev c))
                   (dolist (s (sys::%class-direct-superclasses c))
                     (push (cons prev s) pairs)
                     (setq prev s)
                     (push s todo))))))
    (let ((result nil) (remaining (reverse all)))
      (loop while remaining
            do (let ((candidates
                       (remove-if (lambda (c)
                                    (dolist (p pairs nil)
                                      (when (and (eq (cdr p) c) (member (car p) remaining :test #'eq))
                                        (return t))))
                                  remaining)))
                 (unless candidates
                   (error "The class ~S has no consistent precedence list (its superclasses' orders conflict)."
                          (sys::%class-name class)))
                 (let ((next (or (dolist (r result nil)
                                   (let ((hit (dolist (c candidates nil)
                                                (when (member c (sys::%class-direct-superclasses r) :test #'eq)
                                                  (return c)))))
                                     (when hit (return hit))))
                                 (car candidates))))
                   (push next result)
                   (setq remaining (remove next remaining :test #'eq)))))
      (reverse result))))

;;; Effective slots: one per name over the precedence list, least specific
;;; class's slots first; allocation, initform and type from the most
;;; specific definition, initargs the union.
(defun sys::%compute-slots (class)
  (let ((names nil) (out nil) (index 1))
    (dolist (c (reverse (sys::%class-cpl class)))
      (dolist (sd (sys::%class-direct-slots c))
        (unless (member (sys::%sd-name sd) names :test #'eq)
          (push (sys::%sd-name sd) names))))
    (dolist (name (reverse names))
      (let ((defs nil))
        (dolist (c (sys::%class-cpl class))
          (dolist (sd (sys::%class-direct-slots c))
            (when (eq (sys::%sd-name sd) name) (push sd defs))))
        (setq defs (reverse defs))
        (let* ((first (car defs))
               (with-init (find-if (lambda (sd) (sys::%sd-initfunction sd)) defs))
               (initargs nil))
          (dolist (sd defs)
            (dolist (i (sys::%sd-initargs sd)) (pushnew i initargs)))
          (let ((class-slot (eq (sys::%sd-allocation first) :class)))
            (push (vector name (reverse initargs)
                          (and with-init (svref with-init 2))
                          (and with-init (sys::%sd-initfunction with-init))
                          (if class-slot :class :instance)
                          (sys::%sd-type first)
                          (svref first 6)
                          (if class-slot
                              (sys::%sd-location first)
                              (prog1 index (setq index (+ index 1)))))
                  out)))))
    (reverse out)))

(defun sys::%compute-default-initargs (class)
  (let ((out nil))
    (dolist (c (sys::%class-cpl class))
      (dolist (d (sys::%mo-ref c 10))
        (unless (assoc (car d) out :test #'eq)
          (push d out))))
    (reverse out)))

;;; Every generic function, so class changes can flush their caches.
(defvar sys::*generic-functions* nil)

(defvar sys::*initarg-generation* 0
  "Bumped when a class or a method of the initialization functions changes:
the classes' caches of valid initargs and plain initialization are stale.")

(defun sys::%flush-all-caches ()
  (setq sys::*initarg-generation* (+ sys::*initarg-generation* 1))
  (dolist (gf sys::*generic-functions*)
    (clrhash (sys::%mo-ref gf 3))))

(defun sys::%instance-slot-names (class)
  (let ((out nil))
    (dolist (sd (sys::%class-slots class))
      (unless (eq (sys::%sd-allocation sd) :class) (push (sys::%sd-name sd) out)))
    (reverse out)))

;;; (Re)compute a standard class's precedence, slots and layout; a new
;;; layout makes existing instances obsolete (updated when next touched).
(defun sys::%finalize-class (class)
  (sys::%mo-set class 4 (sys::%compute-cpl class))
  (sys::%mo-set class 5 (sys::%compute-slots class))
  (sys::%mo-set class 7 (sys::%compute-default-initargs class))
  (let* ((names (sys::%instance-slot-names class))
         (layout (make-symbol "LAYOUT"))
         (old (sys::%class-layout class)))
    (setf (get layout 'sys::slots) names)
    ;; The token's value says whether stores must check slot types (builtins/clos.rs).
    (set layout (if (find-if (lambda (sd) (not (member (sys::%sd-type sd) '(nil t))))
                             (sys::%class-slots class))
                    t nil))
    (unless (and old (equal (get old 'sys::slots) names)
                 (eq (symbol-value old) (symbol-value layout)))
      (sys::%mo-set class 11 layout)
      (sys::%mo-set class 6
                    (sys:%make-struct-type (sys::%class-name class)
                                           (remove t (mapcar #'sys::%class-name (sys::%class-cpl class)))
                                           (cons layout names) nil))
      (setf (gethash (sys::%class-stype class) sys::*stype-classes*) class))))

(defun sys::%update-subclasses (class)
  ;; An explicit work list: hierarchies may be deep.
  (let ((todo (copy-list (sys::%class-direct-subclasses class))) (seen nil))
    (loop while todo
          do (let ((c (pop todo)))
               (unless (member c seen :test #'eq)
                 (push c seen)
                 (sys::%finalize-class c)
                 (dolist (s (sys::%class-direct-subclasses c)) (push s todo)))))))

(defun sys::%ensure-class (name supers direct-slots direct-default-initargs documentation)
  (when (and (find-class name nil)
             (not (eq (type-of (find-class name)) 'standard-class)))
    (error "DEFCLASS ~S: ~S already names a ~(~A~), which DEFCLASS cannot redefine."
           name name (type-of (find-class name))))
  (let* ((supers (mapcar (lambda (s)
                           (or (find-class s nil)
                               (error "DEFCLASS ~S: the superclass ~S is not defined." name s)))
                         (or supers '(standard-object))))
         (existing (find-class name nil))
         (class (or existing (sys::%make-class-object 'standard-class name supers))))
    (dolist (s supers)
      (when (eq (type-of s) 'built-in-class)
        ;; STREAM is the one built-in class a standard class may inherit
        ;; from: Gray streams (prelude/gray-streams.lisp) are streams.
        (unless (member (sys::%class-name s) '(t stream))
          (error "DEFCLASS ~S: the built-in class ~S cannot be a superclass." name (sys::%class-name s)))))
    ;; Checked before anything changes: a failed redefinition leaves the class as it was.
    (dolist (s supers)
      (when (member class (sys::%class-cpl s) :test #'eq)
        (error "DEFCLASS ~S: ~S cannot be its own superclass (through ~S)." name name (sys::%class-name s))))
    (when existing
      (dolist (old (sys::%class-direct-superclasses class))
        (sys::%mo-set old 8 (remove class (sys::%class-direct-subclasses old) :test #'eq))))
    (dolist (s supers)
      (unless (member class (sys::%class-direct-subclasses s) :test #'eq)
        (sys::%mo-set s 8 (cons class (sys::%class-direct-subclasses s)))))
    ;; A class slot keeps its value across a redefinition.
    (dolist (sd direct-slots)
      (when (eq (sys::%sd-allocation sd) :class)
        (let ((old (and existing
                        (find-if (lambda (o) (and (eq (sys::%sd-name o) (sys::%sd-name sd))
                                                  (eq (sys::%sd-allocation o) :class)))
                                 (sys::%class-direct-slots class)))))
          (setf (sys::%sd-location sd)
                (if old
                    (sys::%sd-location old)
                    (cons (sys::%sd-name sd)
                          (if (sys::%sd-initfunction sd) (funcall (sys::%sd-initfunction sd)) 'sys::%unbound)))))))
    (sys::%mo-set class 2 supers)
    (sys::%mo-set class 3 direct-slots)
    (sys::%mo-set class 9 documentation)
    (sys::%mo-set class 10 direct-default-initargs)
    (setf (gethash name sys::*class-table*) class)
    (sys::%finalize-class class)
    (when existing (sys::%update-subclasses class))
    (sys::%flush-all-caches)
    class))

;;; Instances.

;; Bring an obsolete instance to its class's current layout: values move
;; by slot name, added slots start unbound, then
;; UPDATE-INSTANCE-FOR-REDEFINED-CLASS initializes them.
(defun sys::%update-obsolete-instance (object class)
  (let* ((old-layout (sys:%instance-ref object 0 nil))
         (old-names (get old-layout 'sys::slots))
         (new-names (get (sys::%class-layout class) 'sys::slots))
         (values nil) (discarded nil) (plist nil))
    (let ((i 1))
      (dolist (n old-names)
        (push (cons n (sys:%instance-ref object i 'sys::%unbound)) values)
        (setq i (+ i 1))))
    (sys:%instance-resize object (+ 1 (length new-names)))
    (sys:%instance-set object 0 (sys::%class-layout class))
    (let ((i 1))
      (dolist (n new-names)
        (let ((old (assoc n values :test #'eq)))
          (if (and old (not (eq (cdr old) 'sys::%unbound)))
              (sys:%instance-set object i (cdr old))
              (sys:%instance-set object i nil t)))
        (setq i (+ i 1))))
    (dolist (v values)
      (unless (member (car v) new-names :test #'eq)
        (push (car v) discarded)
        (unless (eq (cdr v) 'sys::%unbound)
          (setq plist (list* (car v) (cdr v) plist)))))
    (update-instance-for-redefined-class
     object
     (remove-if (lambda (n) (member n old-names :test #'eq)) new-names)
     (reverse discarded)
     plist)
    object))

(defun sys::%current-instance (object)
  ;; OBJECT's class, after updating OBJECT if its class was redefined.
  (let ((class (class-of object)))
    (when (and (eq (type-of class) 'standard-class)
               (sys::%class-layout class)
               (not (eq (sys:%instance-ref object 0 nil) (sys::%class-layout class))))
      (sys::%update-obsolete-instance object class))
    class))

(defun sys::%slot-location (object name)
  ;; -> (values class location), location an index into OBJECT, a class
  ;; slot's cell, (:struct . index) for a structure, or NIL.
  (let ((class (sys::%current-instance object)))
    (cond ((eq (type-of class) 'standard-class)
           (let ((sd (sys::%find-slot-definition class name)))
             (values class (and sd (sys::%sd-location sd)))))
          ((member (type-of class) '(structure-class sys::condition-class))
           (let ((i (position name (sys:%struct-type-slots (sys::%class-stype class)))))
             (values class (and i (cons :struct i)))))
          (t (values class nil)))))

(defun sys::%slot-value-slow (object name)
  (multiple-value-bind (class loc) (sys::%slot-location object name)
    (let ((v (cond ((null loc) (return-from sys::%slot-value-slow
                                 (values (slot-missing class object name 'slot-value))))
                   ((integerp loc) (sys:%instance-ref object loc 'sys::%unbound))
                   ((eq (car loc) :struct) (sys:%struct-ref object (cdr loc) nil))
                   (t (cdr loc)))))
      (if (eq v 'sys::%unbound)
          (values (slot-unbound class object name))
          v))))

(defun slot-value (object slot-name)
  (let ((v (sys:%slot-ref object slot-name 'sys::%miss)))
    (if (eq v 'sys::%miss) (sys::%slot-value-slow object slot-name) v)))

(defun sys::%check-slot-type (class name value)
  (let ((sd (and (eq (type-of class) 'standard-class) (sys::%find-slot-definition class name))))
    (when (and sd (sys::%sd-type sd) (not (eq (sys::%sd-type sd) t))
               (not (typep value (sys::%sd-type sd))))
      (error 'type-error :datum value :expected-type (sys::%sd-type sd)))))

(defun sys::%set-slot-value (object slot-name value)
  (let ((r (sys:%slot-set object slot-name value 'sys::%miss)))
    (if (eq r 'sys::%miss)
        (multiple-value-bind (class loc) (sys::%slot-location object slot-name)
          (cond ((null loc) (slot-missing class object slot-name 'setf value) value)
                (t (sys::%check-slot-type class slot-name value)
                   (cond ((integerp loc) (sys:%instance-set object loc value))
                         ((eq (car loc) :struct) (sys:%struct-set object (cdr loc) value nil))
                         (t (rplacd loc value)))
                   value)))
        value)))

(defun (setf slot-value) (value object slot-name)
  (sys::%set-slot-value object slot-name value))
(sys::%putprop 'slot-value 'sys::setf-expander
               (lambda (args value) (list 'sys::%set-slot-value (car args) (car (cdr args)) value)))

(defun slot-boundp (instance slot-name)
  (multiple-value-bind (class loc) (sys::%slot-location instance slot-name)
    (cond ((null loc) (values (slot-missing class instance slot-name 'slot-boundp)))
          ((integerp loc) (not (eq (sys:%instance-ref instance loc 'sys::%unbound) 'sys::%unbound)))
          ((eq (car loc) :struct) t)
          (t (not (eq (cdr loc) 'sys::%unbound))))))

(defun slot-makunbound (instance slot-name)
  (multiple-value-bind (class loc) (sys::%slot-location instance slot-name)
    (cond ((null loc) (slot-missing class instance slot-name 'slot-makunbound))
          ((integerp loc) (sys:%instance-set instance loc nil t))
          ((eq (car loc) :struct)
           (error "The slot ~S of the structure ~S cannot be made unbound." slot-name instance))
          (t (rplacd loc 'sys::%unbound)))
    instance))

(defun slot-exists-p (object slot-name)
  (multiple-value-bind (class loc) (sys::%slot-location object slot-name)
    (declare (ignore class))
    (if loc t nil)))

(defun sys::%allocate-standard-instance (class)
  (unless (sys::%class-stype class)
    (error "~S is not a class whose instances can be allocated." (sys::%class-name class)))
  (sys:%allocate-instance (sys::%class-stype class)))
