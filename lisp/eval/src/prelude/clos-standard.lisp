;;;; The prelude: CLOS, part 3 of 3: the standard generic functions (object
;;;; creation and initialization, slot access protocol, printing,
;;;; redefinition) and the defining macros DEFCLASS, DEFGENERIC, DEFMETHOD,
;;;; WITH-SLOTS and WITH-ACCESSORS.
;;;;
;;;; Printing: STANDARD-OBJECT's structure type has the PRINT-OBJECT
;;;; dispatcher as its print method, so the printer calls PRINT-OBJECT for
;;;; every instance (printing.rs); a PRINT-OBJECT method on a structure or
;;;; condition class installs the dispatcher on that type the same way
;;;; (SYS::%METHOD-ADDED), keeping a condition's :REPORT for the default method.

(define-condition unbound-slot (cell-error)
  ((instance :initarg :instance :reader unbound-slot-instance))
  (:report (lambda (condition stream)
             (format stream "The slot ~S is unbound in the object ~S."
                     (cell-error-name condition) (unbound-slot-instance condition)))))

(defun sys::%print-object-dispatcher (object stream depth)
  (declare (ignore depth))
  (print-object object stream))

(defun sys::%print-object-condition-dispatcher (condition stream)
  (print-object condition stream))

;; The print method a structure or condition type had before PRINT-OBJECT
;; took its place (:PRINT-FUNCTION, :REPORT), nearest along the precedence list.
(defvar sys::*original-reports* (make-hash-table :test 'eq))

(defun sys::%original-report (class)
  (dolist (c (sys::%class-cpl class) nil)
    (let ((stype (sys::%class-stype c)))
      (when stype
        (multiple-value-bind (r found) (gethash stype sys::*original-reports*)
          (if found
              (when r (return r))
              (let ((own (sys:%struct-type-report-of stype)))
                (when (and own (not (eq own #'sys::%print-object-dispatcher))
                           (not (eq own #'sys::%print-object-condition-dispatcher)))
                  (return own)))))))))

(defun sys::%method-added (gf method)
  (when (eq (sys::%gf-name gf) 'print-object)
    (let ((class (car (sys::%method-specializers method))))
      (when (and (not (consp class))
                 (member (type-of class) '(structure-class sys::condition-class)))
        (let* ((stype (sys::%class-stype class))
               (own (sys:%struct-type-report-of stype))
               (condition (eq (type-of class) 'sys::condition-class))
               (dispatcher (if condition #'sys::%print-object-condition-dispatcher
                               #'sys::%print-object-dispatcher)))
          (unless (eq own dispatcher)
            (setf (gethash stype sys::*original-reports*) own)
            (sys:%struct-type-set-report stype dispatcher))))))
  (when (member (sys::%gf-name gf) '(initialize-instance shared-initialize allocate-instance
                                     reinitialize-instance))
    (setq sys::*initarg-generation* (+ sys::*initarg-generation* 1))))

;;; The defining macros. Malformed definitions signal PROGRAM-ERROR.

(defun sys::%definition-error (control &rest arguments)
  (error 'sys::simple-program-error :format-control control :format-arguments arguments))

(defvar sys::*lambda-list-keywords* '(&optional &rest &key &aux &allow-other-keys &body))

(defun sys::%body-parts (body)
  ;; -> (values documentation declarations forms)
  (let ((doc nil) (decls nil))
    (loop (cond ((and (stringp (car body)) (cdr body) (null doc)) (setq doc (pop body)))
                ((and (consp (car body)) (eq (car (car body)) 'declare)) (push (pop body) decls))
                (t (return))))
    (values doc (reverse decls) body)))

(defun sys::%mentions-function-p (form names)
  ;; Whether FORM contains (FUNCTION name) for one of NAMES; an explicit
  ;; stack, at most 100000 conses visited (then assume it does).
  (let ((stack (list form)) (budget 100000))
    (loop while stack
          do (let ((x (pop stack)))
               (when (consp x)
                 (when (< (setq budget (- budget 1)) 0) (return t))
                 (when (and (eq (car x) 'function) (consp (cdr x)) (member (car (cdr x)) names))
                   (return t))
                 (push (car x) stack)
                 (push (cdr x) stack))))))

(defun sys::%method-macrolet (gf-name required restp body)
  ;; CALL-NEXT-METHOD and NEXT-METHOD-P over the chain in SYS::.NEXT.: local
  ;; macros, so no closure is made per call, unless the body takes them as
  ;; functions with #'.
  (let ((again (if restp
                   `(apply (car sys::.next.) (cdr sys::.next.) ,@required sys::.more.)
                   `(funcall (car sys::.next.) (cdr sys::.next.) ,@required)))
        (args (if restp `(list* ,@required sys::.more.) `(list ,@required))))
    (if (sys::%mentions-function-p body '(call-next-method next-method-p))
        `(flet ((call-next-method (&rest arguments)
                  (if arguments
                      (sys::%call-next-method-with sys::.next. arguments ',gf-name)
                      (if sys::.next. ,again (sys::%no-next-method ',gf-name ,args))))
                (next-method-p () (if sys::.next. t nil)))
           ,@body)
    `(macrolet ((call-next-method (&rest arguments)
                  (if arguments
                      (list 'sys::%call-next-method-with 'sys::.next. (cons 'list arguments) '',gf-name)
                      '(if sys::.next. ,again (sys::%no-next-method ',gf-name ,args))))
                (next-method-p () '(if sys::.next. t nil)))
       ,@body))))

(defun sys::%with-allow-other-keys (lambda-list)
  (if (and (member '&key lambda-list) (not (member '&allow-other-keys lambda-list)))
      (let ((out nil) (aux nil))
        (dolist (p lambda-list)
          (cond ((eq p '&aux) (setq aux t) (push '&allow-other-keys out) (push p out))
                (t (push p out))))
        (unless aux (push '&allow-other-keys out))
        (reverse out))
      lambda-list))

(defmacro defmethod (name &rest rest)
  (let ((qualifiers nil))
    (loop while (and rest (car rest) (atom (car rest))) do (push (pop rest) qualifiers))
    (setq qualifiers (reverse qualifiers))
    (unless (and rest (listp (car rest)))
      (sys::%definition-error "DEFMETHOD ~S: a specialized lambda list is missing." name))
    (let ((lambda-list (car rest)) (required nil) (specializers nil) (tail nil))
      (do ((l lambda-list (cdr l)))
          ((null l))
        (when (member (car l) sys::*lambda-list-keywords*)
          (setq tail l)
          (return))
        (let ((p (car l)))
          (push (if (consp p) (car p) p) required)
          (push (if (consp p) (car (cdr p)) t) specializers)))
      (setq required (reverse required) specializers (reverse specializers))
      (multiple-value-bind (doc decls body) (sys::%body-parts (cdr rest))
        (let* ((block-name (if (consp name) (car (cdr name)) name))
               (inner (sys::%method-macrolet name required tail
                                             `((block ,block-name ,@body))))
               (function
                 `(sys::named-lambda (method ,name ,@qualifiers ,specializers)
                      (sys::.next. ,@required ,@(when tail '(&rest sys::.more.)))
                    (declare (ignorable sys::.next. ,@required))
                    ,@(if tail
                          `((destructuring-bind ,(sys::%with-allow-other-keys tail) sys::.more.
                              ,@decls ,inner))
                          `(,@decls ,inner)))))
          `(sys::%defmethod ',name ',qualifiers
                            (list ,@(mapcar (lambda (s)
                                              (if (and (consp s) (eq (car s) 'eql))
                                                  `(list 'eql ,(car (cdr s)))
                                                  `',s))
                                            specializers))
                            '(,@required ,@tail)
                            ,function ,doc))))))

(defmacro defgeneric (name lambda-list &rest options)
  (let ((doc nil) (methods nil) (combination '(standard)))
    (dolist (o options)
      (case (car o)
        (:documentation (setq doc (car (cdr o))))
        (:method (push `(defmethod ,name ,@(cdr o)) methods))
        (:method-combination
         (unless (or (eq (car (cdr o)) 'standard) (member (car (cdr o)) sys::*short-combinations*))
           (sys::%definition-error "DEFGENERIC ~S: unknown method combination ~S (standard, ~{~(~A~)~^, ~} are built in)."
                  name (car (cdr o)) sys::*short-combinations*))
         (setq combination (cdr o)))
        ((declare :argument-precedence-order :generic-function-class :method-class) nil)
        (t (sys::%definition-error "DEFGENERIC ~S: unknown option ~S." name o))))
    `(progn
       (ensure-generic-function ',name :lambda-list ',lambda-list
                                       :documentation ',doc :method-combination ',combination)
       ,@(reverse methods)
       (fdefinition ',name))))

(defun sys::%parse-slot-spec (class-name spec)
  ;; -> (values slot-form readers writers)
  (let* ((name (if (consp spec) (car spec) spec))
         (plist (if (consp spec) (cdr spec) nil))
         (initargs nil) (initform nil) (initform-p nil) (readers nil) (writers nil)
         (allocation :instance) (seen-allocation nil) (type nil) (doc nil))
    (unless (and name (symbolp name))
      (sys::%definition-error "DEFCLASS ~S: the slot specification ~S does not start with a slot name." class-name spec))
    (loop while plist
          do (let ((k (pop plist)) (v (pop plist)))
               (case k
                 (:initarg (push v initargs))
                 (:initform (when initform-p
                              (sys::%definition-error "DEFCLASS ~S: the slot ~S has two :INITFORMs." class-name name))
                  (setq initform v initform-p t))
                 (:reader (push v readers))
                 (:writer (push v writers))
                 (:accessor (push v readers) (push `(setf ,v) writers))
                 (:allocation (when seen-allocation
                                (sys::%definition-error "DEFCLASS ~S: the slot ~S has two :ALLOCATIONs." class-name name))
                  (setq allocation v seen-allocation t))
                 (:type (when type
                          (sys::%definition-error "DEFCLASS ~S: the slot ~S has two :TYPEs." class-name name))
                  (setq type v))
                 (:documentation (when doc
                                   (sys::%definition-error "DEFCLASS ~S: the slot ~S has two :DOCUMENTATIONs." class-name name))
                  (setq doc v))
                 (t (sys::%definition-error "DEFCLASS ~S: unknown slot option ~S in ~S." class-name k spec)))))
    (values `(vector ',name ',(reverse initargs) ',initform
                     ,(if initform-p `(lambda () ,initform) nil)
                     ',allocation ',type ',doc nil)
            (reverse readers) (reverse writers)
            name)))

(defmacro defclass (name superclasses slots &rest options)
  (let ((slot-forms nil) (accessors nil) (defaults nil) (doc nil) (seen nil))
    (dolist (spec slots)
      (let ((n (if (consp spec) (car spec) spec)))
        (when (member n seen)
          (sys::%definition-error "DEFCLASS ~S: the slot ~S is defined twice." name n))
        (push n seen)))
    (let ((options nil))
      (dolist (o options)
        (when (member (car o) options)
          (sys::%definition-error "DEFCLASS ~S: the option ~S is given twice." name (car o)))
        (push (car o) options)))
    (dolist (spec slots)
      (multiple-value-bind (form readers writers slot) (sys::%parse-slot-spec name spec)
        (push form slot-forms)
        (dolist (r readers) (push `(sys::%define-reader ',r ',name ',slot) accessors))
        (dolist (w writers) (push `(sys::%define-writer ',w ',name ',slot) accessors))))
    (dolist (o options)
      (case (car o)
        (:default-initargs
         (let ((l (cdr o)) (keys nil))
           (loop while l
                 do (let ((k (pop l)) (v (pop l)))
                      (when (member k keys)
                        (sys::%definition-error "DEFCLASS ~S: the default initarg ~S is given twice." name k))
                      (push k keys)
                      (push `(list ',k ',v (lambda () ,v)) defaults)))))
        (:documentation (setq doc (car (cdr o))))
        (:metaclass nil)
        (t (sys::%definition-error "DEFCLASS ~S: unknown class option ~S." name o))))
    `(progn
       (sys::%ensure-class ',name ',superclasses (list ,@(reverse slot-forms))
                           (list ,@(reverse defaults)) ',doc)
       ,@(reverse accessors)
       (find-class ',name))))

(defun sys::%define-reader (gf-name class-name slot)
  (unless (gethash gf-name sys::*gf-by-name*)
    (ensure-generic-function gf-name :lambda-list '(object)))
  (sys::%defmethod gf-name nil (list class-name) '(object)
                   (sys::named-lambda sys::%effective-method (next object)
                     (declare (ignore next))
                     (let ((v (sys:%slot-ref object slot 'sys::%miss)))
                       (if (eq v 'sys::%miss) (sys::%slot-value-slow object slot) v)))
                   nil))

(defun sys::%define-writer (gf-name class-name slot)
  (unless (gethash gf-name sys::*gf-by-name*)
    (ensure-generic-function gf-name :lambda-list '(new-value object)))
  (let ((typed (let ((sd (sys::%find-slot-definition (find-class class-name) slot)))
                 (and sd (sys::%sd-type sd) (not (eq (sys::%sd-type sd) t))))))
    (sys::%defmethod gf-name nil (list t class-name) '(new-value object)
                     (if typed
                         (sys::named-lambda sys::%effective-method (next value object)
                           (declare (ignore next))
                           (sys::%check-slot-type (class-of object) slot value)
                           (sys::%set-slot-value object slot value))
                         (sys::named-lambda sys::%effective-method (next value object)
                           (declare (ignore next))
                           (sys::%set-slot-value object slot value)))
                     nil)))

(defmacro with-slots (slot-entries instance &body body)
  (let ((g (gensym "INSTANCE")))
    `(let ((,g ,instance))
       (symbol-macrolet ,(mapcar (lambda (e)
                                   (if (consp e)
                                       `(,(car e) (slot-value ,g ',(car (cdr e))))
                                       `(,e (slot-value ,g ',e))))
                                 slot-entries)
         ,@body))))

(defmacro with-accessors (slot-entries instance &body body)
  (let ((g (gensym "INSTANCE")))
    `(let ((,g ,instance))
       (symbol-macrolet ,(mapcar (lambda (e) `(,(car e) (,(car (cdr e)) ,g))) slot-entries)
         ,@body))))

(defgeneric class-name (class))
(defmethod class-name ((class class)) (sys::%mo-ref class 1))
(defgeneric (setf class-name) (new-value class))
(defmethod (setf class-name) (new-value (class class)) (sys::%mo-set class 1 new-value))

;;; Creation and initialization.

(defgeneric allocate-instance (class &rest initargs))
(defmethod allocate-instance ((class t) &rest initargs)
  (declare (ignore initargs))
  (sys::%allocate-standard-instance class))

(defun sys::%initarg-slot-value (sd initargs)
  ;; The value of SD's first initarg present in INITARGS, or SYS::%UNBOUND.
  (let ((l initargs) (keys (sys::%sd-initargs sd)))
    (if keys
        (loop (when (null l) (return 'sys::%unbound))
              (when (sys:%memq (car l) keys) (return (car (cdr l))))
              (setq l (cdr (cdr l))))
        'sys::%unbound)))

(defun sys::%initialize-slots (instance class slot-names initargs)
  ;; The standard SHARED-INITIALIZE: initargs first, then the initforms of
  ;; the unbound slots named by SLOT-NAMES (T: all). Allocates nothing.
  (dolist (sd (sys::%class-slots class))
    (let ((loc (sys::%sd-location sd))
          (value (sys::%initarg-slot-value sd initargs)))
      (when (and (eq value 'sys::%unbound)
                 (sys::%sd-initfunction sd)
                 (or (eq slot-names t) (sys:%memq (sys::%sd-name sd) slot-names))
                 (if (integerp loc)
                     (eq (sys:%instance-ref instance loc 'sys::%unbound) 'sys::%unbound)
                     (not (slot-boundp instance (sys::%sd-name sd)))))
        (setq value (funcall (sys::%sd-initfunction sd))))
      (unless (eq value 'sys::%unbound)
        (when (sys::%sd-type sd) (sys::%check-slot-type class (sys::%sd-name sd) value))
        (if (integerp loc)
            (sys:%instance-set instance loc value)
            (setf (slot-value instance (sys::%sd-name sd)) value)))))
  instance)

(defgeneric shared-initialize (instance slot-names &rest initargs &key &allow-other-keys))
(defmethod shared-initialize ((instance t) slot-names &rest initargs)
  (if (eq (type-of (class-of instance)) 'standard-class)
      (sys::%initialize-slots (progn (sys::%current-instance instance) instance)
                              (class-of instance) slot-names initargs)
      instance))

(defgeneric initialize-instance (instance &rest initargs &key &allow-other-keys))
(defmethod initialize-instance ((instance t) &rest initargs)
  (apply #'shared-initialize instance t initargs))

(defgeneric reinitialize-instance (instance &rest initargs &key &allow-other-keys))
(defmethod reinitialize-instance ((instance t) &rest initargs)
  (sys::%check-initargs (class-of instance) initargs
                        (sys::%valid-initargs (class-of instance) '(reinitialize-instance shared-initialize)))
  (apply #'shared-initialize instance nil initargs))

;;; Valid initialization arguments: the slots' initargs and the keywords
;;; of the applicable methods, cached per class until a method of those
;;; generic functions or a class changes.

(defun sys::%method-keys (gf-name class)
  ;; -> T when some applicable method allows other keys, else its keywords.
  (let ((keys nil))
    (dolist (m (sys::%gf-methods (sys::%find-gf gf-name)) keys)
      (let ((spec (car (sys::%method-specializers m))))
        (when (and (not (consp spec)) (member spec (sys::%class-cpl class)))
          (let ((ll (sys::%mo-ref m 4)) (mode nil))
            (when (member '&allow-other-keys ll) (return t))
            (dolist (p ll)
              (cond ((member p sys::*lambda-list-keywords*) (setq mode p))
                    ((eq mode '&key)
                     (push (cond ((and (consp p) (consp (car p))) (car (car p)))
                                 (t (intern (symbol-name (if (consp p) (car p) p)) "KEYWORD")))
                           keys))))))))))

(defun sys::%valid-initargs (class gf-names)
  ;; -> T or the list of valid initargs; cached in the class's field 12 as
  ;; (generation gf-names . keys).
  (let ((cached (sys::%mo-ref class 12)))
    (if (and (consp cached) (eql (car cached) sys::*initarg-generation*)
             (equal (car (cdr cached)) gf-names))
        (cdr (cdr cached))
        (let ((keys (list :allow-other-keys)))
          (dolist (sd (sys::%class-slots class))
            (dolist (k (sys::%sd-initargs sd)) (push k keys)))
          (dolist (d (sys::%class-default-initargs class)) (push (car d) keys))
          (dolist (g gf-names)
            (let ((more (sys::%method-keys g class)))
              (if (eq more t) (setq keys t) (unless (eq keys t) (setq keys (append more keys))))
              (when (eq keys t) (return))))
          (sys::%mo-set class 12 (list* sys::*initarg-generation* gf-names keys))
          keys))))

(defun sys::%plain-initialization-p (class)
  ;; True when only the standard methods of ALLOCATE-INSTANCE,
  ;; INITIALIZE-INSTANCE and SHARED-INITIALIZE apply to CLASS's instances:
  ;; MAKE-INSTANCE then initializes the slots itself, without the generic
  ;; calls and their argument lists. Cached like the valid initargs.
  (let ((cached (sys::%mo-ref class 13)))
    (if (and (consp cached) (eql (car cached) sys::*initarg-generation*))
        (cdr cached)
        (let ((plain (dolist (g '(allocate-instance initialize-instance shared-initialize) t)
                       (unless (= 1 (length (sys::%gf-methods (sys::%find-gf g))))
                         (let ((cpl (sys::%class-cpl class)) (tc (find-class t)))
                           (dolist (m (sys::%gf-methods (sys::%find-gf g)))
                             (let ((spec (car (sys::%method-specializers m))))
                               (when (or (consp spec)
                                         (and (member spec cpl) (not (eq spec tc)))
                                         (and (eq spec tc) (method-qualifiers m))
                                         (and (eq g 'allocate-instance) (not (eq spec tc))))
                                 (return-from sys::%plain-initialization-p
                                   (progn (sys::%mo-set class 13 (cons sys::*initarg-generation* nil))
                                          nil))))))))))
          (sys::%mo-set class 13 (cons sys::*initarg-generation* plain))
          plain))))

(defun sys::%check-initargs (class initargs valid)
  ;; VALID: T or the valid initargs (SYS::%VALID-INITARGS).
  (unless (evenp (length initargs))
    (error "Odd number of initialization arguments for ~S: ~S." (class-name class) initargs))
  (unless (or (eq valid t) (getf initargs :allow-other-keys))
    (do ((l initargs (cdr (cdr l))))
        ((null l))
      (unless (sys:%memq (car l) valid)
        (error "Invalid initialization argument ~S in call for class ~S." (car l) (class-name class))))))

;; A function, not a generic function: a generic MAKE-INSTANCE would copy
;; its argument list twice per call (the discriminator's and the method's
;; &REST). Its helper is transparent to the profiler, so an instance is
;; charged to MAKE-INSTANCE.
(defun make-instance (class &rest initargs)
  (sys::%make-standard-instance (if (symbolp class) (find-class class) class) initargs))

(sys:%set-fdefinition
 'sys::%make-standard-instance
 (sys::named-lambda sys::%effective-method (class initargs)
    (unless (eq (type-of class) 'standard-class)
      (error "MAKE-INSTANCE: ~S is not a standard class (structures are made by their constructors)."
             (if (sys::%classp class) (class-name class) class)))
    (when (sys::%class-default-initargs class)
      (let ((extra nil))
        (dolist (d (sys::%class-default-initargs class))
          (unless (sys::%plist-has initargs (car d))
            (push (car d) extra)
            (push (funcall (car (cdr (cdr d)))) extra)))
        (when extra (setq initargs (append initargs (reverse extra))))))
    (sys::%check-initargs class initargs
                          (let ((cached (sys::%mo-ref class 14)))
                            (if (and (consp cached) (eql (car cached) sys::*initarg-generation*))
                                (cdr cached)
                                (let ((valid (sys::%valid-initargs
                                              class '(initialize-instance shared-initialize allocate-instance))))
                                  (sys::%mo-set class 14 (cons sys::*initarg-generation* valid))
                                  valid))))
    (if (sys::%plain-initialization-p class)
        ;; The builtin allocates, so the profiler charges the instance to MAKE-INSTANCE.
        (sys::%initialize-slots (sys:%allocate-instance (sys::%class-stype class)) class t initargs)
        (let ((instance (apply #'allocate-instance class initargs)))
          (apply #'initialize-instance instance initargs)
          instance))))

(defun sys::%plist-has (plist key)
  (loop while plist
        do (when (eq (car plist) key) (return t))
           (setq plist (cdr (cdr plist)))))

;;; Redefinition.

(defgeneric update-instance-for-redefined-class
    (instance added-slots discarded-slots property-list &rest initargs &key &allow-other-keys))
(defmethod update-instance-for-redefined-class ((instance t) added-slots discarded-slots property-list
                                                &rest initargs)
  (declare (ignore discarded-slots property-list))
  (apply #'shared-initialize instance added-slots initargs))

(defun sys::%slot-names (class)
  (mapcar (lambda (sd) (sys::%sd-name sd)) (sys::%class-slots class)))

(defgeneric update-instance-for-different-class
    (previous current &rest initargs &key &allow-other-keys))
(defmethod update-instance-for-different-class ((previous t) current &rest initargs)
  ;; The added slots: local slots of the new class that the old one lacks.
  (let ((old (sys::%slot-names (class-of previous))))
    (apply #'shared-initialize current
           (remove-if (lambda (n) (member n old)) (sys::%instance-slot-names (class-of current)))
           initargs)))

(defgeneric change-class (instance new-class &rest initargs &key &allow-other-keys))
(defmethod change-class ((instance standard-object) (new-class symbol) &rest initargs)
  (apply #'change-class instance (find-class new-class) initargs))
(defmethod change-class ((instance standard-object) (new-class class) &rest initargs)
  (unless (eq (type-of new-class) 'standard-class)
    (error "CHANGE-CLASS: ~S is not a standard class." new-class))
  (let* ((old-class (sys::%current-instance instance))
         (kept (let ((out nil))
                 (dolist (n (sys::%slot-names old-class) out)
                   (when (slot-boundp instance n) (push (cons n (slot-value instance n)) out)))))
         (previous (sys:%instance-change-type instance (sys::%class-stype new-class)))
         (i 1))
    ;; Values of the slots both classes have (local in the new one) are kept.
    (dolist (n (sys::%instance-slot-names new-class))
      (let ((v (assoc n kept)))
        (when v (sys:%instance-set instance i (cdr v))))
      (setq i (+ i 1)))
    (apply #'update-instance-for-different-class previous instance initargs)
    instance))

(defgeneric make-instances-obsolete (class))
(defmethod make-instances-obsolete ((class t))
  (let ((c (if (symbolp class) (find-class class) class)))
    (sys::%mo-set c 11 nil)
    (sys::%finalize-class c)
    class))

;;; The slot access protocol's error cases.

(defgeneric slot-missing (class object slot-name operation &optional new-value))
(defmethod slot-missing ((class t) object slot-name operation &optional new-value)
  (if (eq operation 'setf)
      (error "When attempting to set the slot's value to ~S (SETF of SLOT-VALUE), the slot ~S is missing from the object ~S."
             new-value slot-name object)
      (error "When attempting to ~A, the slot ~S is missing from the object ~S."
             (case operation
               (slot-value "read the slot's value (slot-value)")
               (slot-boundp "test to see if slot is bound (slot-boundp)")
               (t "make the slot unbound (slot-makunbound)"))
             slot-name object)))

(defgeneric slot-unbound (class instance slot-name))
(defmethod slot-unbound ((class t) instance slot-name)
  (error 'unbound-slot :name slot-name :instance instance))

(defgeneric no-applicable-method (generic-function &rest function-arguments))
(defmethod no-applicable-method ((generic-function t) &rest function-arguments)
  (error "There is no applicable method for the generic function ~S when called with arguments ~S."
         generic-function function-arguments))

(defgeneric no-next-method (generic-function method &rest args))
(defmethod no-next-method ((generic-function t) method &rest args)
  (declare (ignore method))
  (error "There is no next method for the generic function ~S when called with arguments ~S."
         generic-function args))

;;; Printing.

(defgeneric print-object (object stream))
(sys:%struct-type-set-report 'standard-object #'sys::%print-object-dispatcher)

(defun sys::%print-structure (object stream)
  ;; #S(NAME :SLOT value ...), as the printer writes a structure.
  (write-string "#S(" stream)
  (prin1 (type-of object) stream)
  (let ((i 0))
    (dolist (name (sys:%struct-type-slots (sys:%find-struct-type (type-of object))))
      (write-char #\Space stream)
      (prin1 (intern (symbol-name name) "KEYWORD") stream)
      (write-char #\Space stream)
      (prin1 (sys:%struct-ref object i nil) stream)
      (setq i (+ i 1))))
  (write-char #\) stream))

(defmethod print-object ((object t) stream)
  (cond ((sys::%builtin-typep object 'condition)
         (if *print-escape*
             (print-unreadable-object (object stream :type t :identity t))
             (let ((report (sys::%original-report (class-of object))))
               (cond ((stringp report) (write-string report stream))
                     (report (funcall report object stream))
                     (t (write-string (sys:%condition-static-report object) stream))))))
        ((sys::%builtin-typep object 'standard-object)
         (print-unreadable-object (object stream :type t :identity t)))
        ((sys::%builtin-typep object 'structure-object)
         (let ((report (sys::%original-report (class-of object))))
           (if report
               (funcall report object stream 0)
               (sys::%print-structure object stream))))
        (t (write object :stream stream)))
  object)

(defmethod print-object ((object class) stream)
  (print-unreadable-object (object stream :type t)
    (prin1 (class-name object) stream))
  object)

(defmethod print-object ((object standard-generic-function) stream)
  (print-unreadable-object (object stream :type t)
    (prin1 (sys::%gf-name object) stream)
    (format stream " (~D)" (length (sys::%gf-methods object))))
  object)

(defmethod print-object ((object standard-method) stream)
  (print-unreadable-object (object stream :type t :identity t)
    (let ((gf (sys::%mo-ref object 1)))
      (format stream "~S ~{~S ~}~S"
              (and gf (sys::%gf-name gf)) (method-qualifiers object)
              (mapcar (lambda (s) (if (consp s) s (class-name s))) (sys::%method-specializers object)))))
  object)

;;; Describing.

(defgeneric describe-object (object stream))
(defmethod describe-object ((object t) stream)
  (let ((class (class-of object)))
    (format stream "~S~%  [~(~A~)]~%" object (class-name class))
    (when (member (type-of class) '(standard-class structure-class sys::condition-class))
      (let ((slots (if (eq (type-of class) 'standard-class)
                       (mapcar (lambda (sd) (sys::%sd-name sd)) (sys::%class-slots class))
                       (sys:%struct-type-slots (sys::%class-stype class)))))
        (when slots
          (format stream "~%Slots:~%")
          (dolist (s slots)
            (if (slot-boundp object s)
                (format stream "  ~S = ~S~%" s (slot-value object s))
                (format stream "  ~S = unbound~%" s))))))
    (values)))

;;; DESCRIBE itself is defined with the development functions (devtools.lisp).

;;; Types: class objects as type specifiers, GENERIC-FUNCTION.

(deftype generic-function () '(satisfies sys::%generic-function-p))
(deftype standard-generic-function () '(satisfies sys::%generic-function-p))

(sys:%set-fdefinition 'sys::%typep-slow-basic (symbol-function 'sys::%typep-slow))
(defun sys::%typep-slow (object type)
  (if (sys::%classp type)
      (typep object (class-name type))
      (sys::%typep-slow-basic object type)))

(sys:%set-fdefinition 'sys::%subtypep-basic (symbol-function 'subtypep))
(defun subtypep (type1 type2 &optional environment)
  (sys::%subtypep-basic (if (sys::%classp type1) (class-name type1) type1)
                        (if (sys::%classp type2) (class-name type2) type2)
                        environment))

;;; Condition slot readers and writers as methods (see prelude/conditions.lisp).
(defun sys::%condition-reader (name type slot)
  (eval `(defmethod ,name ((condition ,type)) (sys:%slot-by-name condition ',slot))))

(defun sys::%condition-writer (name type slot)
  (eval `(defmethod ,name (value (condition ,type)) (sys::%set-slot-by-name condition ',slot value))))
