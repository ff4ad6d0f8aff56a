;;;; The prelude: DEFSTRUCT, DEFTYPE, and the Lisp side of TYPEP and SUBTYPEP.
;;;;
;;;; Structure types are the heap's StructType objects (shared with
;;;; conditions): a name, a precedence list (the type, then its :include
;;;; parent, grandparent...) and slot names. DEFSTRUCT also records a
;;;; description (in the type's extra field; on the plist for list/vector
;;;; structures) at macroexpansion time, so a later :INCLUDE sees the
;;;; parent's slots and defaults. Invariant: a keyword or BOA constructor allocates exactly one
;;;; structure (one SYS:%MAKE-INSTANCE call, no argument lists) when its slot
;;;; defaults are constants; the memory profiler's counts depend on it.
;;;;
;;;; TYPEP here wraps the Rust builtin (kept as SYS::%BUILTIN-TYPEP): plain
;;;; symbols that DEFTYPE never named go straight to it; SATISFIES, DEFTYPE
;;;; names and compound types containing them are handled in Lisp.

(sys:%set-fdefinition 'sys::%builtin-typep (symbol-function 'typep))

;;; Expansion-time helpers (only base/conditions/lists and builtins exist
;;; when these run inside the prelude).

(defun sys::%ds-string (x)
  (if (symbolp x) (symbol-name x) x))

(defun sys::%ds-intern (&rest parts)
  ;; The symbol named by the concatenated parts, in the current package
  ;; (CL interns DEFSTRUCT's generated names in *PACKAGE* at expansion time).
  (let ((s (make-string-output-stream)))
    (dolist (p parts) (write-string (sys::%ds-string p) s))
    (values (intern (get-output-stream-string s)))))

(defun sys::%ds-keyword (symbol)
  (values (intern (symbol-name symbol) "KEYWORD")))

(defun sys::%ds-plist-get (plist key default)
  (block nil
    (tagbody
     next
       (when plist
         (when (eq (car plist) key) (return (car (cdr plist))))
         (setq plist (cdr (cdr plist)))
         (go next)))
    default))

(defun sys::%ds-find-slot (name slots)
  (dolist (s slots nil) (when (eq (car s) name) (return s))))

(defun sys::%ds-parse-slot (spec)
  ;; -> (name default read-only), default NIL when absent.
  (let ((name (if (consp spec) (car spec) spec)))
    (unless (and name (symbolp name))
      (error "DEFSTRUCT: the slot description ~S does not start with a slot name (a symbol)" spec)))
  (if (consp spec)
      (list (car spec) (car (cdr spec))
            (sys::%ds-plist-get (cdr (cdr spec)) :read-only nil))
      (list spec nil nil)))

(defun sys::%ds-list-set (list index value)
  (dotimes (i index) (setq list (cdr list)))
  (rplaca list value)
  value)

(defun sys::%ds-description (name)
  ;; Structure types keep their description in the type object's extra
  ;; field (their names' plists stay empty, for TYPEP's fast path); typed
  ;; (list/vector) ones, which are no types, on the plist.
  (let* ((type (sys:%find-struct-type name))
         (desc (if type (sys:%struct-type-extra type) (get name 'sys::defstruct-description))))
    (if (and (consp desc) (eq (car desc) name))
        desc
        (error "~S is not a defined structure type" name))))

;;; A description: (name kind tags size slots), kind STRUCTURE, LIST or
;;; VECTOR; tags, for named list/vector structures, a list of (index name):
;;; each named ancestor keeps its own name cell, as in SBCL; slots a list of
;;; (slot-name default-form read-only index).

(defun sys::%ds-lambda-vars (lambda-list)
  ;; The variables a BOA lambda list binds.
  (let ((vars nil))
    (dolist (p lambda-list)
      (cond ((member-eql p '(&optional &rest &key &aux &allow-other-keys)) nil)
            ((symbolp p) (push p vars))
            ((consp (car p)) (push (car (cdr (car p))) vars))
            (t (push (car p) vars)
               (when (cdr (cdr p)) (push (car (cdr (cdr p))) vars)))))
    vars))

(defun sys::%ds-boa-lambda-list (lambda-list slots)
  ;; &optional and &key parameters without a default take the slot's default.
  (let ((out nil) (mode nil))
    (dolist (p lambda-list)
      (cond ((member-eql p '(&optional &rest &key &aux &allow-other-keys))
             (setq mode p) (push p out))
            ((and (member-eql mode '(&optional &key))
                  (or (symbolp p) (null (cdr p))))
             (let* ((var (if (symbolp p) p (car p)))
                    (slot (sys::%ds-find-slot (if (consp var) (car (cdr var)) var) slots)))
               (push (if (and slot (car (cdr slot))) (list var (car (cdr slot))) p) out)))
            (t (push p out))))
    (sys::%nreverse-list out)))

(defun sys::%ds-make-form (desc type-object values)
  ;; The allocation of one instance from VALUES, a list of forms in slot order.
  (let ((kind (car (cdr desc))))
    (cond ((eq kind 'structure) `(sys:%make-instance ',type-object ,@values))
          (t (let ((cells nil) (tags (car (cdr (cdr desc)))) (size (car (cdr (cdr (cdr desc))))))
               (dotimes (i size) (push nil cells))
               (let ((layout (reverse-internal cells)))
                 (dolist (tag tags)
                   (setq layout (sys::%ds-replace-nth layout (car tag) `',(car (cdr tag)))))
                 (let ((slots (car (cdr (cdr (cdr (cdr desc)))))) (vals values))
                   (dolist (s slots)
                     (setq layout (sys::%ds-replace-nth layout (car (cdr (cdr (cdr s)))) (car vals)))
                     (setq vals (cdr vals))))
                 `(,(if (eq kind 'list) 'list 'vector) ,@layout)))))))

(defun sys::%ds-replace-nth (list n value)
  (let ((out nil) (i 0))
    (dolist (x list) (push (if (= i n) value x) out) (setq i (+ i 1)))
    (sys::%nreverse-list out)))

(defun sys::%ds-constructor (desc type-object ctor)
  (let* ((cname (car ctor))
         (slots (car (cdr (cdr (cdr (cdr desc)))))))
    (if (cdr ctor)
        ;; A BOA constructor: slots its lambda list names take those variables.
        (let* ((ll (sys::%ds-boa-lambda-list (car (cdr ctor)) slots))
               (vars (sys::%ds-lambda-vars ll)))
          `(defun ,cname ,ll
             ,(sys::%ds-make-form desc type-object
                                  (mapcar-internal (lambda (s) (if (member-eql (car s) vars) (car s) (car (cdr s))))
                                                   slots))))
        ;; Keyword constructor; gensym variables so one slot's default
        ;; form cannot see another slot's argument.
        (let ((temps (mapcar-internal (lambda (s) (gensym (symbol-name (car s)))) slots)))
          `(defun ,cname (&key ,@(mapcar-internal
                                   (lambda (s g) `((,(sys::%ds-keyword (car s)) ,g) ,(car (cdr s))))
                                   slots temps))
             ,(sys::%ds-make-form desc type-object temps))))))

(defun sys::%ds-accessors (desc conc-name)
  (let ((name (car desc)) (kind (car (cdr desc))) (out nil))
    (dolist (s (car (cdr (cdr (cdr (cdr desc))))))
      (let ((acc (sys::%ds-intern conc-name (car s)))
            (i (car (cdr (cdr (cdr s))))))
        (cond ((eq kind 'structure)
               (push `(defun ,acc (object) (sys:%struct-ref object ,i ',name)) out)
               (unless (car (cdr (cdr s)))
                 (push `(defun (setf ,acc) (value object) (sys:%struct-set object ,i value ',name)) out)
                 ;; SETF of the accessor expands inline into the slot store.
                 (push `(sys::%putprop ',acc 'sys::setf-expander
                                       (lambda (args value)
                                         (list 'sys:%struct-set (car args) ,i value '',name)))
                       out)))
              ((eq kind 'list)
               (push `(defun ,acc (object) (nth ,i object)) out)
               (unless (car (cdr (cdr s)))
                 (push `(defun (setf ,acc) (value object) (sys::%ds-list-set object ,i value)) out)))
              (t
               (push `(defun ,acc (object) (aref object ,i)) out)
               (unless (car (cdr (cdr s)))
                 (push `(defun (setf ,acc) (value object) (setf (aref object ,i) value)) out))))))
    (sys::%nreverse-list out)))

;; The print method stored in the type (see printing.rs): called with the
;; object, the stream and the depth. A symbol is looked up when printing, so
;; the function may be defined after the structure.
(defun sys::%ds-printer (f depth-p)
  (let ((fn (if (symbolp f) (list 'quote f) (list 'function f))))
    (if depth-p
        `(lambda (object stream depth) (funcall ,fn object stream depth))
        `(lambda (object stream depth) (declare (ignore depth)) (funcall ,fn object stream)))))

(defun sys::%defstruct-expand (name-and-options slot-specs)
  (unless (and (car (if (consp name-and-options) name-and-options (list name-and-options)))
               (symbolp (car (if (consp name-and-options) name-and-options (list name-and-options)))))
    (error "DEFSTRUCT needs a structure name (a symbol), not ~S" name-and-options))
  (let* ((name (if (consp name-and-options) (car name-and-options) name-and-options))
         (options (if (consp name-and-options) (cdr name-and-options) nil))
         (conc-name (sys::%ds-intern name "-"))
         (constructors nil) (constructor-seen nil)
         (copier (sys::%ds-intern "COPY-" name))
         (predicate (sys::%ds-intern name "-P"))
         (include nil) (overrides nil)
         (kind 'structure) (named nil) (offset 0) (printer nil))
    (dolist (o options)
      (let* ((key (if (consp o) (car o) o))
             (args (if (consp o) (cdr o) nil)))
        (case key
          (:conc-name (setq conc-name (if (car args) (car args) "")))
          (:constructor
           (setq constructor-seen t)
           (cond ((null args) (push (list (sys::%ds-intern "MAKE-" name)) constructors))
                 ((null (car args)) nil)
                 (t (push args constructors))))
          (:copier (when args (setq copier (car args))))
          (:predicate (when args (setq predicate (car args))))
          (:include (setq include (car args) overrides (cdr args)))
          (:type (setq kind (let ((ty (car args)))
                              (cond ((eq ty 'list) 'list)
                                    ((or (eq ty 'vector) (and (consp ty) (eq (car ty) 'vector))) 'vector)
                                    (t (error "DEFSTRUCT ~S: unsupported :TYPE ~S" name ty))))))
          (:named (setq named t))
          (:initial-offset (setq offset (car args)))
          (:print-function (when args (setq printer (sys::%ds-printer (car args) t))))
          (:print-object (when args (setq printer (sys::%ds-printer (car args) nil))))
          (t (error "DEFSTRUCT ~S: unknown option ~S" name o)))))
    (unless constructor-seen
      (setq constructors (list (list (sys::%ds-intern "MAKE-" name)))))
    (when (stringp (car slot-specs)) (setq slot-specs (cdr slot-specs)))
    (let* ((parent (and include (sys::%ds-description include)))
           (parent-slots (and parent (car (cdr (cdr (cdr (cdr parent)))))))
           (tags (and parent (car (cdr (cdr parent)))))
           (tag nil)
           (start (if parent (car (cdr (cdr (cdr parent)))) 0))
           (slots nil))
      (when (and parent (not (eq (car (cdr parent)) kind)))
        (error "DEFSTRUCT ~S: :INCLUDE of ~S, a structure of another representation" name include))
      ;; Inherited slots first, with :include's default overrides.
      (dolist (s parent-slots)
        (let ((o (block found
                   (dolist (ov overrides)
                     (when (eq (if (consp ov) (car ov) ov) (car s)) (return-from found ov)))
                   nil)))
          (push (if o
                    (let ((p (sys::%ds-parse-slot o)))
                      (list (car s) (car (cdr p))
                            (or (car (cdr (cdr s))) (car (cdr (cdr p))))
                            (car (cdr (cdr (cdr s))))))
                    s)
                slots)))
      (setq start (+ start offset))
      (when (and (not (eq kind 'structure)) named)
        (setq tag start start (+ start 1))
        (setq tags (append tags (list (list tag name)))))
      (dolist (spec slot-specs)
        (let ((p (sys::%ds-parse-slot spec)))
          (push (list (car p) (car (cdr p)) (car (cdr (cdr p)))
                      (if (eq kind 'structure) (length slots) start))
                slots)
          (setq start (+ start 1))))
      (setq slots (sys::%nreverse-list slots))
      (let* ((size (if (eq kind 'structure) (length slots) start))
             (desc (list name kind tags size slots))
             (slot-names (mapcar-internal #'car slots))
             (precedence (cons name (and include (eq kind 'structure) (sys:%type-precedence include))))
             ;; Created now as well as at load time, so the constructors can
             ;; refer to the type object itself rather than look up its name.
             (type-object (and (eq kind 'structure)
                               (sys:%make-struct-type name precedence slot-names nil))))
        (if type-object
            (sys:%struct-type-extra type-object desc)
            (sys::%putprop name 'sys::defstruct-description desc))
        `(progn
           ,@(if type-object
                 `((sys:%make-struct-type ',name ',precedence ',slot-names nil)
                   (sys:%struct-type-extra ',name ',desc)
                   (sys:%struct-type-set-report ',name ,printer))
                 `((sys::%putprop ',name 'sys::defstruct-description ',desc)))
           ,@(sys::%ds-accessors desc conc-name)
           ,@(mapcar-internal (lambda (c) (sys::%ds-constructor desc type-object c))
                              (reverse-internal constructors))
           ,@(when predicate
               (cond ((eq kind 'structure)
                      `((defun ,predicate (object) (sys::%builtin-typep object ',name))))
                     ((not tag) nil)
                     ((eq kind 'list)
                      `((defun ,predicate (object)
                          (and (consp object) (eq (nth ,tag object) ',name)))))
                     (t
                      `((defun ,predicate (object)
                          (and (vectorp object) (> (length object) ,tag)
                               (eq (aref object ,tag) ',name)))))))
           ,@(when copier
               (cond ((eq kind 'structure)
                      `((defun ,copier (object)
                          (if (sys::%builtin-typep object ',name)
                              (sys:%copy-struct object)
                              (error 'type-error :datum object :expected-type ',name)))))
                     ((eq kind 'list) `((defun ,copier (object) (append object nil))))
                     (t `((defun ,copier (object) (copy-seq object))))))
           ',name)))))

(defmacro defstruct (name-and-options &rest slot-descriptions)
  (sys::%defstruct-expand name-and-options slot-descriptions))

(defun copy-structure (structure)
  (sys:%copy-struct structure))

;;; DEFTYPE: the expander is a function of the type's arguments, kept on
;;; the name's plist; optional parameters default to *, as CL says.

(defun sys::%deftype-lambda-list (lambda-list)
  (let ((out nil) (mode nil))
    (dolist (p lambda-list)
      (cond ((member-eql p '(&optional &rest &key &aux &allow-other-keys &body))
             (setq mode p) (push p out))
            ((and (member-eql mode '(&optional &key)) (symbolp p))
             (push (list p ''*) out))
            (t (push p out))))
    (sys::%nreverse-list out)))

(defvar sys::*deftype-generation* 0
  "Bumped by every DEFTYPE: cached expansions of older generations are stale.")

(defmacro deftype (name lambda-list &body body)
  (when (stringp (car body))
    (when (cdr body) (setq body (cdr body))))
  `(progn
     (sys::%putprop ',name 'sys::deftype-expander
                    (lambda ,(sys::%deftype-lambda-list lambda-list) (block ,name ,@body)))
     (setq sys::*deftype-generation* (+ sys::*deftype-generation* 1))
     ',name))

(defun sys::%expand-type-1 (type)
  (let* ((head (if (consp type) (car type) type))
         (expander (and (symbolp head) (get head 'sys::deftype-expander))))
    (if expander
        (sys::%expand-type (apply expander (if (consp type) (cdr type) nil)))
        type)))

(defun sys::%expand-type (type)
  "TYPE with DEFTYPE names at its head expanded until none is left."
  (if (symbolp type)
      ;; A DEFTYPE name without arguments: its full expansion is cached
      ;; (one cons per name and generation), as TYPECASE tests it often.
      ;; The cache property is added after the expander, so it is first on
      ;; the plist: the hit path reads it without a GET walk.
      (let ((plist (sys:%symbol-plist type)))
        (if (and (eq (car plist) 'sys::deftype-cache)
                 (eq (car (car (cdr plist))) sys::*deftype-generation*))
            (cdr (car (cdr plist)))
            (if (get type 'sys::deftype-expander)
                (let ((expansion (sys::%expand-type-1 type)))
                  (sys::%putprop type 'sys::deftype-cache (cons sys::*deftype-generation* expansion))
                  expansion)
                type)))
      (sys::%expand-type-1 type)))

;;; Builtins that need a standard type (an array's element type) hand a call
;;; naming a DEFTYPE type to SYS::%USER-TYPE-<name> (Raise::UserType), which
;;; calls them again with the type expanded.

(defun sys::%expand-element-types (type)
  "TYPE expanded, and so is the element type of an array type it becomes."
  (let ((type (sys::%expand-type type)))
    (if (and (consp type) (member (car type) '(vector array simple-array)) (consp (cdr type)))
        (list* (car type) (sys::%expand-type (cadr type)) (cddr type))
        type)))

(defun sys::%expand-element-type-key (keys)
  "The keyword arguments KEYS with the value of :ELEMENT-TYPE expanded."
  (let ((out nil))
    (do ((rest keys (cddr rest))) ((null rest) (nreverse out))
      (push (car rest) out)
      (push (if (eq (car rest) :element-type) (sys::%expand-element-types (cadr rest)) (cadr rest)) out))))

(defun sys::%user-type-make-array (dimensions &rest keys)
  (apply #'make-array dimensions (sys::%expand-element-type-key keys)))

(defun sys::%user-type-adjust-array (array dimensions &rest keys)
  (apply #'adjust-array array dimensions (sys::%expand-element-type-key keys)))

(defun sys::%user-type-upgraded-array-element-type (type &optional environment)
  (declare (ignore environment))
  (upgraded-array-element-type (sys::%expand-element-types type)))

(defun typep (object type &optional environment)
  (declare (ignore environment))
  ;; Fast path: a symbol without properties cannot be a DEFTYPE name
  ;; (standard type names have empty plists; a structure type's name has
  ;; just its type object, under SYS:%TYPE).
  (if (symbolp type)
      (let ((plist (sys:%symbol-plist type)))
        (if (or (null plist) (eq (car plist) 'sys:%type))
            (sys::%builtin-typep object type)
            (sys::%typep-slow object type)))
      (sys::%typep-slow object type)))

(defun sys::%typep-star (object type)
  (if (eq type '*) t (typep object type)))

(defun sys::%typep-slow (object type)
  (let ((type (sys::%expand-type type)))
    (if (consp type)
        (let ((head (car type)))
          (cond ((eq head 'satisfies) (if (funcall (car (cdr type)) object) t nil))
                ((eq head 'and)
                 (dolist (ty (cdr type) t) (unless (typep object ty) (return nil))))
                ((eq head 'or)
                 (dolist (ty (cdr type) nil) (when (typep object ty) (return t))))
                ((eq head 'not) (not (typep object (car (cdr type)))))
                ((eq head 'cons)
                 (and (consp object)
                      (or (null (cdr type)) (sys::%typep-star (car object) (car (cdr type))))
                      (or (null (cdr (cdr type))) (sys::%typep-star (cdr object) (car (cdr (cdr type)))))))
                (t (sys::%builtin-typep object type))))
        (sys::%builtin-typep object type))))

;;; SUBTYPEP (simple): the standard atomic hierarchy, structure and
;;; condition inclusion, AND/OR/NOT/MEMBER/EQL combinations and integer
;;; ranges. Second value NIL where this cannot decide (SATISFIES, unknown).

(defvar sys::*type-supertypes*
  '((fixnum integer) (bignum integer) (bit fixnum unsigned-byte) (unsigned-byte integer)
    (signed-byte integer) (integer rational) (ratio rational) (rational real)
    (double-float float) (single-float float) (short-float float) (long-float float)
    (float real) (real number) (number) (standard-char base-char) (base-char character)
    (character) (null symbol list) (boolean symbol) (keyword symbol) (symbol)
    (cons list) (list sequence) (simple-string string simple-array)
    (base-string string) (simple-base-string simple-string base-string)
    (string vector) (simple-vector vector simple-array) (vector array sequence)
    (bit-vector vector) (simple-bit-vector bit-vector simple-array) (complex number)
    (simple-array array) (array) (sequence) (compiled-function function) (function)
    (hash-table) (package) (string-stream stream) (file-stream stream)
    (synonym-stream stream) (two-way-stream stream) (echo-stream stream)
    (broadcast-stream stream) (concatenated-stream stream) (stream) (random-state)
    (structure-object) (standard-object) (condition)))

(defun sys::%known-supertypes (type)
  (dolist (e sys::*type-supertypes* nil) (when (eq (car e) type) (return e))))

(defun sys::%atomic-subtypep (t1 t2)
  ;; -> (values subtype-p certain-p) for two symbols.
  (let ((s1 (sys:%find-struct-type t1)))
    (cond ((eq t1 t2) (values t t))
          ((eq t2 t) (values t t))
          ((eq t1 nil) (values t t))
          (s1 (let ((prec (sys:%type-precedence s1)))
                (cond ((member-eql t2 prec) (values t t))
                      ((eq t2 'atom) (values t t))
                      ((and (eq t2 'structure-object)
                            (not (sys::%builtin-typep (sys:%make-instance s1) 'condition)))
                       (values t t))
                      ((or (sys:%find-struct-type t2) (sys::%known-supertypes t2)) (values nil t))
                      (t (values nil nil)))))
          ((eq t2 'atom)
           (if (sys::%known-supertypes t1)
               (values (not (member-eql t1 '(cons list sequence))) t)
               (values nil nil)))
          ((sys::%known-supertypes t1)
           (let ((seen nil) (queue (list t1)))
             (tagbody
              next
                (when queue
                  (let ((x (car queue)))
                    (setq queue (cdr queue))
                    (unless (member-eql x seen)
                      (push x seen)
                      (dolist (p (cdr (sys::%known-supertypes x))) (push p queue))))
                  (go next)))
             (cond ((member-eql t2 seen) (values t t))
                   ((or (sys::%known-supertypes t2) (sys:%find-struct-type t2)) (values nil t))
                   (t (values nil nil)))))
          (t (values nil nil)))))

(defun sys::%range-bound (b lower)
  ;; A range bound as (value . exclusive-p), or NIL for unbounded.
  (cond ((or (eq b '*) (null b)) nil)
        ((consp b) (cons (car b) t))
        (t (cons b nil))))

(defun sys::%range-within (lo1 hi1 lo2 hi2)
  (and (or (null lo2)
           (and lo1 (or (> (car lo1) (car lo2))
                        (and (= (car lo1) (car lo2)) (or (cdr lo1) (not (cdr lo2)))))))
       (or (null hi2)
           (and hi1 (or (< (car hi1) (car hi2))
                        (and (= (car hi1) (car hi2)) (or (cdr hi1) (not (cdr hi2)))))))))

(defun sys::%power-of-two (n)
  (let ((r 1)) (dotimes (i n) (setq r (* r 2))) r))

(defun sys::%integer-range (type)
  ;; Integer subtypes as (INTEGER lo hi), so ranges can be compared.
  (cond ((eq type 'fixnum) '(integer -4611686018427387904 4611686018427387903))
        ((eq type 'bit) '(integer 0 1))
        ((eq type 'unsigned-byte) '(integer 0 *))
        ((and (consp type) (eq (car type) 'mod)) (list 'integer 0 (- (car (cdr type)) 1)))
        ((and (consp type) (eq (car type) 'unsigned-byte) (integerp (car (cdr type))))
         (list 'integer 0 (- (sys::%power-of-two (car (cdr type))) 1)))
        ((and (consp type) (eq (car type) 'signed-byte) (integerp (car (cdr type))))
         (let ((h (sys::%power-of-two (- (car (cdr type)) 1))))
           (list 'integer (- h) (- h 1))))
        (t type)))

(defun subtypep (type1 type2 &optional environment)
  (declare (ignore environment))
  (let ((t1 (sys::%expand-type type1)) (t2 (sys::%expand-type type2)))
    (when (or (and (consp t1) (member-eql (car t1) '(integer mod unsigned-byte signed-byte)))
              (and (consp t2) (member-eql (car t2) '(integer mod unsigned-byte signed-byte))))
      (setq t1 (sys::%integer-range t1) t2 (sys::%integer-range t2)))
    ;; LIST is (OR NULL CONS), and the only lists that are symbols are NIL.
    (when (and (consp t1) (eq (car t1) 'and)
               (member-eql 'symbol (cdr t1)) (member-eql 'list (cdr t1)))
      (setq t1 'null))
    (cond ((equal t1 t2) (values t t))
          ((eq t2 t) (values t t))
          ((and (eq t1 'list) (consp t2) (member-eql (car t2) '(or and)))
           (subtypep '(or null cons) t2))
          ((and (consp t1) (eq (car t1) 'or))
           (let ((certain t))
             (dolist (x (cdr t1) (values t t))
               (multiple-value-bind (sub sure) (subtypep x t2)
                 (unless sure (setq certain nil))
                 (unless sub (return (values nil certain)))))))
          ((and (consp t1) (member-eql (car t1) '(member eql)))
           (dolist (x (cdr t1) (values t t))
             (unless (typep x t2) (return (values nil t)))))
          ((and (consp t2) (eq (car t2) 'and))
           (let ((certain t))
             (dolist (x (cdr t2) (values t t))
               (multiple-value-bind (sub sure) (subtypep t1 x)
                 (unless sure (setq certain nil))
                 (unless sub (return (values nil certain)))))))
          ((and (consp t2) (eq (car t2) 'or))
           (dolist (x (cdr t2) (values nil nil))
             (when (subtypep t1 x) (return (values t t)))))
          ((and (consp t1) (eq (car t1) 'and))
           (dolist (x (cdr t1) (values nil nil))
             (when (subtypep x t2) (return (values t t)))))
          ((or (and (consp t1) (member-eql (car t1) '(satisfies not)))
               (and (consp t2) (member-eql (car t2) '(satisfies not member eql))))
           (values nil nil))
          ((and (consp t1) (consp t2))
           (if (and (eq (car t1) (car t2))
                    (member-eql (car t1) '(integer rational real float double-float)))
               (values (sys::%range-within (sys::%range-bound (car (cdr t1)) t)
                                           (sys::%range-bound (car (cdr (cdr t1))) nil)
                                           (sys::%range-bound (car (cdr t2)) t)
                                           (sys::%range-bound (car (cdr (cdr t2))) nil))
                       t)
               (subtypep (car t1) t2)))
          ((consp t1) (sys::%atomic-subtypep (car t1) t2))
          ((consp t2)
           (if (member-eql (car t2) '(integer rational real float double-float))
               (if (and (sys::%atomic-subtypep t1 (car t2))
                        (null (sys::%range-bound (car (cdr t2)) t))
                        (null (sys::%range-bound (car (cdr (cdr t2))) nil)))
                   (values t t)
                   (values nil t))
               (values nil nil)))
          (t (sys::%atomic-subtypep t1 t2)))))
