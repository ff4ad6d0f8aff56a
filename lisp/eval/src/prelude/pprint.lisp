;;;; The prelude: the pretty printer's Lisp side. PPRINT-LOGICAL-BLOCK with
;;;; PPRINT-POP and PPRINT-EXIT-IF-LIST-EXHAUSTED, PPRINT-FILL/LINEAR/TABULAR,
;;;; the pprint-dispatch tables (COPY-PPRINT-DISPATCH, SET-PPRINT-DISPATCH,
;;;; PPRINT-DISPATCH) and the initial table's layouts of code and data, laid
;;;; out as SBCL lays them out.
;;;;
;;;; The layout engine is Rust (a pretty stream, builtins/pretty.rs over
;;;; mprof_heap::pretty); this file decides which blocks, newlines and
;;;; indentations to give it. With *PRINT-PRETTY* true the Rust printer hands
;;;; every cons and array (every object, once a table has entries for other
;;;; types) to SYS::%PPRINT-OBJECT, which runs the dispatch table's function
;;;; on a pretty stream; elements are printed with WRITE, which comes back
;;;; here for the conses among them. The nesting runs on the VM's stack, so
;;;; data nested deeper than --max-depth ends in a STACK-EXHAUSTED
;;;; storage-condition, never a crash (*PRINT-LEVEL* bounds what is shown).
;;;;
;;;; Invariants: a pretty stream lives for one outermost print
;;;; (SYS::%CALL-WITH-PRETTY-STREAM), with its target in
;;;; SYS::*PRETTY-TARGETS*; SYS::*CURRENT-PRINT-LEVEL* is the depth of the
;;;; logical block being printed, from which the Rust printer counts
;;;; *PRINT-LEVEL* for the elements.

(defvar sys::*current-print-level* 0)
(defvar sys::*circle-table* nil
  "The id of the *PRINT-CIRCLE* label table of the print in progress (see builtins/pretty.rs).")
(defvar sys::*circle-marked* nil
  "The object the pretty printer was called for: the Rust printer has printed its label.")
(defvar sys::*pretty-targets* nil
  "An alist (pretty stream . target) of the pretty streams in use.")

(defun sys::%output-designator (stream)
  (cond ((null stream) *standard-output*)
        ((eq stream t) *terminal-io*)
        (t stream)))

(defun sys::%call-with-pretty-stream (stream function)
  "Call FUNCTION with a pretty stream writing to STREAM (STREAM itself when it
is one); the text is all out when this returns."
  (let ((stream (sys::%output-designator stream)))
    (cond ((sys::%pretty-stream-p stream)
           (funcall function stream))
          ((sys::%lisp-output-p stream)
           ;; A Gray stream: lay out into a string starting at its column.
           (write-string (sys::%text-at-column (sys::%gray-column stream)
                                               (lambda (out) (sys::%call-with-pretty-stream out function)))
                         stream))
          (t
           (let* ((pretty (sys::%make-pretty-stream stream))
                  (sys::*pretty-targets* (acons pretty stream sys::*pretty-targets*)))
             (funcall function pretty)
             (sys::%pretty-finish pretty))))
    nil))

(defun sys::%block-skipped-p (object stream)
  "Print what stands for a logical block whose body is not run: OBJECT when
it is not a list, # past *PRINT-LEVEL*, #n# when *PRINT-CIRCLE* printed it
already (and print #n= before its first printing)."
  (cond ((not (listp object)) (write object :stream stream) t)
        ((and *print-level* (not *print-readably*)
              (>= sys::*current-print-level* *print-level*))
         (write-char #\# stream)
         t)
        ((and *print-circle* object (not (eq object sys::*circle-marked*)))
         (let ((mark (sys::%circle-mark object)))
           (when mark (write-string mark stream))
           (and mark (char= (char mark (1- (length mark))) #\#))))
        (t nil)))

(defun sys::%pprint-pop-ok-p (stream rest count)
  "Whether PPRINT-POP may take the next element: not after a dotted tail
(printed here as . TAIL), past *PRINT-LENGTH* (printed as ...), or once
*PRINT-LINES* has cut the output."
  (cond ((sys::%pretty-abbreviated-p stream) nil)
        ((or (and rest (not (listp rest)))
             (and *print-circle* rest (plusp count) (sys::%circle-shared-p rest)))
         ;; A dotted tail, or a shared one: . #n# / . #n=(...)
         (write-string ". " stream)
         (write rest :stream stream)
         nil)
        ((and *print-length* (not *print-readably*) (>= count *print-length*))
         (write-string "..." stream)
         nil)
        (t t)))

(defmacro pprint-logical-block ((stream-symbol object &key (prefix nil prefix-p)
                                                 (per-line-prefix nil per-line-p)
                                                 (suffix "")) &body body)
  "Print the body's output as a logical block of OBJECT's elements, on a
pretty stream bound to STREAM-SYMBOL (NIL: *STANDARD-OUTPUT*, T: *TERMINAL-IO*)."
  (when (and prefix-p per-line-p)
    (error "PPRINT-LOGICAL-BLOCK: :PREFIX and :PER-LINE-PREFIX cannot both be given"))
  (let ((var (cond ((null stream-symbol) '*standard-output*)
                   ((eq stream-symbol t) '*terminal-io*)
                   (t stream-symbol)))
        (obj (gensym "OBJECT")) (rest (gensym "REST")) (count (gensym "COUNT"))
        (blk (gensym "BLOCK")) (pre (gensym "PREFIX")) (suf (gensym "SUFFIX")))
    `(let ((,obj ,object)
           (,pre ,(if per-line-p per-line-prefix (if prefix-p prefix "")))
           (,suf ,suffix))
       (sys::%check-block-strings ,pre ,suf)
       (sys::%call-with-circle-table
        ,obj
        (lambda ()
       (sys::%call-with-pretty-stream
        ,var
        (lambda (,var)
          (unless (sys::%block-skipped-p ,obj ,var)
            (let ((,rest ,obj) (,count 0)
                  (sys::*circle-marked* nil)
                  (sys::*current-print-level* (1+ sys::*current-print-level*)))
              (declare (ignorable ,rest ,count))
              (sys::%pretty-start-block ,var ,pre ,(and per-line-p t) ,suf)
              (block ,blk
                (macrolet ((pprint-pop ()
                             '(if (sys::%pprint-pop-ok-p ,var ,rest ,count)
                                  (progn (setq ,count (1+ ,count)) (pop ,rest))
                                  (return-from ,blk nil)))
                           (pprint-exit-if-list-exhausted ()
                             '(when (null ,rest) (return-from ,blk nil))))
                  (locally ,@body)))
              (sys::%pretty-end-block ,var))))))))))

(defun sys::%call-with-circle-table (object function)
  "Call FUNCTION with *PRINT-CIRCLE*'s labels found for OBJECT, unless a print
in progress has them already."
  (let ((id (sys::%circle-begin object)))
    (if id
        (unwind-protect (let ((sys::*circle-table* id)) (funcall function))
          (sys::%circle-end id))
        (funcall function))))

(defun sys::%check-block-strings (prefix suffix)
  (unless (stringp prefix) (error 'type-error :datum prefix :expected-type 'string))
  (unless (stringp suffix) (error 'type-error :datum suffix :expected-type 'string)))

(defmacro pprint-pop ()
  (error "PPRINT-POP is only meaningful inside PPRINT-LOGICAL-BLOCK"))

(defmacro pprint-exit-if-list-exhausted ()
  (error "PPRINT-EXIT-IF-LIST-EXHAUSTED is only meaningful inside PPRINT-LOGICAL-BLOCK"))

;;; The standard list printers.

(defun sys::%pprint-list (stream list colon-p newline)
  (pprint-logical-block (stream list :prefix (if colon-p "(" "") :suffix (if colon-p ")" ""))
    (pprint-exit-if-list-exhausted)
    (loop (write (pprint-pop) :stream stream)
          (pprint-exit-if-list-exhausted)
          (write-char #\space stream)
          (pprint-newline newline stream))))

(defun pprint-fill (stream list &optional (colon-p t) at-sign-p)
  (declare (ignore at-sign-p))
  (sys::%pprint-list stream list colon-p :fill))

(defun pprint-linear (stream list &optional (colon-p t) at-sign-p)
  (declare (ignore at-sign-p))
  (sys::%pprint-list stream list colon-p :linear))

(defun pprint-tabular (stream list &optional (colon-p t) at-sign-p (tabsize 16))
  (declare (ignore at-sign-p))
  (pprint-logical-block (stream list :prefix (if colon-p "(" "") :suffix (if colon-p ")" ""))
    (pprint-exit-if-list-exhausted)
    (loop (write (pprint-pop) :stream stream)
          (pprint-exit-if-list-exhausted)
          (write-char #\space stream)
          (pprint-tab :section-relative 0 (or tabsize 16) stream)
          (pprint-newline :fill stream))))

;;; Dispatch tables. An entry is (type-specifier priority function initial-p);
;;; entries for (CONS (MEMBER sym...)) / (CONS (EQL sym)) are also found
;;; through CONS-ENTRIES, a hash table by symbol. OTHERS-P tells the Rust
;;; printer that some entry may take objects other than conses and arrays.

(defmacro sys::%in-system-package (form)
  "Expand FORM with *PACKAGE* the system package, so the names DEFSTRUCT
makes are the system's, not COMMON-LISP's (the prelude is read in the latter)."
  (let ((*package* (find-package "SYS")))
    (macroexpand form)))

(sys::%in-system-package
 (defstruct (sys::pprint-dispatch-table (:constructor sys::%make-pprint-table)
                                        (:copier nil))
   (sys::entries nil)
   (sys::cons-entries (make-hash-table :test 'eq))
   (sys::others-p nil)))

(defvar *print-pprint-dispatch* nil)
(defvar sys::*standard-pprint-dispatch* nil)

(defun sys::%cons-car-symbols (type)
  "The symbols a type (CONS (MEMBER ...)) or (CONS (EQL ...)) admits as car, or :NONE."
  (if (and (consp type) (eq (car type) 'cons) (consp (cdr type)) (consp (cadr type))
           (member (car (cadr type)) '(member eql)))
      (cdr (cadr type))
      :none))

(defun sys::%entry-better-p (a b)
  "Whether entry A wins over entry B: the program's entries over the initial
ones, then the higher priority."
  (cond ((null b) t)
        ((not (eq (fourth a) (fourth b))) (not (fourth a)))
        (t (> (second a) (second b)))))

(defun pprint-dispatch (object &optional (table *print-pprint-dispatch*))
  "The function that pretty-prints OBJECT under TABLE, and whether TABLE has one."
  (let ((table (or table sys::*standard-pprint-dispatch*))
        (best nil))
    (unless (sys::pprint-dispatch-table-p table)
      (error 'type-error :datum table :expected-type 'sys::pprint-dispatch-table))
    (when (and (consp object) (symbolp (car object)))
      (dolist (e (gethash (car object) (sys::pprint-dispatch-table-cons-entries table)))
        (when (sys::%entry-better-p e best) (setq best e))))
    (dolist (e (sys::pprint-dispatch-table-entries table))
      (when (and (sys::%entry-better-p e best) (typep object (first e)))
        (setq best e)))
    (if best
        (values (third best) t)
        (values #'sys::%print-not-pretty nil))))

(defun sys::%print-not-pretty (stream object)
  (let ((*print-pretty* nil)) (write object :stream stream)))

(defun set-pprint-dispatch (type-specifier function &optional (priority 0)
                            (table *print-pprint-dispatch*))
  "Make FUNCTION print objects of TYPE-SPECIFIER under TABLE (NIL: remove the entry)."
  (unless (realp priority) (error 'type-error :datum priority :expected-type 'real))
  (sys::%set-pprint-dispatch type-specifier function priority table nil)
  nil)

(defun sys::%set-pprint-dispatch (type function priority table initial-p)
  (unless (sys::pprint-dispatch-table-p table)
    (error 'type-error :datum table :expected-type 'sys::pprint-dispatch-table))
  (unless (or (null function) (functionp function) (symbolp function))
    (error 'type-error :datum function :expected-type '(or function symbol)))
  (let ((symbols (sys::%cons-car-symbols type))
        (entry (list type priority function initial-p)))
    (if (eq symbols :none)
        (progn
          (setf (sys::pprint-dispatch-table-entries table)
                (remove type (sys::pprint-dispatch-table-entries table) :key #'first :test #'equal))
          (when function
            (push entry (sys::pprint-dispatch-table-entries table))
            (unless (or initial-p (eq type 'cons)
                        (and (consp type) (eq (car type) 'cons)))
              (setf (sys::pprint-dispatch-table-others-p table) t))))
        (let ((hash (sys::pprint-dispatch-table-cons-entries table)))
          (dolist (s symbols)
            (let ((others (remove type (gethash s hash) :key #'first :test #'equal)))
              (setf (gethash s hash) (if function (cons entry others) others))))))))

(defun copy-pprint-dispatch (&optional (table *print-pprint-dispatch*))
  "A new table with TABLE's entries (NIL: the initial table's)."
  (let ((from (or table sys::*standard-pprint-dispatch*)))
    (unless (sys::pprint-dispatch-table-p from)
      (error 'type-error :datum from :expected-type '(or null sys::pprint-dispatch-table)))
    (let ((new (sys::%make-pprint-table))
          (hash (make-hash-table :test 'eq)))
      (maphash (lambda (k v) (setf (gethash k hash) (copy-list v)))
               (sys::pprint-dispatch-table-cons-entries from))
      (setf (sys::pprint-dispatch-table-entries new) (copy-list (sys::pprint-dispatch-table-entries from))
            (sys::pprint-dispatch-table-cons-entries new) hash
            (sys::pprint-dispatch-table-others-p new) (sys::pprint-dispatch-table-others-p from))
      new)))

(defun sys::%pprint-object (object stream depth)
  "The Rust printer's entry into the pretty printer (see the file's comment)."
  (let ((sys::*current-print-level* depth)
        (sys::*circle-marked* object))
    (let ((function (pprint-dispatch object)))
      (sys::%call-with-pretty-stream stream (lambda (s) (funcall function s object))))))

(defun pprint (object &optional stream)
  "Print OBJECT pretty and escaped on a new line, with no space after."
  (let ((s (sys::%output-designator stream)))
    (terpri s)
    (write object :stream s :pretty t :escape t)
    (values)))

(defmacro formatter (control-string)
  "A function of (stream &rest args) that formats ARGS to STREAM under
CONTROL-STRING and returns the arguments it did not consume."
  (unless (stringp control-string)
    (error 'type-error :datum control-string :expected-type 'string))
  (let ((stream (gensym "STREAM")) (args (gensym "ARGS")))
    ;; The name carries the control string, for ~? and ~{~} given this function.
    `(sys::named-lambda (sys::formatter ,control-string) (,stream &rest ,args)
       (apply #'format ,stream ,control-string ,args)
       (nthcdr (sys::%format-consumed) ,args))))

;;; The initial table's layouts (SBCL's).

(defmacro sys::%pp ((stream list) &body body)
  "A parenthesized logical block over LIST; OUT prints the next element."
  `(pprint-logical-block (,stream ,list :prefix "(" :suffix ")")
     (flet ((out () (write (pprint-pop) :stream ,stream))
            (sp (&optional kind) (write-char #\space ,stream) (when kind (pprint-newline kind ,stream))))
       (declare (ignorable #'out #'sp))
       ,@body)))

(defmacro sys::%pp-body (stream kind)
  "The remaining elements, each after a space and a newline of KIND."
  `(loop (pprint-exit-if-list-exhausted)
         (write-char #\space ,stream)
         (pprint-newline ,kind ,stream)
         (out)))

(defun sys::%pprint-fun-call (stream list)
  ;; ~:<~^~W~^ ~:_~:I~@{~W~^ ~:_~}~:>
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (sp :fill)
    (pprint-indent :current 0 stream)
    (loop (out) (pprint-exit-if-list-exhausted) (sp :fill))))

(defun sys::%pprint-cons-default (stream list)
  (if (and (symbolp (car list)) (car list) (fboundp (car list)))
      (sys::%pprint-fun-call stream list)
      (pprint-fill stream list)))

(defun sys::%pprint-block (stream list)
  ;; ~:<~^~W~^~3I ~:_~W~1I~@{ ~:_~W~}~:> with linear body newlines
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (pprint-indent :block 3 stream)
    (sp :fill) (out)
    (pprint-indent :block 1 stream)
    (sys::%pp-body stream :linear)))

(defun sys::%pprint-progn (stream list)
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (sys::%pp-body stream :linear)))

(defun sys::%pprint-if (stream list)
  ;; ~:<~^~W~^ ~:I~W~^~@{ ~:@_~W~}~:>
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (write-char #\space stream)
    (pprint-indent :current 0 stream)
    (out)
    (sys::%pp-body stream :mandatory)))

(defun sys::%pprint-bindings (stream bindings binding-printer)
  "A list of bindings, one per line when it does not fit."
  (pprint-logical-block (stream bindings :prefix "(" :suffix ")")
    (pprint-exit-if-list-exhausted)
    (loop (funcall binding-printer stream (pprint-pop))
          (pprint-exit-if-list-exhausted)
          (write-char #\space stream)
          (pprint-newline :linear stream))))

(defun sys::%pprint-let-binding (stream binding)
  (if (consp binding)
      (pprint-linear stream binding)
      (write binding :stream stream)))

(defun sys::%pprint-flet-binding (stream binding)
  ;; A local function: name and lambda list, then the body below.
  (if (consp binding)
      (sys::%pp (stream binding)
        (pprint-exit-if-list-exhausted) (out)
        (pprint-exit-if-list-exhausted)
        (write-char #\space stream) (pprint-newline :miser stream)
        (let ((lambda-list (pprint-pop)))
          (if (listp lambda-list) (pprint-fill stream lambda-list) (write lambda-list :stream stream)))
        (pprint-indent :block 1 stream)
        (pprint-exit-if-list-exhausted)
        (write-char #\space stream) (pprint-newline :mandatory stream)
        (out)
        (sys::%pp-body stream :linear))
      (write binding :stream stream)))

(defun sys::%pprint-let-like (stream list binding-printer)
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (write-char #\space stream)
    (pprint-newline :miser stream)
    (let ((bindings (pprint-pop)))
      (if (listp bindings)
          (sys::%pprint-bindings stream bindings binding-printer)
          (write bindings :stream stream)))
    (pprint-indent :block 1 stream)
    (pprint-exit-if-list-exhausted)
    (write-char #\space stream)
    (pprint-newline :mandatory stream)
    (out)
    (sys::%pp-body stream :linear)))

(defun sys::%pprint-let (stream list)
  (sys::%pprint-let-like stream list #'sys::%pprint-let-binding))

(defun sys::%pprint-flet (stream list)
  (sys::%pprint-let-like stream list #'sys::%pprint-flet-binding))

(defun sys::%pprint-defun (stream list)
  ;; ~:<~^~W~^ ~@_~:I~W~^ ~:_~W~1I~@{ ~_~W~}~:>
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (sp :miser)
    (pprint-indent :current 0 stream)
    (out)
    (pprint-exit-if-list-exhausted)
    (sp :fill)
    (let ((lambda-list (pprint-pop)))
      (if (listp lambda-list)
          (pprint-fill stream lambda-list)
          (write lambda-list :stream stream)))
    (pprint-indent :block 1 stream)
    (sys::%pp-body stream :linear)))

(defun sys::%pprint-setq (stream list)
  ;; One pair per line: ~:<~^~W~^ ~:I~@_~@{~W~^ ~:_~W~^ ~:@_~}~:>
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (write-char #\space stream)
    (pprint-indent :current 0 stream)
    (pprint-newline :miser stream)
    (loop (out)
          (pprint-exit-if-list-exhausted)
          (sp :fill) (out)
          (pprint-exit-if-list-exhausted)
          (sp :mandatory))))

(defun sys::%pprint-do-var (stream spec)
  ;; ~:<~^~W~^ ~@_~:I~W~@{ ~_~W~}~:>
  (if (consp spec)
      (sys::%pp (stream spec)
        (out)
        (pprint-exit-if-list-exhausted)
        (sp :miser)
        (pprint-indent :current 0 stream)
        (out)
        (sys::%pp-body stream :linear))
      (write spec :stream stream)))

(defun sys::%pprint-do (stream list)
  ;; The variables one per line, the end clause below them, then the body.
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (write-char #\space stream)
    (pprint-indent :current 0 stream)
    (let ((vars (pprint-pop)))
      (if (listp vars)
          (pprint-logical-block (stream vars :prefix "(" :suffix ")")
            (pprint-exit-if-list-exhausted)
            (loop (sys::%pprint-do-var stream (pprint-pop))
                  (pprint-exit-if-list-exhausted)
                  (pprint-newline :mandatory stream)))
          (write vars :stream stream)))
    (pprint-exit-if-list-exhausted)
    (sp :linear)
    (let ((end (pprint-pop)))
      (if (listp end) (pprint-linear stream end) (write end :stream stream)))
    (pprint-indent :block 1 stream)
    (sys::%pp-body stream :linear)))

(defun sys::%pprint-bind (stream list)
  ;; MULTIPLE-VALUE-BIND, DESTRUCTURING-BIND: ~:<~^~W~^~3I ~:_~W~^ ~_~W~1I~@{ ~_~W~}~:>
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (pprint-exit-if-list-exhausted)
    (pprint-indent :block 3 stream)
    (sp :fill)
    (let ((vars (pprint-pop)))
      (if (listp vars) (pprint-fill stream vars) (write vars :stream stream)))
    (pprint-exit-if-list-exhausted)
    (sp :linear) (out)
    (pprint-indent :block 1 stream)
    (sys::%pp-body stream :linear)))

(defun sys::%pprint-tagbody (stream list)
  (sys::%pp (stream list)
    (pprint-exit-if-list-exhausted) (out)
    (loop (pprint-exit-if-list-exhausted)
          (write-char #\space stream)
          (let ((form-or-tag (pprint-pop)))
            (pprint-indent :block (if (atom form-or-tag) 0 1) stream)
            (pprint-newline :linear stream)
            (write form-or-tag :stream stream)))))

(defvar sys::*loop-clause-keywords*
  '("FOR" "AS" "WITH" "COLLECT" "COLLECTING" "APPEND" "APPENDING" "NCONC" "NCONCING"
    "DO" "DOING" "WHEN" "IF" "UNLESS" "WHILE" "UNTIL" "REPEAT" "INITIALLY" "FINALLY"
    "RETURN" "SUM" "SUMMING" "COUNT" "COUNTING" "MAXIMIZE" "MAXIMIZING" "MINIMIZE"
    "MINIMIZING" "ALWAYS" "NEVER" "THEREIS" "NAMED" "LOOP-FINISH"))

(defun sys::%pprint-loop (stream list)
  ;; Each clause on a line of its own.
  (if (not (and (consp (cdr list)) (symbolp (cadr list))))
      (sys::%pprint-progn stream list)
      (sys::%pp (stream list)
        (out)
        (write-char #\space stream)
        (pprint-indent :current 0 stream)
        (pprint-exit-if-list-exhausted)
        (out)
        (loop (pprint-exit-if-list-exhausted)
              (write-char #\space stream)
              (let ((next (pprint-pop)))
                (pprint-newline (if (and (symbolp next)
                                         (member (symbol-name next) sys::*loop-clause-keywords*
                                                 :test #'string=))
                                    :mandatory :fill)
                                stream)
                (write next :stream stream))))))

(defun sys::%pprint-prefixed (stream list prefix)
  "(QUOTE x) as 'x and the like, when the form has exactly one argument."
  (if (and (consp (cdr list)) (null (cddr list)))
      (progn (write-string prefix stream)
             (write (cadr list) :stream stream))
      (pprint-fill stream list)))

(defun sys::%pprint-quote (stream list)
  (sys::%pprint-prefixed stream list (if (eq (car list) 'function) "#'" "'")))

(defun sys::%pprint-backquote (stream list)
  (sys::%pprint-prefixed stream list
                         (case (car list)
                           (sys::backquote "`")
                           (sys::unquote ",")
                           (t ",@"))))

(defun sys::%pprint-vector (stream vector)
  (pprint-logical-block (stream nil :prefix "#(" :suffix ")")
    (dotimes (i (length vector))
      (unless (zerop i)
        (write-char #\space stream)
        (pprint-newline :fill stream))
      (pprint-pop)
      (write (aref vector i) :stream stream))))

(defun sys::%pprint-array-level (stream array index dims)
  "One parenthesized level of a multidimensional array, from row-major INDEX."
  (if (null dims)
      (write (row-major-aref array index) :stream stream)
      (pprint-logical-block (stream nil :prefix "(" :suffix ")")
        (let ((dim (car dims)) (step (reduce #'* (cdr dims))) (count 0))
          (unless (zerop dim)
            (loop (pprint-pop)
                  (sys::%pprint-array-level stream array index (cdr dims))
                  (when (= (incf count) dim) (return))
                  (write-char #\space stream)
                  (pprint-newline (if (cdr dims) :linear :fill) stream)
                  (incf index step)))))))

(defun sys::%pprint-array (stream array)
  (cond ((or (stringp array) (bit-vector-p array) (not *print-array*))
         (sys::%print-not-pretty stream array))
        ((vectorp array) (sys::%pprint-vector stream array))
        ((and *print-level* (not *print-readably*)
              (>= sys::*current-print-level* *print-level*))
         (write-char #\# stream))
        (t (format stream "#~DA" (array-rank array))
           (if (zerop (array-rank array))
               (write (aref array) :stream stream)
               (sys::%pprint-array-level stream array 0 (array-dimensions array))))))

(defun sys::%pprint-structure (stream object)
  "A structure without a print method: #S(NAME :SLOT value ...), one slot per
line when it does not fit."
  (if (not (typep object 'structure-object))
      (sys::%print-not-pretty stream object)
      (let* ((name (sys::%struct-type-name object))
             (slots (sys::%struct-type-slots name)))
        (pprint-logical-block (stream nil :prefix "#S(" :suffix ")")
          (write name :stream stream :escape t)
          (when slots
            (write-char #\space stream)
            (pprint-newline :linear stream)
            (let ((i 0))
              (loop
                (pprint-pop)
                (let ((key (intern (symbol-name (pop slots)) "KEYWORD")))
                  (unless (or *print-escape* *print-readably*) (write-char #\: stream))
                  (write key :stream stream))
                (write-char #\space stream)
                (pprint-newline :miser stream)
                (write (sys::%struct-ref object i nil) :stream stream)
                (incf i)
                (when (null slots) (return))
                (write-char #\space stream)
                (pprint-newline :linear stream))))))))

(let ((table (sys::%make-pprint-table)))
  (sys::%set-pprint-dispatch 'cons #'sys::%pprint-cons-default -2 table t)
  (sys::%set-pprint-dispatch 'array #'sys::%pprint-array -1 table t)
  (sys::%set-pprint-dispatch 'structure-object #'sys::%pprint-structure -1 table t)
  (dolist (layout '((sys::%pprint-block
                     block catch eval-when multiple-value-call multiple-value-prog1 return-from
                     throw unwind-protect defconstant defparameter defvar defstruct
                     multiple-value-setq pprint-logical-block print-unreadable-object prog1
                     unless when dolist dotimes do-symbols do-external-symbols do-all-symbols
                     case ccase ecase typecase ctypecase etypecase
                     with-hash-table-iterator with-input-from-string with-open-file
                     with-open-stream with-output-to-string with-package-iterator
                     with-simple-restart with-compilation-unit lambda)
                    (sys::%pprint-progn progn locally with-standard-io-syntax time step)
                    (sys::%pprint-if if)
                    (sys::%pprint-let let let* symbol-macrolet handler-bind)
                    (sys::%pprint-flet flet labels macrolet)
                    (sys::%pprint-defun defun defmacro deftype define-modify-macro
                     define-setf-expander defsetf defmethod define-compiler-macro)
                    (sys::%pprint-setq setq setf psetq psetf)
                    (sys::%pprint-do do do*)
                    (sys::%pprint-bind multiple-value-bind destructuring-bind)
                    (sys::%pprint-tagbody tagbody prog prog*)
                    (sys::%pprint-loop loop)
                    (sys::%pprint-quote quote function)
                    (sys::%pprint-backquote sys::backquote sys::unquote sys::unquote-splicing)))
    (destructuring-bind (function &rest names) layout
      (sys::%set-pprint-dispatch `(cons (member ,@names)) (symbol-function function) -1 table t)))
  (setq sys::*standard-pprint-dispatch* table)
  (setq *print-pprint-dispatch* (copy-pprint-dispatch table)))
