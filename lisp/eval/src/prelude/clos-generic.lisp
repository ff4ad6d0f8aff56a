;;;; The prelude: CLOS, part 2 of 3: generic functions, methods, method
;;;; combination and dispatch.
;;;;
;;;; A generic function is a metaobject plus its discriminating function,
;;;; the function users call (FDEFINITION of the name). The discriminating
;;;; function is compiled per generic function for its number of required
;;;; arguments: it computes SYS:%CLASS-KEY of each required argument (or the
;;;; key of an EQL-specialized object) and looks the effective method up in
;;;; nested EQ hash tables, one level per required argument. A hit costs the
;;;; key builtins, the lookups and one FUNCALL; a miss computes the
;;;; applicable methods and the effective method, and caches it.
;;;;
;;;; An effective method is a chain (FUNCTION . NEXT): every method function
;;;; takes the chain of the methods after it, then the arguments, so
;;;; CALL-NEXT-METHOD is (FUNCALL (CAR NEXT) (CDR NEXT) args...). A generic
;;;; function with only primary methods runs its first method directly;
;;;; :BEFORE/:AFTER methods and short method combinations add one closure
;;;; named SYS::%EFFECTIVE-METHOD, which the profiler makes transparent (its
;;;; allocations are charged to its caller, the generic function), so memory
;;;; is charged to the methods. Method functions are named (METHOD name
;;;; qualifiers... (specializers...)) for the profiler and backtraces.

;;; Generic function fields.
(defvar sys::*gf-slots*
  '(sys::%metaobject name sys::lambda-list sys::cache methods sys::state
    sys::combination function documentation sys::nreq sys::nopt sys::restp sys::morep))
(sys:%make-struct-type 'standard-generic-function
                       '(standard-generic-function generic-function standard-object)
                       sys::*gf-slots* nil)

(defvar sys::*method-slots*
  '(sys::%metaobject generic-function qualifiers specializers sys::lambda-list function documentation))
(sys:%make-struct-type 'standard-method '(standard-method method standard-object)
                       sys::*method-slots* nil)

(defun sys::%gf-name (gf) (sys::%mo-ref gf 1))
(defun sys::%gf-methods (gf) (sys::%mo-ref gf 4))
(defun sys::%gf-function (gf) (sys::%mo-ref gf 7))
(defun method-qualifiers (method) (sys::%mo-ref method 2))
(defun sys::%method-specializers (method) (sys::%mo-ref method 3))
(defun sys::%method-function (method) (sys::%mo-ref method 5))

(defvar sys::*gf-by-name* (make-hash-table :test 'equal))
(defvar sys::*gf-by-function* (make-hash-table :test 'eq))

(defun sys::%find-gf (designator &optional (errorp t))
  (cond ((sys::%builtin-typep designator 'standard-generic-function) designator)
        ((functionp designator)
         (or (gethash designator sys::*gf-by-function*)
             (and errorp (error "~S is not a generic function." designator))))
        (t (or (gethash designator sys::*gf-by-name*)
               (and errorp (error "~S does not name a generic function." designator))))))

(defun sys::%generic-function-p (x)
  (and (functionp x) (gethash x sys::*gf-by-function*) t))

;;; Lambda lists: (values required optional-count rest-or-key-p).
(defun sys::%ll-shape (lambda-list)
  (let ((req nil) (nopt 0) (mode nil) (restp nil))
    (dolist (p lambda-list)
      (cond ((member p '(&optional &rest &key &aux &allow-other-keys &body))
             (setq mode p)
             (when (member p '(&rest &key &body)) (setq restp t)))
            ((null mode) (push p req))
            ((eq mode '&optional) (setq nopt (+ nopt 1)))))
    (values (reverse req) nopt restp)))

(defun sys::%make-discriminator (gf name nreq restp)
  (let* ((vars (let ((out nil))
                 (dotimes (i nreq (reverse out))
                   (push (make-symbol (format nil "ARG~D" i)) out))))
         (more (make-symbol "MORE"))
         (keys (mapcar (lambda (v) `(if eqlt (sys::%eql-key ,v eqlt) (sys:%class-key ,v))) vars))
         (lookup (if (null vars)
                     '(gethash t cache)
                     (let ((form 'cache))
                       (dolist (k keys form)
                         (setq form `(let ((tab ,form)) (and tab (gethash ,k tab))))))))
         (args (if restp `(,@vars ,more) vars))
         (form `(lambda (gf cache state)
                  (sys::named-lambda ,name (,@vars ,@(if restp `(&rest ,more)))
                    (let* ((eqlt (car state)) (e ,lookup))
                      (if e
                          ,(if restp `(apply (car e) (cdr e) ,@args) `(funcall (car e) (cdr e) ,@args))
                          (sys::%gf-miss gf ,(if restp `(list* ,@args) `(list ,@args)))))))))
    (funcall (eval form) gf (sys::%mo-ref gf 3) (sys::%mo-ref gf 5))))

(defun sys::%eql-key (object table)
  (or (gethash object table) (sys:%class-key object)))

(defun ensure-generic-function (name &key lambda-list documentation method-combination
                                     &allow-other-keys)
  (let ((gf (gethash name sys::*gf-by-name*)))
    ;; A DEFUN since made the name an ordinary function again.
    (when (and gf (fboundp name) (not (eq (fdefinition name) (sys::%gf-function gf))))
      (remhash name sys::*gf-by-name*)
      (setq gf nil))
    (when (and (null gf) (fboundp name) (not (and (symbolp name) (macro-function name))))
      (unless (gethash (fdefinition name) sys::*gf-by-function*)
        (error "~S already names an ordinary function; it cannot also be a generic function." name)))
    (when (and (null gf) (symbolp name) (or (macro-function name) (special-operator-p name)))
      (error "~S names a macro or special operator; it cannot also be a generic function." name))
    (multiple-value-bind (req nopt restp) (sys::%ll-shape lambda-list)
      (cond ((null gf)
             (setq gf (sys:%make-instance (sys:%find-struct-type 'standard-generic-function)))
             (sys::%mo-set gf 1 name)
             (sys::%mo-set gf 3 (make-hash-table :test 'eq))
             (sys::%mo-set gf 5 (cons nil nil))
             (sys::%mo-set gf 6 '(standard))
             (push gf sys::*generic-functions*)
             (setf (gethash name sys::*gf-by-name*) gf))
            ((and (sys::%gf-methods gf)
                  (not (and (= (length req) (sys::%mo-ref gf 9)) (= nopt (sys::%mo-ref gf 10))
                            (eq restp (sys::%mo-ref gf 11)))))
             (error "The lambda list ~S of ~S does not agree with its methods' lambda lists."
                    lambda-list name)))
      (sys::%mo-set gf 2 lambda-list)
      (when documentation (sys::%mo-set gf 8 documentation))
      (when method-combination (sys::%mo-set gf 6 method-combination))
      (sys::%mo-set gf 11 restp)
      (unless (and (sys::%gf-function gf)
                   (eql (sys::%mo-ref gf 9) (length req))
                   (eq (sys::%mo-ref gf 12) (or restp (> nopt 0))))
        (sys::%mo-set gf 9 (length req))
        (sys::%mo-set gf 12 (or restp (> nopt 0)))
        (let ((f (sys::%make-discriminator gf name (length req) (or restp (> nopt 0)))))
          (when (sys::%gf-function gf) (remhash (sys::%gf-function gf) sys::*gf-by-function*))
          (sys::%mo-set gf 7 f)
          (setf (gethash f sys::*gf-by-function*) gf)))
      (sys::%mo-set gf 10 nopt)
      (clrhash (sys::%mo-ref gf 3))
      (sys:%set-fdefinition name (sys::%gf-function gf))
      gf)))

;;; Methods.

(defun sys::%same-specializer-p (a b)
  (if (consp a)
      (and (consp b) (eql (car (cdr a)) (car (cdr b))))
      (eq a b)))

(defun sys::%specializer-designator (s)
  (cond ((and (consp s) (eq (car s) 'eql)) s)
        ((symbolp s) (find-class s))
        (t s)))

(defun find-method (generic-function qualifiers specializers &optional (errorp t))
  (let* ((gf (sys::%find-gf generic-function))
         (specs (mapcar #'sys::%specializer-designator specializers)))
    (or (dolist (m (sys::%gf-methods gf) nil)
          (when (and (equal (method-qualifiers m) qualifiers)
                     (= (length specs) (length (sys::%method-specializers m)))
                     (every #'sys::%same-specializer-p specs (sys::%method-specializers m)))
            (return m)))
        (when errorp
          (error "There is no method on ~S with qualifiers ~S and specializers ~S."
                 (sys::%gf-name gf) qualifiers specializers)))))

(defun sys::%note-eql-specializers (gf method)
  (dolist (s (sys::%method-specializers method))
    (when (consp s)
      (let ((state (sys::%mo-ref gf 5)))
        (unless (car state) (rplaca state (make-hash-table :test 'eql)))
        (unless (gethash (car (cdr s)) (car state))
          (setf (gethash (car (cdr s)) (car state)) (list 'eql (car (cdr s)))))))))

(defun add-method (generic-function method)
  (let* ((gf (sys::%find-gf generic-function))
         (old (find-method gf (method-qualifiers method) (sys::%method-specializers method) nil)))
    (multiple-value-bind (req nopt restp) (sys::%ll-shape (sys::%mo-ref method 4))
      (unless (and (= (length req) (sys::%mo-ref gf 9)) (= nopt (sys::%mo-ref gf 10))
                   (eq restp (sys::%mo-ref gf 11)))
        (error "The method's lambda list ~S is not congruent with the lambda list ~S of ~S."
               (sys::%mo-ref method 4) (sys::%mo-ref gf 2) (sys::%gf-name gf))))
    (sys::%mo-set method 1 gf)
    (sys::%mo-set gf 4 (cons method (remove old (sys::%gf-methods gf) :test #'eq)))
    (sys::%note-eql-specializers gf method)
    (clrhash (sys::%mo-ref gf 3))
    (sys::%method-added gf method)
    generic-function))

(defun remove-method (generic-function method)
  (let ((gf (sys::%find-gf generic-function)))
    (sys::%mo-set gf 4 (remove method (sys::%gf-methods gf) :test #'eq))
    (sys::%mo-set method 1 nil)
    (clrhash (sys::%mo-ref gf 3))
    generic-function))

(defun sys::%gf-lambda-list-of (lambda-list)
  ;; A method lambda list with specializers stripped, for an implicit
  ;; generic function: keywords are kept only as &KEY.
  (let ((out nil) (mode nil))
    (dolist (p lambda-list)
      (cond ((member p '(&optional &rest &key &aux &allow-other-keys &body))
             (setq mode p)
             (unless (member p '(&aux &allow-other-keys)) (push (if (eq p '&body) '&rest p) out)))
            ((eq mode '&aux) nil)
            ((eq mode '&key) nil)
            ((consp p) (push (car p) out))
            (t (push p out))))
    (reverse out)))

(defun sys::%defmethod (name qualifiers specializers lambda-list function documentation)
  (let ((gf (let ((known (gethash name sys::*gf-by-name*)))
              (if (and known (fboundp name) (eq (fdefinition name) (sys::%gf-function known)))
                  known
                  (ensure-generic-function name :lambda-list (sys::%gf-lambda-list-of lambda-list)))))
        (method (sys:%make-instance (sys:%find-struct-type 'standard-method))))
    (sys::%mo-set method 2 qualifiers)
    (sys::%mo-set method 3 (mapcar (lambda (s)
                                     (if (consp s) s
                                         (or (find-class s nil)
                                             (error "DEFMETHOD ~S: the specializer ~S is not a class." name s))))
                                   specializers))
    (sys::%mo-set method 4 lambda-list)
    (sys::%mo-set method 5 function)
    (sys::%mo-set method 6 documentation)
    (add-method gf method)
    method))

;;; Applicable methods, most specific first.

(defun sys::%specializer-matches-p (spec arg)
  (if (consp spec)
      (eql (car (cdr spec)) arg)
      (or (eq spec (find-class t))
          (member spec (sys::%class-cpl (class-of arg)) :test #'eq))))

(defun sys::%method-more-specific-p (m1 m2 args)
  (do ((s1 (sys::%method-specializers m1) (cdr s1))
       (s2 (sys::%method-specializers m2) (cdr s2))
       (as args (cdr as)))
      ((null s1) nil)
    (let ((a (car s1)) (b (car s2)))
      (unless (sys::%same-specializer-p a b)
        (return (cond ((consp a) t)
                      ((consp b) nil)
                      (t (let ((cpl (sys::%class-cpl (class-of (car as)))))
                           (< (position a cpl) (position b cpl))))))))))

(defun compute-applicable-methods (generic-function arguments)
  (let ((gf (sys::%find-gf generic-function)) (out nil))
    ;; Oldest first, so equally specific methods end newest first, as in SBCL.
    (dolist (m (reverse (sys::%gf-methods gf)))
      (when (do ((s (sys::%method-specializers m) (cdr s))
                 (a arguments (cdr a)))
                ((null s) t)
              (unless (and a (sys::%specializer-matches-p (car s) (car a))) (return nil)))
        (push m out)))
    (stable-sort out (lambda (m1 m2) (sys::%method-more-specific-p m1 m2 arguments)))))

;;; Effective methods.

(defun sys::%invalid-qualifiers (gf method)
  (error "The method ~S of ~S has qualifiers ~S, which its method combination ~S does not allow."
         (sys::%method-specializers method) (sys::%gf-name gf) (method-qualifiers method)
         (car (sys::%mo-ref gf 6))))

(defun sys::%no-primary-method (gf)
  (sys::named-lambda sys::%effective-method (next &rest args)
    (declare (ignore next))
    (error "There is no primary method for the generic function ~S when called with arguments ~S."
           (sys::%gf-name gf) args)))

(defun sys::%chain (around-functions main)
  ;; The around methods, then MAIN: a chain (function . next).
  (if around-functions
      (cons (car around-functions) (append (cdr around-functions) (list main)))
      (cons main nil)))

(defun sys::%standard-effective-method (gf methods)
  (let ((arounds nil) (befores nil) (primaries nil) (afters nil))
    (dolist (m methods)
      (let ((q (method-qualifiers m)))
        (cond ((null q) (push m primaries))
              ((equal q '(:around)) (push m arounds))
              ((equal q '(:before)) (push m befores))
              ((equal q '(:after)) (push m afters))
              (t (sys::%invalid-qualifiers gf m)))))
    ;; AFTERS is least specific first, as pushed.
    (let ((arounds (mapcar #'sys::%method-function (reverse arounds)))
          (befores (mapcar #'sys::%method-function (reverse befores)))
          (primaries (mapcar #'sys::%method-function (reverse primaries)))
          (afters (mapcar #'sys::%method-function afters)))
      ;; No primary method: an error, whatever :AROUND methods apply.
      (cond ((null primaries) (list (sys::%no-primary-method gf)))
            ((and (null befores) (null afters))
             (if arounds
                 (cons (car arounds) (append (cdr arounds) primaries))
                 primaries))
            (t (sys::%chain arounds (sys::%before-after-method gf befores primaries afters)))))))

(defun sys::%before-after-method (gf befores primaries afters)
  ;; The :BEFORE methods, the primary chain, the :AFTER methods. Generic
  ;; functions of one or two required arguments get a closure without an
  ;; argument list (no allocation per call).
  (let ((first (car primaries)) (next (cdr primaries)))
    (case (if (sys::%mo-ref gf 12) nil (sys::%mo-ref gf 9))
      (1 (sys::named-lambda sys::%effective-method (chain a)
           (declare (ignore chain))
           (dolist (b befores) (funcall b nil a))
           (multiple-value-prog1 (funcall first next a)
             (dolist (f afters) (funcall f nil a)))))
      (2 (sys::named-lambda sys::%effective-method (chain a b)
           (declare (ignore chain))
           (dolist (f befores) (funcall f nil a b))
           (multiple-value-prog1 (funcall first next a b)
             (dolist (f afters) (funcall f nil a b)))))
      (t (sys::named-lambda sys::%effective-method (chain &rest args)
           (declare (ignore chain))
           (dolist (b befores) (apply b nil args))
           (multiple-value-prog1 (apply first next args)
             (dolist (a afters) (apply a nil args))))))))

(defvar sys::*short-combinations* '(progn list append nconc + and or max min))

(defun sys::%short-effective-method (gf methods)
  (let* ((combination (sys::%mo-ref gf 6))
         (op (car combination))
         (arounds nil) (primaries nil))
    (dolist (m methods)
      (let ((q (method-qualifiers m)))
        (cond ((equal q '(:around)) (push m arounds))
              ((equal q (list op)) (push m primaries))
              (t (sys::%invalid-qualifiers gf m)))))
    (setq arounds (mapcar #'sys::%method-function (reverse arounds)))
    (setq primaries (mapcar #'sys::%method-function
                            (if (eq (car (cdr combination)) :most-specific-last)
                                primaries
                                (reverse primaries))))
    (if (null primaries)
     (list (sys::%no-primary-method gf))
     (sys::%chain
      arounds
         (sys::named-lambda sys::%effective-method (next &rest args)
           (declare (ignore next))
           (case op
             (progn (let ((fs primaries))
                      (loop while (cdr fs) do (apply (pop fs) nil args))
                      (apply (car fs) nil args)))
             (and (let ((fs primaries) (r t))
                    (loop while fs
                          do (setq r (apply (pop fs) nil args))
                             (unless r (return nil)))
                    r))
             (or (let ((fs primaries))
                   (loop while fs
                         do (let ((r (apply (pop fs) nil args)))
                              (when r (return r))))))
             (t (let ((results (mapcar (lambda (f) (apply f nil args)) primaries)))
                  (case op
                    (list results)
                    (append (apply #'append results))
                    (nconc (apply #'nconc results))
                    (+ (apply #'+ results))
                    (max (apply #'max results))
                    (min (apply #'min results)))))))))))

(defun sys::%effective-method (gf methods)
  (if (member (car (sys::%mo-ref gf 6)) sys::*short-combinations*)
      (sys::%short-effective-method gf methods)
      (sys::%standard-effective-method gf methods)))

(defun sys::%cache-store (gf args chain)
  (let ((eqlt (car (sys::%mo-ref gf 5)))
        (table (sys::%mo-ref gf 3))
        (n (sys::%mo-ref gf 9)))
    (if (= n 0)
        (setf (gethash t table) chain)
        (dotimes (i n)
          (let ((key (if eqlt (sys::%eql-key (car args) eqlt) (sys:%class-key (car args)))))
            (setq args (cdr args))
            (if (= i (- n 1))
                (setf (gethash key table) chain)
                (setq table (or (gethash key table)
                                (setf (gethash key table) (make-hash-table :test 'eq))))))))))

(defun sys::%gf-miss (gf args)
  (when (< (length args) (sys::%mo-ref gf 9))
    (error "~S needs at least ~D arguments, not ~S." (sys::%gf-name gf) (sys::%mo-ref gf 9) args))
  (let ((methods (compute-applicable-methods gf args)))
    (if (null methods)
        (apply #'no-applicable-method (sys::%gf-function gf) args)
        (let ((chain (sys::%effective-method gf methods)))
          (sys::%cache-store gf args chain)
          (apply (car chain) (cdr chain) args)))))

;;; CALL-NEXT-METHOD with arguments, and running out of next methods.
(defun sys::%call-next-method-with (next args gf-name)
  (if next
      (apply (car next) (cdr next) args)
      (sys::%no-next-method gf-name args)))

(defun sys::%no-next-method (gf-name args)
  (let ((gf (sys::%find-gf gf-name)))
    (apply #'no-next-method (sys::%gf-function gf) nil args)))
