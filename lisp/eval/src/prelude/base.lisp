;;;; The prelude, part 1: definition, control and iteration macros, SETF.
;;;; Compiled at start-up. Functions defined here appear in profiles under
;;;; their own names, as KCL's primitives did.

;;;; Bootstrap helpers, written with special forms and builtins only, for
;;;; the macros below (the full library functions come later).

(defun sys::%mapcar1 (f list)
  (let ((out nil))
    (tagbody
     next
       (if list
           (progn (setq out (cons (funcall f (car list)) out))
                  (setq list (cdr list))
                  (go next))))
    (sys::%nreverse-list out)))

(defun sys::%nreverse-list (list)
  (let ((prev nil))
    (tagbody
     next
       (if list
           (let ((next (cdr list)))
             (rplacd list prev)
             (setq prev list)
             (setq list next)
             (go next))))
    prev))

(defun mapcar-internal (f list &optional (list2 nil two))
  (if two
      (let ((out nil))
        (tagbody
         next
           (if (if list list2 nil)
               (progn (setq out (cons (funcall f (car list) (car list2)) out))
                      (setq list (cdr list))
                      (setq list2 (cdr list2))
                      (go next))))
        (sys::%nreverse-list out))
      (sys::%mapcar1 f list)))

(defun every-internal (f list)
  (block nil
    (tagbody
     next
       (if list
           (progn (if (funcall f (car list)) nil (return-from nil nil))
                  (setq list (cdr list))
                  (go next))))
    t))

(defun member-eql (item list)
  (block nil
    (tagbody
     next
       (if list
           (progn (if (eql item (car list)) (return-from nil list))
                  (setq list (cdr list))
                  (go next))))
    nil))

(defun remove-if-internal (f list)
  (let ((out nil))
    (tagbody
     next
       (if list
           (progn (if (funcall f (car list)) nil (setq out (cons (car list) out)))
                  (setq list (cdr list))
                  (go next))))
    (sys::%nreverse-list out)))

(defun last-internal (list)
  (tagbody
   next
     (if (consp (cdr list)) (progn (setq list (cdr list)) (go next))))
  list)

(defun butlast-internal (list)
  (let ((out nil))
    (tagbody
     next
       (if (consp (cdr list))
           (progn (setq out (cons (car list) out)) (setq list (cdr list)) (go next))))
    (sys::%nreverse-list out)))

(defun sys::%split-declarations (body)
  (let ((decls nil))
    (tagbody
     next
       (if (if (consp body) (if (consp (car body)) (eq (car (car body)) 'declare) nil) nil)
           (progn (setq decls (cons (car body) decls))
                  (setq body (cdr body))
                  (go next))))
    (values (sys::%nreverse-list decls) body)))

(defmacro dolist-internal ((var list) &body body)
  (let ((tail (gensym)))
    `(let ((,tail ,list))
       (tagbody
        next
          (if ,tail
              (let ((,var (car ,tail)))
                ,@body
                (setq ,tail (cdr ,tail))
                (go next)))))))

(defun constantp (form &optional env)
  (declare (ignore env))
  (if (consp form)
      (eq (car form) 'quote)
      (if (symbolp form)
          (if (null form) t (sys::%constant-symbol-p form))
          t)))

(defun symbol-plist (symbol) (sys::%symbol-plist symbol))

(defun get (symbol indicator &optional default)
  (let ((plist (sys::%symbol-plist symbol)))
    (block nil
      (tagbody
       next
         (if plist
             (progn (if (eq (car plist) indicator) (return-from nil (car (cdr plist))))
                    (setq plist (cdr (cdr plist)))
                    (go next))))
      default)))

(defun sys::%putprop (symbol indicator value)
  (let ((plist (sys::%symbol-plist symbol)))
    (block nil
      (tagbody
       next
         (if plist
             (progn (if (eq (car plist) indicator)
                        (progn (rplaca (cdr plist) value) (return-from nil value)))
                    (setq plist (cdr (cdr plist)))
                    (go next))))
      (sys::%set-symbol-plist symbol (cons indicator (cons value (sys::%symbol-plist symbol))))
      value)))

(defun remprop (symbol indicator)
  (let ((plist (sys::%symbol-plist symbol)) (prev nil))
    (block nil
      (tagbody
       next
         (if plist
             (progn
               (if (eq (car plist) indicator)
                   (progn
                     (if prev
                         (rplacd (cdr prev) (cdr (cdr plist)))
                         (sys::%set-symbol-plist symbol (cdr (cdr plist))))
                     (return-from nil t)))
               (setq prev plist)
               (setq plist (cdr (cdr plist)))
               (go next))))
      nil)))

(defun sys::%case-keys (clauses)
  (let ((keys nil))
    (dolist-internal (c clauses)
      (if (listp (car c))
          (dolist-internal (k (car c)) (setq keys (cons k keys)))
          (setq keys (cons (car c) keys))))
    (sys::%nreverse-list keys)))

(defun sys::%case-failure (value keys)
  (error 'type-error :datum value :expected-type (cons 'member keys)))


(defmacro in-package (name)
  `(setq *package* (sys::%find-package-or-die ',name)))

(defmacro defvar (name &optional (value nil value-p) doc)
  `(progn (sys:%proclaim-special ',name)
          ,@(if value-p `((unless (boundp ',name) (set ',name ,value))))
          ,@(if doc `((sys::%set-documentation ',name 'variable ,doc)))
          ',name))

(defmacro defparameter (name value &optional doc)
  `(progn (sys:%proclaim-special ',name) (set ',name ,value)
          ,@(if doc `((sys::%set-documentation ',name 'variable ,doc)))
          ',name))

(defmacro defconstant (name value &optional doc)
  `(progn (sys:%defconstant ',name ,value)
          ,@(if doc `((sys::%set-documentation ',name 'variable ,doc)))
          ',name))

(defmacro when (test &body body) `(if ,test ,(if (cdr body) `(progn ,@body) (car body))))
(defmacro unless (test &body body) `(if ,test nil ,(if (cdr body) `(progn ,@body) (car body))))

(defmacro cond (&rest clauses)
  (if (null clauses)
      nil
      (let ((clause (car clauses)))
        (if (null (cdr clause))
            (let ((g (gensym)))
              `(let ((,g ,(car clause))) (if ,g ,g (cond ,@(cdr clauses)))))
            `(if ,(car clause) (progn ,@(cdr clause)) (cond ,@(cdr clauses)))))))

;;; The operands after the first run only when the ones before let them: a middle
;;; operand is wrapped in SYS::%COUNTED-BRANCH (compiled as the form itself) so that
;;; --count gives it a count of its own; the last is an IF branch already.
(defun sys::%counted-rest (forms)
  (if (cdr forms) (cons (list 'sys::%counted-branch (car forms)) (cdr forms)) forms))

(defmacro and (&rest forms)
  (cond ((null forms) t)
        ((null (cdr forms)) (car forms))
        (t `(if ,(car forms) (and ,@(sys::%counted-rest (cdr forms))) nil))))

(defmacro or (&rest forms)
  (cond ((null forms) nil)
        ((null (cdr forms)) (car forms))
        (t (let ((g (gensym)))
             `(let ((,g ,(car forms))) (if ,g ,g (or ,@(sys::%counted-rest (cdr forms)))))))))

(defmacro return (&optional value) `(return-from nil ,value))

(defmacro prog1 (first &body rest)
  (let ((g (gensym))) `(let ((,g ,first)) ,@rest ,g)))

(defmacro prog2 (first second &body rest)
  `(progn ,first (prog1 ,second ,@rest)))

(defun sys::%parallel-assignment (setter pairs)
  "PSETQ and PSETF: evaluate every value first, then assign with SETTER."
  (let ((bindings nil) (sets nil))
    (tagbody
     next
       (when pairs
         (let ((g (gensym)))
           (setq bindings (cons (list g (car (cdr pairs))) bindings))
           (setq sets (cons (list setter (car pairs) g) sets)))
         (setq pairs (cdr (cdr pairs)))
         (go next)))
    `(let ,(reverse bindings) ,@(reverse sets) nil)))

(defmacro psetq (&rest pairs) (sys::%parallel-assignment 'setq pairs))

(defun sys::%do-expand (vars end-test result body sequential)
  (let ((bindings nil) (steps nil) (top (gensym "TOP")))
    (dolist-internal (v vars)
      (if (symbolp v)
          (setq bindings (cons v bindings))
          (progn
            (setq bindings (cons (list (car v) (car (cdr v))) bindings))
            (when (cdr (cdr v))
              (setq steps (cons (car v) steps))
              (setq steps (cons (car (cdr (cdr v))) steps))))))
    (multiple-value-bind (decls forms) (sys::%split-declarations body)
      `(block nil
         (,(if sequential 'let* 'let) ,(reverse bindings)
          ,@decls
          (tagbody
             ,top
             (when ,end-test (return-from nil (progn ,@result)))
             (tagbody ,@forms)
             (,(if sequential 'setq 'psetq) ,@(reverse steps))
             (go ,top)))))))

(defmacro do (vars (end-test &rest result) &body body)
  (sys::%do-expand vars end-test result body nil))

(defmacro do* (vars (end-test &rest result) &body body)
  (sys::%do-expand vars end-test result body t))

(defmacro dolist ((var list &optional result) &body body)
  (let ((tail (gensym "TAIL")))
    (multiple-value-bind (decls forms) (sys::%split-declarations body)
      `(block nil
         (let ((,tail ,list))
           (tagbody
            next
              (when ,tail
                (let ((,var (car ,tail)))
                  ,@decls
                  (tagbody ,@forms))
                (setq ,tail (cdr ,tail))
                (go next)))
           (let ((,var nil)) (declare (ignorable ,var)) ,result))))))

(defmacro dotimes ((var count &optional result) &body body)
  (let ((n (gensym "N")))
    (multiple-value-bind (decls forms) (sys::%split-declarations body)
      `(block nil
         (let ((,n ,count) (,var 0))
           ,@decls
           (tagbody
            next
              (when (< ,var ,n)
                (tagbody ,@forms)
                (setq ,var (1+ ,var))
                (go next)))
           ,result)))))

(defmacro prog (vars &body body)
  (multiple-value-bind (decls forms) (sys::%split-declarations body)
    `(block nil (let ,vars ,@decls (tagbody ,@forms)))))

(defmacro prog* (vars &body body)
  (multiple-value-bind (decls forms) (sys::%split-declarations body)
    `(block nil (let* ,vars ,@decls (tagbody ,@forms)))))

(defmacro case (key &rest clauses)
  (let ((g (gensym)))
    `(let ((,g ,key))
       (cond ,@(mapcar-internal
                (lambda (clause)
                  (let ((keys (car clause)))
                    ;; A clause with no body yields NIL, not the test's value.
                    (let ((body (or (cdr clause) '(nil))))
                      (cond ((or (eq keys t) (eq keys 'otherwise)) `(t ,@body))
                            ((listp keys) `((member-eql ,g ',keys) ,@body))
                            (t `((eql ,g ',keys) ,@body))))))
                clauses)))))

(defmacro ecase (key &rest clauses)
  ;; T and OTHERWISE are ordinary keys here: ECASE has no otherwise clause.
  (let ((g (gensym))
        (clauses (mapcar-internal (lambda (c)
                                    (if (or (eq (car c) t) (eq (car c) 'otherwise))
                                        (cons (list (car c)) (cdr c))
                                        c))
                                  clauses)))
    `(let ((,g ,key))
       (case ,g ,@clauses
         (otherwise (sys::%case-failure ,g ',(sys::%case-keys clauses)))))))

(defmacro typecase (key &rest clauses)
  (let ((g (gensym)))
    `(let ((,g ,key))
       (cond ,@(mapcar-internal
                (lambda (clause)
                  (let ((body (or (cdr clause) '(nil))))
                    (if (or (eq (car clause) t) (eq (car clause) 'otherwise))
                        `(t ,@body)
                        `((typep ,g ',(car clause)) ,@body))))
                clauses)))))

(defmacro etypecase (key &rest clauses)
  (let ((g (gensym)))
    `(let ((,g ,key))
       (typecase ,g ,@clauses
         (otherwise (error 'type-error :datum ,g :expected-type '(or ,@(mapcar-internal #'car clauses))))))))

(defmacro multiple-value-setq (vars form)
  (if (null vars)
      `(values ,form)
  (let ((temps (mapcar-internal (lambda (v) (declare (ignore v)) (gensym)) vars)))
    `(multiple-value-bind ,temps ,form
       ,@(mapcar-internal (lambda (v g) `(setq ,v ,g)) vars temps)
       ,(car temps)))))

(defmacro nth-value (n form)
  `(nth ,n (multiple-value-list ,form)))

(defmacro declaim (&rest specs)
  `(progn ,@(mapcar-internal (lambda (s) `(proclaim ',s)) specs) nil))

(defun proclaim (spec)
  (when (and (consp spec) (eq (car spec) 'special))
    (dolist (s (cdr spec)) (sys:%proclaim-special s)))
  nil)

(defmacro lambda (&rest args) `(function (lambda ,@args)))

(defmacro loop (&rest body)
  (if (and body (every-internal #'consp body))
      (let ((top (gensym)))
        `(block nil (tagbody ,top (progn ,@body) (go ,top))))
      (sys::%loop-expand body)))

(defmacro with-gensyms (names &body body)
  `(let ,(mapcar-internal (lambda (n) `(,n (gensym ,(symbol-name n)))) names) ,@body))

;;; Limits and constants programs test for.

(defconstant call-arguments-limit 4611686018427387903)
(defconstant lambda-parameters-limit 4611686018427387903)
(defconstant multiple-values-limit 4611686018427387903)
(defconstant lambda-list-keywords
  '(&allow-other-keys &aux &body &environment &key &optional &rest &whole))

(defun compiled-function-p (object) (functionp object))
(defun simple-string-p (object)
  (and (stringp object) (typep object 'simple-string)))

