;;;; The prelude: the extended LOOP macro. BASE's LOOP handles the simple
;;;; form and calls SYS::%LOOP-EXPAND for the rest.
;;;;
;;;; The expansion has SBCL's shape:
;;;;   (block NAME (let ACCUMULATORS (let GROUP1 (let GROUP2 ...
;;;;     (tagbody PROLOGUE BEFORE-LOOP next MAIN-BODY AFTER-BODY (go next)
;;;;              end EPILOGUE (return-from NAME RESULT))))))
;;;; Driver clauses (FOR/AS, REPEAT, and WHILE/UNTIL/ALWAYS/NEVER/THEREIS
;;;; written before any body clause) contribute their first-iteration code
;;;; to BEFORE-LOOP and their stepping code to AFTER-BODY, both in clause
;;;; order, so a FOR clause is never stepped once an earlier one has ended.
;;;; Loop keywords are recognised by name, in any package. FOR-IN ends
;;;; with ENDP (a dotted list is a type error, as in SBCL), FOR-ON with ATOM.
;;;; Hash-table iteration walks SYS:%HASH-TABLE-SNAPSHOT's vector (hash.lisp),
;;;; taken when the loop starts, so the body may remove entries.
;;;;
;;;; The parser's state lives in special variables bound by SYS::%LOOP-EXPAND
;;;; (macroexpansion is not reentrant: an inner LOOP expands later, when the
;;;; compiler reaches it).

(defvar sys::*loop-tokens* nil)
(defvar sys::*loop-name* nil)
(defvar sys::*loop-groups* nil)        ; reversed list of (let-kind bindings)
(defvar sys::*loop-acc-bindings* nil)  ; reversed bindings of accumulators
(defvar sys::*loop-accumulators* nil)  ; alist var -> (kind var tail-or-flag)
(defvar sys::*loop-default-acc* nil)   ; the unnamed accumulator, or NIL
(defvar sys::*loop-prologue* nil)
(defvar sys::*loop-before* nil)
(defvar sys::*loop-after* nil)
(defvar sys::*loop-body* nil)
(defvar sys::*loop-epilogue* nil)
(defvar sys::*loop-result* nil)
(defvar sys::*loop-emitted-body* nil)
(defvar sys::*loop-end-tag* nil)
(defvar sys::*loop-termination-test* nil) ; the first ALWAYS, NEVER or THEREIS keyword

(defun sys::%loop-error (format-control &rest arguments)
  ;; A malformed LOOP is a program-error, as in SBCL (the suite checks it).
  (error 'sys::simple-program-error :format-control (sys::%loop-concat "LOOP: " format-control)
                                    :format-arguments arguments))

(defun sys::%loop-concat (a b)
  (let ((s (make-string-output-stream)))
    (write-string a s) (write-string b s)
    (get-output-stream-string s)))

;;; STRING= compares a symbol's name without consing a string (SYMBOL-NAME
;;; would, and expansion-time allocation shows in profiles).
(defun sys::%loop-kw-p (x name)
  (and (symbolp x) x (string= x name)))

(defun sys::%loop-kw-in (x names)
  (and (symbolp x) x
       (dolist (k names nil) (when (string= x k) (return t)))))

(defun sys::%loop-peek () (car sys::*loop-tokens*))

(defun sys::%loop-pop ()
  (unless sys::*loop-tokens* (sys::%loop-error "the clause ends too early"))
  (let ((x (car sys::*loop-tokens*)))
    (setq sys::*loop-tokens* (cdr sys::*loop-tokens*))
    x))

(defun sys::%loop-pop-kw (name)
  (when (sys::%loop-kw-p (sys::%loop-peek) name)
    (sys::%loop-pop)
    t))

(defun sys::%loop-compound-forms ()
  (let ((forms nil))
    (tagbody
     next
       (when (consp (sys::%loop-peek))
         (push (sys::%loop-pop) forms)
         (go next)))
    (sys::%nreverse-list forms)))

(defvar sys::*loop-simple-types*
  '("FIXNUM" "FLOAT" "INTEGER" "NUMBER" "REAL" "T" "NIL" "DOUBLE-FLOAT"
    "SINGLE-FLOAT" "SHORT-FLOAT" "LONG-FLOAT"))

(defun sys::%loop-skip-type ()
  ;; An optional type after a variable: OF-TYPE spec, or a simple type name.
  (cond ((sys::%loop-pop-kw "OF-TYPE") (sys::%loop-pop))
        ((sys::%loop-kw-in (sys::%loop-peek) sys::*loop-simple-types*)
         (sys::%loop-pop))
        ((and (consp (sys::%loop-peek))
              (every-internal (lambda (x) (sys::%loop-kw-in x sys::*loop-simple-types*))
                              (sys::%loop-peek)))
         (sys::%loop-pop))
        (t nil)))

;;; Destructuring: a pattern and a value form become sequential (var form)
;;; pairs; conses in the pattern get temporaries, NIL parts are skipped.

(defun sys::%loop-destructure (pattern value)
  (cond ((null pattern) nil)
        ((symbolp pattern) (list (list pattern value)))
        (t (let ((g (gensym "D")))
             (cons (list g value)
                   (append (sys::%loop-destructure (car pattern) (list 'car g))
                           (sys::%loop-destructure (cdr pattern) (list 'cdr g))))))))

(defun sys::%loop-flatten (pairs)
  (let ((out nil))
    (dolist (p pairs) (push (car p) out) (push (car (cdr p)) out))
    (sys::%nreverse-list out)))

(defun sys::%loop-pattern-assigner (pattern)
  ;; -> (bindings . function): the bindings of every variable the pattern
  ;; sets, and a function from a value form to the assignment form.
  (if (symbolp pattern)
      (cons (if pattern (list (list pattern nil)) nil)
            (lambda (value) (if pattern `(setq ,pattern ,value) nil)))
      (let* ((pairs (sys::%loop-destructure pattern 'sys::%value))
             (root (car (car pairs))))
        (cons (mapcar-internal (lambda (p) (list (car p) nil)) pairs)
              (lambda (value)
                `(setq ,root ,value
                       ,@(sys::%loop-flatten (cdr pairs))))))))

;;; Variables and code

(defun sys::%loop-bind (kind bindings)
  (when bindings (push (list kind bindings) sys::*loop-groups*)))

(defun sys::%loop-end-test (test)
  `(when ,test (go ,sys::*loop-end-tag*)))

(defun sys::%loop-driver (first step)
  ;; FIRST and STEP are lists of forms; a driver written after body clauses
  ;; still runs before the body, as in SBCL.
  (setq sys::*loop-before* (append (reverse-internal first) sys::*loop-before*))
  (setq sys::*loop-after* (append (reverse-internal step) sys::*loop-after*)))

(defun sys::%loop-pseudo-body (form)
  (if sys::*loop-emitted-body*
      (push form sys::*loop-body*)
      (sys::%loop-driver (list form) (list form))))

(defun sys::%loop-constant-p (form)
  (or (numberp form) (and (consp form) (eq (car form) 'quote))))

(defun sys::%loop-once (form)
  ;; A variable (bound now) holding FORM's value, or FORM if constant.
  (if (sys::%loop-constant-p form)
      form
      (let ((g (gensym "LOOP")))
        (sys::%loop-bind 'let (list (list g form)))
        g)))

;;; FOR / AS

(defun sys::%loop-for-clause ()
  ;; Parses one FOR clause; returns (bindings-groups first step) where
  ;; = clauses appear as (:eq assigner form) entries in FIRST and STEP.
  (let ((var (sys::%loop-pop)))
    (sys::%loop-skip-type)
    (let ((prep (sys::%loop-peek)))
      (cond ((sys::%loop-kw-in prep '("IN" "ON"))
             (sys::%loop-pop)
             (sys::%loop-for-in-on var (sys::%loop-kw-p prep "ON")))
            ((sys::%loop-kw-p prep "=")
             (sys::%loop-pop)
             (let* ((init (sys::%loop-pop))
                    (assigner (sys::%loop-pattern-assigner var)))
               (sys::%loop-bind 'let (car assigner))
               (if (sys::%loop-pop-kw "THEN")
                   (let ((then (sys::%loop-pop)))
                     (list (list (list :eq (cdr assigner) init))
                           (list (list :eq (cdr assigner) then))))
                   (list (list (list :eq (cdr assigner) init))
                         (list (list :eq (cdr assigner) init))))))
            ((sys::%loop-kw-p prep "ACROSS")
             (sys::%loop-pop)
             (let* ((vector (gensym "VECTOR")) (index (gensym "INDEX")) (len (gensym "LENGTH"))
                    (assigner (sys::%loop-pattern-assigner var)))
               (sys::%loop-bind 'let* (list (list vector (sys::%loop-pop)) (list index 0)
                                            (list len (list 'length vector))))
               (sys::%loop-bind 'let (car assigner))
               (let ((test (sys::%loop-end-test `(>= ,index ,len)))
                     (set (funcall (cdr assigner) `(aref ,vector ,index))))
                 (list (list test set)
                       (list `(setq ,index (1+ ,index)) test set)))))
            ((sys::%loop-kw-p prep "BEING")
             (sys::%loop-pop)
             (sys::%loop-for-being var))
            ((sys::%loop-kw-in prep '("FROM" "DOWNFROM" "UPFROM" "TO" "UPTO" "BELOW"
                                      "DOWNTO" "ABOVE" "BY"))
             (sys::%loop-for-arithmetic var))
            (t (sys::%loop-error "unknown FOR preposition ~S" prep))))))

(defun sys::%loop-for-in-on (var on)
  (let* ((list-form (sys::%loop-pop))
         (by (if (sys::%loop-pop-kw "BY") (sys::%loop-pop) nil))
         (simple-on (and on (symbolp var) var))
         (tail (if simple-on var (gensym "TAIL"))))
    (sys::%loop-bind 'let (list (list tail list-form)))
    (let* ((stepper (cond ((null by) `(cdr ,tail))
                          ((and (consp by) (member-eql (car by) '(function quote))
                                (symbolp (car (cdr by))))
                           `(funcall (function ,(car (cdr by))) ,tail))
                          (t `(funcall ,(sys::%loop-once by) ,tail))))
           (test (sys::%loop-end-test (if on `(atom ,tail) `(endp ,tail))))
           (assigner (if simple-on nil (sys::%loop-pattern-assigner var)))
           (set (if simple-on nil (funcall (cdr assigner) (if on tail `(car ,tail))))))
      (when assigner (sys::%loop-bind 'let (car assigner)))
      (list (if set (list test set) (list test))
            (if set
                (list `(setq ,tail ,stepper) test set)
                (list `(setq ,tail ,stepper) test))))))

(defun sys::%loop-step (by)
  (if (and (realp by) (plusp by))
      by
      (error 'type-error :datum by :expected-type '(real (0)))))

(defun sys::%loop-for-arithmetic (var)
  ;; FOR NIL FROM ...: the count still steps and ends the loop, in a variable of its own.
  (unless var (setq var (gensym "COUNTER")))
  (let ((start nil) (end nil) (by 1) (down nil) (inclusive t) (bindings nil))
    (tagbody
     next
       (let ((prep (sys::%loop-peek)))
         (when (sys::%loop-kw-in prep '("FROM" "DOWNFROM" "UPFROM" "TO" "UPTO" "BELOW"
                                        "DOWNTO" "ABOVE" "BY"))
           (sys::%loop-pop)
           (let ((form (sys::%loop-pop)) (name (symbol-name prep)))
             (cond ((member-if-internal (lambda (n) (equal n name)) '("FROM" "DOWNFROM" "UPFROM"))
                    (when (equal name "DOWNFROM") (setq down t))
                    (setq start form)
                    (push (list var form) bindings))
                   ((equal name "BY")
                    ;; The step must be a positive real (a type error, as in SBCL):
                    ;; a positive constant is used as it is, anything else checked once.
                    (if (and (sys::%loop-constant-p form) (realp form) (plusp form))
                        (setq by form)
                        (progn (setq by (gensym "BY"))
                               (push (list by `(sys::%loop-step ,form)) bindings))))
                   (t
                    (when (member-if-internal (lambda (n) (equal n name)) '("DOWNTO" "ABOVE"))
                      (setq down t))
                    (when (member-if-internal (lambda (n) (equal n name)) '("BELOW" "ABOVE"))
                      (setq inclusive nil))
                    (setq end (if (sys::%loop-constant-p form) form (gensym "END")))
                    (unless (sys::%loop-constant-p form) (push (list end form) bindings)))))
           (go next))))
    (unless start (push (list var 0) bindings))
    (sys::%loop-bind 'let* (reverse-internal bindings))
    (let ((test (and end (sys::%loop-end-test
                          (if down
                              (list (if inclusive '< '<=) var end)
                              (list (if inclusive '> '>=) var end))))))
      (list (if test (list test) nil)
            (cons `(setq ,var (,(if down '- '+) ,var ,by))
                  (if test (list test) nil))))))

(defun sys::%loop-for-being (var)
  (unless (or (sys::%loop-pop-kw "THE") (sys::%loop-pop-kw "EACH"))
    (sys::%loop-error "expected THE or EACH after BEING"))
  (let ((what (sys::%loop-pop)))
    (when (sys::%loop-kw-in what '("SYMBOL" "SYMBOLS" "PRESENT-SYMBOL" "PRESENT-SYMBOLS"
                                   "EXTERNAL-SYMBOL" "EXTERNAL-SYMBOLS"))
      (return-from sys::%loop-for-being (sys::%loop-for-symbols var what)))
    (unless (sys::%loop-kw-in what '("HASH-KEY" "HASH-KEYS" "HASH-VALUE" "HASH-VALUES"))
      (sys::%loop-error "unsupported BEING iteration ~S" what))
    (unless (or (sys::%loop-pop-kw "OF") (sys::%loop-pop-kw "IN"))
      (sys::%loop-error "expected OF or IN after ~S" what))
    (let* ((table (sys::%loop-pop))
           (keys (sys::%loop-kw-in what '("HASH-KEY" "HASH-KEYS")))
           (other nil)
           (snapshot (gensym "SNAPSHOT")) (index (gensym "INDEX")) (len (gensym "LENGTH")))
      (when (sys::%loop-pop-kw "USING")
        (setq other (car (cdr (sys::%loop-pop)))))
      ;; The table's #(k0 v0 k1 v1 ...) snapshot, taken when the loop
      ;; starts, so the body may modify the table as MAPHASH allows.
      (sys::%loop-bind 'let* (list (list snapshot `(sys::%hash-table-snapshot ,table))
                                   (list index 0)
                                   (list len `(length ,snapshot))))
      (let* ((assigner (sys::%loop-pattern-assigner var))
             (other-assigner (and other (sys::%loop-pattern-assigner other)))
             (test (sys::%loop-end-test `(>= ,index ,len)))
             (key `(svref ,snapshot ,index))
             (value `(svref ,snapshot (1+ ,index)))
             (sets (cons (funcall (cdr assigner) (if keys key value))
                         (if other-assigner
                             (list (funcall (cdr other-assigner) (if keys value key)))
                             nil))))
        (sys::%loop-bind 'let (append (car assigner) (and other-assigner (car other-assigner))))
        (list (cons test sets)
              (cons `(setq ,index (+ ,index 2)) (cons test sets)))))))

(defun sys::%loop-for-symbols (var what)
  ;; BEING THE [PRESENT-|EXTERNAL-]SYMBOLS [OF/IN package]: the package's symbols,
  ;; listed when the loop starts (default *PACKAGE*).
  (let* ((package (if (or (sys::%loop-pop-kw "OF") (sys::%loop-pop-kw "IN")) (sys::%loop-pop) '*package*))
         (mode (cond ((sys::%loop-kw-in what '("EXTERNAL-SYMBOL" "EXTERNAL-SYMBOLS")) t)
                     ((sys::%loop-kw-in what '("PRESENT-SYMBOL" "PRESENT-SYMBOLS")) :present)
                     (t nil)))
         (rest (gensym "SYMBOLS")))
    (sys::%loop-bind 'let* (list (list rest `(sys::%package-symbols ,package ,mode))))
    (let* ((assigner (sys::%loop-pattern-assigner var))
           (test (sys::%loop-end-test `(null ,rest)))
           (set (funcall (cdr assigner) `(car ,rest))))
      (sys::%loop-bind 'let (car assigner))
      (list (list test set)
            (list `(setq ,rest (cdr ,rest)) test set)))))

(defun sys::%loop-resolve-eq (forms temps)
  ;; Replace (:eq assigner form) entries by assignments, from the temporaries
  ;; of TEMPS (an alist entry -> temp) when the group steps in parallel.
  (mapcar-internal
   (lambda (f)
     (if (and (consp f) (eq (car f) :eq))
         (let ((temp (member-if-internal (lambda (e) (eq (car e) f)) temps)))
           (funcall (car (cdr f)) (if temp (car (cdr (car temp))) (car (cdr (cdr f))))))
         f))
   forms))

(defun sys::%loop-parallel (forms)
  ;; The forms of an AND-joined FOR group: the = clauses' value forms are
  ;; all evaluated before any variable of the group changes.
  (let ((temps nil))
    (dolist (f forms)
      (when (and (consp f) (eq (car f) :eq))
        (push (list f (gensym "NEW")) temps)))
    (if temps
        (list `(let ,(mapcar-internal (lambda (e) (list (car (cdr e)) (car (cdr (cdr (car e)))))) temps)
                 ,@(remove-if-internal #'null (sys::%loop-resolve-eq forms temps))))
        (remove-if-internal #'null forms))))

(defun sys::%loop-for ()
  (let ((first nil) (step nil) (count 0))
    (tagbody
     next
       (let ((c (sys::%loop-for-clause)))
         (setq first (append first (car c)) step (append step (car (cdr c))) count (+ count 1)))
       (when (sys::%loop-pop-kw "AND") (go next)))
    (if (> count 1)
        (sys::%loop-driver (sys::%loop-parallel first) (sys::%loop-parallel step))
        (sys::%loop-driver (remove-if-internal #'null (sys::%loop-resolve-eq first nil))
                           (remove-if-internal #'null (sys::%loop-resolve-eq step nil))))))

;;; WITH

(defun sys::%loop-with ()
  (let ((bindings nil) (destructured nil))
    (tagbody
     next
       (let ((var (sys::%loop-pop)) (type nil))
         (when (sys::%loop-kw-p (sys::%loop-peek) "OF-TYPE")
           (sys::%loop-pop)
           (setq type (sys::%loop-pop)))
         (when (and (not type) (sys::%loop-kw-in (sys::%loop-peek) sys::*loop-simple-types*))
           (setq type (sys::%loop-pop)))
         (let ((value (if (sys::%loop-pop-kw "=")
                          (sys::%loop-pop)
                          (let ((default (sys::%loop-pattern-default var type)))
                            (if (consp default) (list 'quote default) default)))))
           (if (and var (symbolp var))
               (push (list var value) bindings)
               (let ((g (gensym "WITH")))
                 (push (list g value) bindings)
                 (setq destructured
                       (append destructured
                               (sys::%loop-destructure var g)))))))
       (when (sys::%loop-pop-kw "AND") (go next)))
    (sys::%loop-bind 'let (reverse-internal bindings))
    (sys::%loop-bind 'let* destructured)))

;;; The value a variable declared of TYPE starts with when none is given:
;;; 0 for integer types, 0.0 for float types, else NIL.
(defun sys::%loop-type-default (type)
  (let ((head (if (consp type) (car type) type)))
    (cond ((member-eql head '(fixnum integer number real rational bit unsigned-byte signed-byte mod)) 0)
          ((member-eql head '(float double-float single-float short-float long-float)) 0.0)
          (t nil))))

;;; Whether a list is a compound type specifier such as (INTEGER 0 10) or
;;; (OR ...), rather than a tree of types for a destructuring pattern.
(defun sys::%loop-compound-type-p (type)
  (or (member-eql (car type) '(or and member eql satisfies not values mod))
      (and (member-eql (car type) '(integer unsigned-byte signed-byte float double-float single-float
                                   short-float long-float real rational))
           (let ((low (car (cdr type))))
             (or (null (cdr type)) (numberp low) (eq low '*)
                 (and (consp low) (numberp (car low))))))))

;;; The defaults of a destructuring pattern declared with a parallel tree of types,
;;; as in WITH (A B C) OF-TYPE (FIXNUM FLOAT T). Patterns are as deep as written.
(defun sys::%loop-pattern-default (var type)
  (if (and (consp var) (consp type) (not (sys::%loop-compound-type-p type)))
      (cons (sys::%loop-pattern-default (car var) (car type))
            (sys::%loop-pattern-default (cdr var) (cdr type)))
      (sys::%loop-type-default type)))

;;; Accumulation

(defun sys::%loop-accumulator (kind into &optional type)
  ;; -> (kind var extra): the accumulator INTO names, or the loop's default
  ;; one; KIND is LIST, SUM or MINIMAX (numeric kinds share SUM). A sum or
  ;; count declared of a float TYPE starts at 0.0.
  (let ((found (if into
                   (cdr (car (member-if-internal (lambda (e) (eq (car e) into))
                                                 sys::*loop-accumulators*)))
                   sys::*loop-default-acc*)))
    (cond (found
           (unless (eq kind (car found))
             (sys::%loop-error "incompatible kinds of accumulation into ~S: ~S and ~S"
                               (or into 'the-loop-value) (car found) kind))
           found)
          (t
           (let* ((var (or into (gensym "ACC")))
                  (extra (cond ((eq kind 'list) (gensym "TAIL"))
                               ((eq kind 'minimax) (gensym "FLAG"))
                               (t nil)))
                  (acc (list kind var extra)))
             (push (list var (cond ((eq kind 'list) nil)
                                   ((floatp (sys::%loop-type-default type)) 0.0)
                                   (t 0)))
                   sys::*loop-acc-bindings*)
             (when extra (push (list extra nil) sys::*loop-acc-bindings*))
             (if into
                 (push (cons into acc) sys::*loop-accumulators*)
                 (progn (setq sys::*loop-default-acc* acc)
                        (setq sys::*loop-result* var)))
             acc)))))

(defun sys::%loop-accumulate (name it)
  ;; The accumulated form runs only when its clause is selected: --count gives it a count.
  (let* ((form (list 'sys::%counted-branch (sys::%loop-form it)))
         (into (if (sys::%loop-pop-kw "INTO") (sys::%loop-pop) nil))
         (type (sys::%loop-skip-type)))
    (cond ((member-if-internal (lambda (n) (equal n name)) '("COLLECT" "COLLECTING"))
           (let* ((acc (sys::%loop-accumulator 'list into))
                  (var (car (cdr acc))) (tail (car (cdr (cdr acc)))) (cell (gensym "CELL")))
             `(let ((,cell (list ,form)))
                (if ,tail (rplacd ,tail ,cell) (setq ,var ,cell))
                (setq ,tail ,cell))))
          ((member-if-internal (lambda (n) (equal n name)) '("APPEND" "APPENDING" "NCONC" "NCONCING"))
           (let* ((acc (sys::%loop-accumulator 'list into))
                  (var (car (cdr acc))) (tail (car (cdr (cdr acc)))) (l (gensym "LIST")))
             `(let ((,l ,(if (member-if-internal (lambda (n) (equal n name)) '("APPEND" "APPENDING"))
                             `(sys::%loop-copy-list ,form)
                             form)))
                (when ,l
                  (if ,tail (rplacd ,tail ,l) (setq ,var ,l))
                  (setq ,tail (last-internal ,l))))))
          ((member-if-internal (lambda (n) (equal n name)) '("SUM" "SUMMING"))
           (let ((var (car (cdr (sys::%loop-accumulator 'sum into type)))))
             `(setq ,var (+ ,var ,form))))
          ((member-if-internal (lambda (n) (equal n name)) '("COUNT" "COUNTING"))
           (let ((var (car (cdr (sys::%loop-accumulator 'sum into type)))))
             `(when ,form (setq ,var (1+ ,var)))))
          (t
           (let* ((acc (sys::%loop-accumulator 'minimax into))
                  (var (car (cdr acc))) (flag (car (cdr (cdr acc)))) (v (gensym "VALUE"))
                  (max (member-if-internal (lambda (n) (equal n name)) '("MAXIMIZE" "MAXIMIZING"))))
             `(let ((,v ,form))
                (when (or (not ,flag) (,(if max '> '<) ,v ,var))
                  (setq ,var ,v ,flag t))))))))

(defun sys::%loop-copy-list (list)
  ;; A fresh copy of LIST's conses that keeps a dotted tail, as COPY-LIST does
  ;; (the last list APPENDed keeps it).
  (let ((out nil))
    (tagbody
     next
       (when (consp list)
         (setq out (cons (car list) out))
         (setq list (cdr list))
         (go next)))
    (let ((copy (sys::%nreverse-list out)))
      (when out (rplacd out list))
      copy)))

;;; Main clauses

(defvar sys::*loop-accumulation-names*
  '("COLLECT" "COLLECTING" "APPEND" "APPENDING" "NCONC" "NCONCING" "SUM" "SUMMING"
    "COUNT" "COUNTING" "MAXIMIZE" "MAXIMIZING" "MINIMIZE" "MINIMIZING"))

(defun sys::%loop-form (it)
  ;; The next form; inside a conditional, the symbol IT is the test's value.
  (let ((x (sys::%loop-pop)))
    (if (and it (sys::%loop-kw-p x "IT")) it x)))

(defun sys::%loop-selectable (it)
  ;; One clause a conditional may select, as a form.
  (let ((k (sys::%loop-peek)))
    (cond ((sys::%loop-kw-in k '("DO" "DOING"))
           (sys::%loop-pop)
           (let ((forms (sys::%loop-compound-forms)))
             (unless forms (sys::%loop-error "~S needs at least one compound form" k))
             (if (cdr forms) `(progn ,@forms) (car forms))))
          ((sys::%loop-kw-p k "RETURN")
           (sys::%loop-pop)
           `(return-from ,sys::*loop-name* ,(sys::%loop-form it)))
          ((sys::%loop-kw-in k sys::*loop-accumulation-names*)
           (sys::%loop-pop)
           (sys::%loop-accumulate (symbol-name k) it))
          ((sys::%loop-kw-in k '("WHEN" "IF" "UNLESS"))
           (sys::%loop-pop)
           (sys::%loop-conditional (sys::%loop-kw-p k "UNLESS")))
          (t (sys::%loop-error "~S is not a clause a conditional can select" k)))))

(defun sys::%loop-selectables (it)
  (let ((forms (list (sys::%loop-selectable it))))
    (tagbody
     next
       (when (sys::%loop-pop-kw "AND")
         ;; IT means the test's value in the first clause only; after AND it
         ;; is an ordinary variable (CLHS 6.1.6).
         (push (sys::%loop-selectable nil) forms)
         (go next)))
    (sys::%nreverse-list forms)))

(defun sys::%loop-conditional (negate)
  (let* ((test (sys::%loop-pop))
         (it (gensym "IT"))
         (then (sys::%loop-selectables it))
         (else (if (sys::%loop-pop-kw "ELSE") (sys::%loop-selectables it) nil)))
    (sys::%loop-pop-kw "END")
    (if negate
        `(let ((,it ,test)) (if ,it (progn ,@else) (progn ,@then)))
        `(let ((,it ,test)) (if ,it (progn ,@then) (progn ,@else))))))

(defun sys::%loop-clause ()
  (let ((k (sys::%loop-pop)))
    (cond ((sys::%loop-kw-p k "NAMED") (setq sys::*loop-name* (sys::%loop-pop)))
          ((sys::%loop-kw-p k "WITH") (sys::%loop-with))
          ((sys::%loop-kw-in k '("FOR" "AS")) (sys::%loop-for))
          ((sys::%loop-kw-p k "REPEAT")
           (let* ((n (gensym "COUNT"))
                  (form `(if (<= ,n 0) (go ,sys::*loop-end-tag*) (setq ,n (1- ,n)))))
             (sys::%loop-bind 'let (list (list n (sys::%loop-pop))))
             (sys::%loop-driver (list form) (list form))))
          ((sys::%loop-kw-p k "INITIALLY")
           (setq sys::*loop-prologue* (append sys::*loop-prologue* (sys::%loop-compound-forms))))
          ((sys::%loop-kw-p k "FINALLY")
           (setq sys::*loop-epilogue* (append sys::*loop-epilogue* (sys::%loop-compound-forms))))
          ((sys::%loop-kw-in k '("WHILE" "UNTIL"))
           (let ((test (sys::%loop-pop)))
             (sys::%loop-pseudo-body
              (if (sys::%loop-kw-p k "WHILE")
                  `(unless ,test (go ,sys::*loop-end-tag*))
                  `(when ,test (go ,sys::*loop-end-tag*))))))
          ((sys::%loop-kw-in k '("ALWAYS" "NEVER"))
           (unless sys::*loop-termination-test* (setq sys::*loop-termination-test* k))
           (let ((test (sys::%loop-pop)))
             (setq sys::*loop-result* t)
             (sys::%loop-pseudo-body
              (if (sys::%loop-kw-p k "ALWAYS")
                  `(unless ,test (return-from ,sys::*loop-name* nil))
                  `(when ,test (return-from ,sys::*loop-name* nil))))))
          ((sys::%loop-kw-p k "THEREIS")
           (unless sys::*loop-termination-test* (setq sys::*loop-termination-test* k))
           (let ((g (gensym "THEREIS")))
             (sys::%loop-pseudo-body
              `(let ((,g ,(sys::%loop-pop))) (when ,g (return-from ,sys::*loop-name* ,g))))))
          ((not (sys::%loop-kw-in k (append '("DO" "DOING" "RETURN" "WHEN" "IF" "UNLESS")
                                            sys::*loop-accumulation-names*)))
           (sys::%loop-error "unknown clause keyword ~S" k))
          (t
           (setq sys::*loop-tokens* (cons k sys::*loop-tokens*))
           (setq sys::*loop-emitted-body* t)
           (push (sys::%loop-selectable nil) sys::*loop-body*)))))

(defun sys::%loop-check-variables ()
  ;; A variable named twice by WITH, FOR/AS or INTO is an error (CLHS 6.1.1.7);
  ;; the loop's own temporaries are uninterned and left out.
  (let ((seen nil))
    (dolist (b (append (sys::%loop-flatten-groups) sys::*loop-acc-bindings*))
      (let ((var (car b)))
        (when (and var (symbol-package var))
          (when (member-eql var seen)
            (sys::%loop-error "the variable ~S is bound twice" var))
          (push var seen))))))

(defun sys::%loop-flatten-groups ()
  (let ((out nil))
    (dolist (g sys::*loop-groups*)
      (dolist (b (car (cdr g))) (push (if (consp b) b (list b)) out)))
    out))

(defun sys::%loop-expand (body)
  (let ((sys::*loop-tokens* body)
        (sys::*loop-name* nil)
        (sys::*loop-groups* nil)
        (sys::*loop-acc-bindings* nil)
        (sys::*loop-accumulators* nil)
        (sys::*loop-default-acc* nil)
        (sys::*loop-prologue* nil)
        (sys::*loop-before* nil)
        (sys::*loop-after* nil)
        (sys::*loop-body* nil)
        (sys::*loop-epilogue* nil)
        (sys::*loop-result* nil)
        (sys::*loop-emitted-body* nil)
        ;; One tag name for every loop, as SBCL's: GO finds the innermost loop's
        ;; tag lexically, so LOOP-FINISH is a global macro and the expansion
        ;; holds no MACROLET (which code walkers such as ITERATE refuse).
        (sys::*loop-end-tag* 'sys::%end-loop)
        (sys::*loop-termination-test* nil))
    (when (sys::%loop-kw-p (car body) "NAMED")
      (setq sys::*loop-tokens* (cdr (cdr body)))
      (setq sys::*loop-name* (car (cdr body))))
    (tagbody
     next
       (when sys::*loop-tokens*
         (sys::%loop-clause)
         (go next)))
    (sys::%loop-check-variables)
    (when (and sys::*loop-termination-test* sys::*loop-default-acc*)
      (sys::%loop-error "~S cannot be combined with an accumulation that is not INTO a variable"
                        sys::*loop-termination-test*))
    (let* ((next (gensym "NEXT-LOOP"))
           (tagbody `(tagbody
                        ,@sys::*loop-prologue*
                        ,@(reverse-internal sys::*loop-before*)
                        ,next
                        ,@(reverse-internal sys::*loop-body*)
                        ,@(reverse-internal sys::*loop-after*)
                        (go ,next)
                        ,sys::*loop-end-tag*
                        ,@sys::*loop-epilogue*
                        (return-from ,sys::*loop-name* ,sys::*loop-result*)))
           (inner tagbody))
      (dolist (g sys::*loop-groups*)
        (setq inner `(,(car g) ,(car (cdr g)) ,inner)))
      (when sys::*loop-acc-bindings*
        (setq inner `(let ,(reverse-internal sys::*loop-acc-bindings*) ,inner)))
      `(block ,sys::*loop-name* ,inner))))

(defmacro loop-finish ()
  "End the innermost extended LOOP, running its epilogue."
  '(go sys::%end-loop))
