;;;; The prelude: SETF and generalized places (CLHS 5.1). Loaded right after
;;;; base.lisp, before anything that assigns to a place.
;;;;
;;;; A place operator has one of three kinds of definition, looked up in this
;;;; order on its name's plist:
;;;; - SYS::SETF-EXPANDER, a *setter*: (lambda (args value) store-form), the
;;;;   short DEFSETF form, which the library's own places use (car, aref,
;;;;   gethash, structure slots) so that SETF of them expands into one direct
;;;;   call of the Rust updater, with no temporaries;
;;;; - SYS::SETF-METHOD, a full *setf expander*: (lambda (place env)) returning
;;;;   the five values of GET-SETF-EXPANSION (long DEFSETF, DEFINE-SETF-EXPANDER,
;;;;   VALUES, LDB, MASK-FIELD, APPLY);
;;;; - otherwise a macro is expanded, and anything else calls #'(SETF name).
;;;; Every modify macro (INCF, PUSH, POP, ROTATEF...) goes through
;;;; GET-SETF-EXPANSION, so each subform of a place is evaluated once, left to
;;;; right, whatever kind of place it is.

(defun sys::%setf-expander (name) (get name 'sys::setf-expander))

(defmacro defsetf (access-fn &rest more)
  (if (and more (listp (car more)))
      ;; Long form: (defsetf name lambda-list (store-var*) [doc] body...).
      ;; The body runs at expansion time with the lambda list's variables bound
      ;; to the temporaries holding the arguments and the store variables to
      ;; the store temporaries; it returns the store form.
      (let ((ll (car more)) (store-vars (car (cdr more))) (body (cdr (cdr more))))
        (when (and (stringp (car body)) (cdr body)) (setq body (cdr body)))
        `(progn
           (sys::%putprop ',access-fn 'sys::setf-method
                          (lambda (place env)
                            (declare (ignore env))
                            (sys::%long-defsetf-expansion
                             place ,(length store-vars)
                             (lambda (stores args)
                               (apply (lambda (,@store-vars ,@ll) ,@body) (append stores args))))))
           (remprop ',access-fn 'sys::setf-expander)
           ',access-fn))
      ;; Short form: (defsetf name update-fn [doc]).
      `(progn (sys::%putprop ',access-fn 'sys::setf-expander
                             (lambda (args value) (append (list ',(car more)) args (list value))))
              (remprop ',access-fn 'sys::setf-method)
              ',access-fn)))

(defun sys::%place-temps (args)
  "Temporaries for a place's argument forms: constants stay as they are (so
keywords reach a long DEFSETF's &key parameters). Returns (temps vals uses)."
  (let ((temps nil) (vals nil) (uses nil))
    (dolist (a args)
      (if (constantp a)
          (setq uses (cons a uses))
          (let ((g (gensym)))
            (setq temps (cons g temps) vals (cons a vals) uses (cons g uses)))))
    (list (reverse temps) (reverse vals) (reverse uses))))

(defun sys::%long-defsetf-expansion (place n-stores store-fn)
  (let* ((tv (sys::%place-temps (cdr place)))
         (uses (car (cdr (cdr tv))))
         (stores (let ((out nil)) (dotimes (i n-stores out) (setq out (cons (gensym "STORE") out))))))
    (values (car tv) (car (cdr tv)) stores (funcall store-fn stores uses) (cons (car place) uses))))

(defmacro define-setf-expander (access-fn lambda-list &body body)
  ;; The expander is a macro-like function of the place's arguments;
  ;; &environment is pulled out of the lambda list and bound to ENV.
  (let ((env-var nil) (ll nil) (tail nil) (place (gensym "PLACE")) (env (gensym "ENV")))
    (tagbody
     next
       (cond ((and (consp lambda-list) (eq (car lambda-list) '&environment))
              (setq env-var (car (cdr lambda-list)) lambda-list (cdr (cdr lambda-list)))
              (go next))
             ((consp lambda-list)
              (setq ll (cons (car lambda-list) ll) lambda-list (cdr lambda-list))
              (go next))
             (t (setq tail lambda-list))))
    (setq ll (append (reverse ll) tail))
    (when (and (stringp (car body)) (cdr body)) (setq body (cdr body)))
    `(progn
       (sys::%putprop ',access-fn 'sys::setf-method
                      (lambda (,place ,env)
                        (declare (ignorable ,env))
                        (let ((,(or env-var (gensym)) ,env))
                          (destructuring-bind ,ll (cdr ,place) ,@body))))
       (remprop ',access-fn 'sys::setf-expander)
       ',access-fn)))

(defun get-setf-expansion (place &optional env)
  "The five values of CLHS 5.1.1.2: temporaries, their value forms, store
variables, the store form and the access form."
  (cond ((symbolp place)
         (let ((s (gensym "NEW")))
           (values nil nil (list s) `(setq ,place ,s) place)))
        ((not (consp place)) (error "~S is not a place" place))
        (t
         (let* ((name (car place))
                (method (and (symbolp name) (get name 'sys::setf-method)))
                (setter (and (symbolp name) (not method) (sys::%setf-expander name))))
           (cond (method (funcall method place env))
                 ((and (not setter) (symbolp name) (macro-function name))
                  (get-setf-expansion (funcall (macro-function name) place env) env))
                 (t
                  (let* ((tv (sys::%place-temps (cdr place)))
                         (uses (car (cdr (cdr tv))))
                         (s (gensym "NEW")))
                    (values (car tv) (car (cdr tv)) (list s)
                            (if setter
                                (funcall setter uses s)
                                `(funcall #'(setf ,name) ,s ,@uses))
                            (cons name uses)))))))))

(defun sys::%expansion-setf (place value env)
  "SETF of a place with a full setf expander."
  (multiple-value-bind (temps vals stores store-form) (get-setf-expansion place env)
    (if (cdr stores)
        `(let* ,(mapcar-internal #'list temps vals)
           (multiple-value-bind ,stores ,value ,store-form))
        `(let* (,@(mapcar-internal #'list temps vals) (,(car stores) ,value))
           ,store-form))))

(defun sys::%setf-1 (place value env)
  (cond ((symbolp place) `(setq ,place ,value))
        ((not (consp place)) (error "~S is not a place" place))
        (t
         (let* ((name (car place))
                (expander (and (symbolp name) (sys::%setf-expander name))))
           (cond (expander (funcall expander (cdr place) value))
                 ((and (symbolp name) (get name 'sys::setf-method))
                  (sys::%expansion-setf place value env))
                 ((and (symbolp name) (macro-function name))
                  (sys::%setf-1 (funcall (macro-function name) place env) value env))
                 (t (let ((temps (mapcar-internal (lambda (a) (declare (ignore a)) (gensym)) (cdr place)))
                          (v (gensym)))
                      `(let* (,@(mapcar-internal #'list temps (cdr place)) (,v ,value))
                         (funcall #'(setf ,name) ,v ,@temps)))))))))

(defmacro setf (&rest pairs &environment env)
  (cond ((null pairs) nil)
        ((null (cdr (cdr pairs))) (sys::%setf-1 (car pairs) (car (cdr pairs)) env))
        (t `(progn ,@(let ((out nil))
                       (tagbody
                        next
                          (when pairs
                            (setq out (cons (sys::%setf-1 (car pairs) (car (cdr pairs)) env) out))
                            (setq pairs (cdr (cdr pairs)))
                            (go next)))
                       (reverse out))))))

(defmacro psetf (&rest pairs &environment env)
  "Each place's subforms, then its value, left to right (CLHS 5.1.1.1); then
every store. A variable's new value is assigned with SETQ."
  (let ((bindings nil) (stores nil))
    (tagbody
     next
       (when pairs
         (let ((place (car pairs)) (value (car (cdr pairs))))
           (if (symbolp place)
               (let ((g (gensym)))
                 (setq bindings (cons (list g value) bindings))
                 (setq stores (cons `(setq ,place ,g) stores)))
               (multiple-value-bind (temps vals store-vars store-form) (get-setf-expansion place env)
                 (tagbody
                  bind
                    (when temps
                      (setq bindings (cons (list (car temps) (car vals)) bindings))
                      (setq temps (cdr temps) vals (cdr vals))
                      (go bind)))
                 (if (and store-vars (null (cdr store-vars)))
                     (setq bindings (cons (list (car store-vars) value) bindings))
                     (let ((all (gensym "VALUES")) (i 0))
                       (setq bindings (cons (list all `(multiple-value-list ,value)) bindings))
                       (dolist (v store-vars)
                         (setq bindings (cons (list v `(nth ,i ,all)) bindings))
                         (setq i (+ i 1)))))
                 (setq stores (cons store-form stores)))))
         (setq pairs (cdr (cdr pairs)))
         (go next)))
    `(let* ,(reverse bindings) ,@(reverse stores) nil)))

;;; Places whose subforms must be evaluated once (remf, getf) bind them to
;;; temporaries through %place.
(defun sys::%place (place)
  "Returns (bindings access-form) where access-form reads/writes the place
using only the temporaries in bindings."
  (if (or (symbolp place) (not (consp place)))
      (list nil place)
      (let ((temps nil) (args nil))
        (dolist (a (cdr place))
          (if (or (constantp a) (symbolp a))
              (setq args (cons a args))
              (let ((g (gensym)))
                (setq temps (cons (list g a) temps))
                (setq args (cons g args)))))
        (list (reverse temps) (cons (car place) (reverse args))))))

(defun sys::%modify (place env before update)
  "The expansion of a modify macro: BEFORE are bindings evaluated before the
place's subforms (PUSH's item); UPDATE makes the new value's form from the
access form. A variable is read and assigned directly."
  (if (symbolp place)
      (if before
          `(let* ,before (setq ,place ,(funcall update place)))
          `(setq ,place ,(funcall update place)))
      (multiple-value-bind (temps vals stores store-form access) (get-setf-expansion place env)
        `(let* (,@before ,@(mapcar-internal #'list temps vals)
                (,(car stores) ,(funcall update access)))
           ,store-form))))

(defmacro incf (place &optional (delta 1) &environment env)
  (sys::%modify place env nil (lambda (access) `(+ ,access ,delta))))

(defmacro decf (place &optional (delta 1) &environment env)
  (sys::%modify place env nil (lambda (access) `(- ,access ,delta))))

(defmacro push (item place &environment env)
  (let ((g (gensym)))
    (sys::%modify place env (list (list g item)) (lambda (access) `(cons ,g ,access)))))

(defmacro pushnew (item place &rest keys &environment env)
  (let ((g (gensym)))
    (sys::%modify place env (list (list g item)) (lambda (access) `(adjoin ,g ,access ,@keys)))))

(defmacro pop (place &environment env)
  (let ((g (gensym)))
    (if (symbolp place)
        `(let ((,g ,place)) (prog1 (car ,g) (setq ,place (cdr ,g))))
        (multiple-value-bind (temps vals stores store-form access) (get-setf-expansion place env)
          `(let* (,@(mapcar-internal #'list temps vals) (,g ,access) (,(car stores) (cdr ,g)))
             ,store-form
             (car ,g))))))

(defmacro define-modify-macro (name lambda-list function &optional doc)
  (declare (ignore doc))
  ;; The call is (function access required... optional... . rest).
  (let ((fixed nil) (rest nil) (mode nil))
    (dolist (x lambda-list)
      (cond ((member-eql x '(&optional &rest &key)) (setq mode x))
            ((eq mode '&rest) (setq rest x))
            (t (setq fixed (cons (if (consp x) (car x) x) fixed)))))
    (let ((env (gensym "ENV")))
      `(defmacro ,name (place ,@lambda-list &environment ,env)
         (sys::%modify place ,env nil
                       (lambda (access)
                         (list* ',function access (list* ,@(reverse fixed) ,rest))))))))

(defun sys::%setf-expansions (places env)
  "For ROTATEF and SHIFTF: the setf expansions of PLACES, in order, as four
values: the temporaries' bindings, the store variables, the access forms and the
store forms."
  (let ((bindings nil) (stores nil) (accesses nil) (store-forms nil))
    (dolist (p places)
      (multiple-value-bind (temps vals s store-form access) (get-setf-expansion p env)
        (setq bindings (append bindings (mapcar-internal #'list temps vals)))
        (setq stores (cons (car s) stores) accesses (cons access accesses)
              store-forms (cons store-form store-forms))))
    (values bindings (reverse stores) (reverse accesses) (reverse store-forms))))

(defmacro rotatef (&rest places &environment env)
  (when places
    (multiple-value-bind (bindings stores accesses store-forms) (sys::%setf-expansions places env)
      `(let* (,@bindings
              ,@(mapcar-internal #'list stores (append (cdr accesses) (list (car accesses)))))
         ,@store-forms
         nil))))

(defmacro shiftf (&rest args &environment env)
  (let ((result (gensym)))
    (multiple-value-bind (bindings stores accesses store-forms)
        (sys::%setf-expansions (butlast-internal args) env)
      `(let* (,@bindings
              (,result ,(car accesses))
              ,@(mapcar-internal #'list stores (append (cdr accesses) (last-internal args))))
         ,@store-forms
         ,result))))

;;; Places on symbols and functions.

(defun (setf symbol-value) (value symbol) (set symbol value))
(defun (setf symbol-function) (function name) (sys:%set-fdefinition name function) function)
(defun (setf fdefinition) (function name) (sys:%set-fdefinition name function) function)
(defun (setf symbol-plist) (plist symbol) (sys::%set-symbol-plist symbol plist))

(defun copy-symbol (symbol &optional copy-properties)
  "A fresh uninterned symbol of the same name; with COPY-PROPERTIES, it also gets
SYMBOL's value, function and a copy of its property list."
  (let ((new (make-symbol (symbol-name symbol))))
    (when copy-properties
      (when (boundp symbol) (set new (symbol-value symbol)))
      (when (fboundp symbol) (sys:%set-fdefinition new (symbol-function symbol)))
      (sys::%set-symbol-plist new (copy-list (symbol-plist symbol))))
    new))
(defun (setf get) (value symbol indicator &optional default)
  (declare (ignore default))
  (sys::%putprop symbol indicator value))
(defun (setf macro-function) (function symbol &optional env)
  (declare (ignore env))
  (sys:%set-macro-function symbol function)
  function)

;;; Places with full expanders.

(define-setf-expander values (&rest places &environment env)
  (let ((temps nil) (vals nil) (stores nil) (store-forms nil) (accesses nil))
    (dolist (p places)
      (multiple-value-bind (ts vs ss sf a) (get-setf-expansion p env)
        (setq temps (append temps ts) vals (append vals vs))
        (setq stores (cons (car ss) stores) store-forms (cons sf store-forms)
              accesses (cons a accesses))))
    (setq stores (reverse stores))
    (values temps vals stores
            `(progn ,@(reverse store-forms) (values ,@stores))
            `(values ,@(reverse accesses)))))

(define-setf-expander the (type place &environment env)
  ;; (setf (the type place) value) stores into PLACE (types are not checked).
  (multiple-value-bind (temps vals stores store-form access) (get-setf-expansion place env)
    (values temps vals stores store-form `(the ,type ,access))))

(defun sys::%byte-place (place bytespec env deposit)
  "LDB and MASK-FIELD places: DEPOSIT (dpb or deposit-field) the new value
into the integer place and store that."
  (multiple-value-bind (temps vals stores store-form access) (get-setf-expansion place env)
    (let ((b (gensym "BYTE")) (s (gensym "NEW")))
      (values (cons b temps) (cons bytespec vals) (list s)
              `(let ((,(car stores) (,deposit ,s ,b ,access))) ,store-form ,s)
              `(,(if (eq deposit 'dpb) 'ldb 'mask-field) ,b ,access)))))

(define-setf-expander ldb (bytespec place &environment env)
  (sys::%byte-place place bytespec env 'dpb))

(define-setf-expander mask-field (bytespec place &environment env)
  (sys::%byte-place place bytespec env 'deposit-field))

(define-setf-expander apply (function &rest args)
  ;; (setf (apply #'name args...) v) calls #'(setf name) with the spread args.
  (let ((name (if (and (consp function) (member-eql (car function) '(function quote)))
                  (car (cdr function))
                  (error "(SETF APPLY) needs a quoted function name, not ~S" function)))
        (temps (mapcar-internal (lambda (a) (declare (ignore a)) (gensym)) args))
        (s (gensym "NEW")))
    (values temps args (list s)
            `(apply #'(setf ,name) ,s ,@temps)
            `(apply #',name ,@temps))))
