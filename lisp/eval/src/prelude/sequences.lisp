;;;; The prelude: the list and sequence library functions that call Lisp
;;;; functions (predicates, :key, :test, mapping, sorting), and the SETF
;;;; places of this area. Each function first tries a Rust fast path
;;;; (builtins/lists.rs, builtins/sequences.rs) when it is called with a
;;;; standard test (eq eql equal equalp), no :key and no :test-not; the
;;;; general path calls the user's functions from Lisp.
;;;;
;;;; Invariants: a user function (predicate, key, test) is called once per
;;;; element examined, never from Rust; results share structure with the
;;;; arguments only where CL allows it (tails of lists after the last
;;;; removed/substituted element); vectors and strings are processed up to
;;;; their fill pointer; bad :start/:end signal type-errors (as in SBCL).

;;; Argument helpers

(defmacro sys::%test-code (test test-not key)
  "The fast-path code of a standard test (0 eq, 1 eql, 2 equal, 3 equalp), or
NIL when the call needs the general path. A macro: it runs on every call of
member, assoc, find..., so it must not cost a function call. TEST, TEST-NOT
and KEY are variables."
  `(if (or ,test-not (and ,key (not (eq ,key #'identity)) (not (eq ,key 'identity))))
       nil
       (cond ((null ,test) 1)
             ((or (eq ,test #'eql) (eq ,test 'eql)) 1)
             ((or (eq ,test #'eq) (eq ,test 'eq)) 0)
             ((or (eq ,test #'equal) (eq ,test 'equal)) 2)
             ((or (eq ,test #'equalp) (eq ,test 'equalp)) 3)
             (t nil))))

(defun sys::%test-pred (item test test-not key)
  "A one-argument predicate on elements: whether the element's key passes
the test against ITEM (called as (test item key-of-element))."
  (when (and test test-not)
    (error "both :TEST and :TEST-NOT were given"))
  (let ((test (or test #'eql)))
    (if key
        (if test-not
            (lambda (x) (not (funcall test-not item (funcall key x))))
            (lambda (x) (funcall test item (funcall key x))))
        (if test-not
            (lambda (x) (not (funcall test-not item x)))
            (lambda (x) (funcall test item x))))))

(defun sys::%key-pred (pred key negate)
  (if key
      (if negate
          (lambda (x) (not (funcall pred (funcall key x))))
          (lambda (x) (funcall pred (funcall key x))))
      (if negate
          (lambda (x) (not (funcall pred x)))
          pred)))

(defmacro sys::%do-seq ((var index seq start end from-end) &body body)
  "Run BODY with VAR bound to each element of SEQ in [START, END) and INDEX
to its position, from the end when FROM-END. Lists are walked by their
conses (from the end through a reversed copy of the range)."
  (let ((s (gensym "SEQ")) (st (gensym "START")) (en (gensym "END"))
        (tail (gensym "TAIL")) (rev (gensym "REV")) (check (gensym "CHECK")))
    `(let* ((,s ,seq) (,st (or ,start 0)) (,en ,end))
       (if (listp ,s)
           (progn
             (when (or (not (eql ,st 0)) ,en ,from-end)
               (setq ,en (sys::%seq-check-bounds ,s ,st ,en)))
             (if ,from-end
                 (let ((,rev nil) (,tail (nthcdr ,st ,s)) (,index ,st))
                   (tagbody
                    collect
                      (when (< ,index ,en)
                        (setq ,rev (cons (car ,tail) ,rev))
                        (setq ,tail (cdr ,tail) ,index (1+ ,index))
                        (go collect)))
                   (tagbody
                    next
                      (when ,rev
                        (setq ,index (1- ,index))
                        (let ((,var (car ,rev))) ,@body)
                        (setq ,rev (cdr ,rev))
                        (go next))))
                 ;; Without an end, SYS::%CHECK-CYCLE says how many conses the walk
                 ;; may take (the list's length, or a milestone doubling from 1,024)
                 ;; after making sure they close no cycle: linear in all, and the
                 ;; loop compares its index alone.
                 (let* ((,tail (nthcdr ,st ,s)) (,index ,st)
                        (,check (or ,en (sys::%check-cycle ,s ,st))))
                   (tagbody
                    next
                      (when (< ,index ,check)
                        (let ((,var (car ,tail))) ,@body)
                        (setq ,tail (cdr ,tail) ,index (1+ ,index))
                        (go next))
                      (when (and (null ,en) (consp ,tail))
                        (setq ,check (sys::%check-cycle ,s ,index))
                        (go next)))
                   (when (and ,tail (atom ,tail))
                     (error 'type-error :datum ,s :expected-type 'list)))))
           (progn
             (setq ,en (sys::%seq-check-bounds ,s ,st ,en))
             (if ,from-end
                 (let ((,index (1- ,en)))
                   (tagbody
                    next
                      (when (>= ,index ,st)
                        (let ((,var (sys::%seq-vref ,s ,index))) ,@body)
                        (setq ,index (1- ,index))
                        (go next))))
                 (let ((,index ,st))
                   (tagbody
                    next
                      (when (< ,index ,en)
                        (let ((,var (sys::%seq-vref ,s ,index))) ,@body)
                        (setq ,index (1+ ,index))
                        (go next))))))))))

(defun sys::%scan (pred seq start end from-end want-index)
  "The first (from the end: last) element in range satisfying PRED: its
index when WANT-INDEX, else the element."
  (sys::%do-seq (x i seq start end from-end)
    (when (funcall pred x)
      (return-from sys::%scan (if want-index i x))))
  nil)

(defun sys::%matching-indices (pred seq start end from-end count)
  "The positions in range whose element satisfies PRED, at most COUNT of
them (the last ones when FROM-END)."
  (let ((out nil) (n 0))
    (when (and count (<= count 0))
      (return-from sys::%matching-indices nil))
    (sys::%do-seq (x i seq start end from-end)
      (when (funcall pred x)
        (setq out (cons i out) n (1+ n))
        (when (and count (>= n count))
          (return-from sys::%matching-indices out))))
    out))

;;; Lists: membership and association

(defmacro sys::%do-tails ((var list) &body body)
  "Run BODY with VAR bound to each tail of LIST in turn, in a block NIL that
returns NIL at the end; a dotted LIST is a type-error (its datum the atom
that ends it, as in SBCL), and so is a circular one: SYS::%CHECK-CYCLE says how many tails may be taken without looking (the
length, or a milestone doubling from 1,024) once it has looked for a cycle."
  (let ((l (gensym "LIST")) (n (gensym "N")) (check (gensym "CHECK")))
    `(let* ((,l ,list) (,var ,l) (,n 0) (,check (sys::%check-cycle ,l 0)))
       (block nil
         (tagbody
          next
            (when (< ,n ,check)
              (progn ,@body)
              (setq ,var (cdr ,var) ,n (1+ ,n))
              (go next))
            (when (consp ,var)
              (setq ,check (sys::%check-cycle ,l ,n))
              (go next))
            (when ,var (error 'type-error :datum ,var :expected-type 'list)))
         nil))))

(defun member (item list &key key test test-not)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%list-member item list code)
        (let ((pred (sys::%test-pred item test test-not key)))
          (sys::%do-tails (tail list)
            (when (funcall pred (car tail)) (return tail)))))))

(defun member-if (predicate list &key key)
  (sys::%do-tails (tail list)
    (when (funcall predicate (if key (funcall key (car tail)) (car tail))) (return tail))))

(defun member-if-not (predicate list &key key)
  (sys::%do-tails (tail list)
    (unless (funcall predicate (if key (funcall key (car tail)) (car tail))) (return tail))))

(defun sys::%assoc-general (pred alist by-car)
  (sys::%do-tails (tail alist)
    (let ((pair (car tail)))
      (when (and pair (funcall pred (if by-car (car pair) (cdr pair))))
        (return pair)))))

(defun assoc (item alist &key key test test-not)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%list-assoc item alist code)
        (sys::%assoc-general (sys::%test-pred item test test-not key) alist t))))

(defun assoc-if (predicate alist &key key)
  (sys::%assoc-general (sys::%key-pred predicate key nil) alist t))

(defun assoc-if-not (predicate alist &key key)
  (sys::%assoc-general (sys::%key-pred predicate key t) alist t))

(defun rassoc (item alist &key key test test-not)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%list-rassoc item alist code)
        (sys::%assoc-general (sys::%test-pred item test test-not key) alist nil))))

(defun rassoc-if (predicate alist &key key)
  (sys::%assoc-general (sys::%key-pred predicate key nil) alist nil))

(defun rassoc-if-not (predicate alist &key key)
  (sys::%assoc-general (sys::%key-pred predicate key t) alist nil))

(defun adjoin (item list &key key test test-not)
  (if (member (if key (funcall key item) item) list :key key :test test :test-not test-not)
      list
      (cons item list)))

;;; Lists: trees

;;; The tree walks keep their work on explicit Lisp stacks rather than
;;; recursing, so data nested 1,000,000 deep (or a list 1,000,000 long) costs
;;; heap, not frames: recursion would hit the frame limit.

(defun tree-equal (x y &key test test-not)
  (let ((test (cond (test-not (lambda (a b) (not (funcall test-not a b))))
                    (test test)
                    (t #'eql)))
        (pending (list (cons x y)))
        (steps 0) (check 1048576))
    (loop
      (when (null pending) (return t))
      (let* ((pair (pop pending)) (a (car pair)) (b (cdr pair)))
        (cond ((and (consp a) (consp b))
               ;; Two circular lists never run out of pairs: past twice as many
               ;; pairs as the heap could hold conses, give up as EQUAL does.
               (when (= (setq steps (1+ steps)) check)
                 (setq check (sys::%check-pair-budget steps)))
               ;; The cars are compared first, as SBCL does.
               (push (cons (cdr a) (cdr b)) pending)
               (push (cons (car a) (car b)) pending))
              ((or (consp a) (consp b)) (return nil))
              ((not (funcall test a b)) (return nil)))))))

(defun sys::%rebuild-tree (tree replace)
  "Rebuild TREE bottom-up: REPLACE returns (values new t) for a subtree to
replace (not descended into), else NIL. Unchanged conses are shared."
  (let ((work (list tree)) (done '()) (mark (list nil)))
    (loop
      (when (null work) (return (car done)))
      (let ((x (pop work)))
        (if (eq x mark)
            (let* ((orig (pop work)) (d (pop done)) (a (pop done)))
              (push (if (and (eq a (car orig)) (eq d (cdr orig))) orig (cons a d)) done))
            (multiple-value-bind (new replaced) (funcall replace x)
              (cond (replaced (push new done))
                    ((atom x) (push x done))
                    (t (push x work)
                       (push mark work)
                       (push (cdr x) work)
                       (push (car x) work)))))))))

(defun sys::%subst-general (new pred tree)
  (sys::%rebuild-tree tree (lambda (x) (if (funcall pred x) (values new t) nil))))

(defun subst (new old tree &key key test test-not)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%list-subst new old tree code)
        (sys::%subst-general new (sys::%test-pred old test test-not key) tree))))

(defun subst-if (new predicate tree &key key)
  (sys::%subst-general new (sys::%key-pred predicate key nil) tree))

(defun subst-if-not (new predicate tree &key key)
  (sys::%subst-general new (sys::%key-pred predicate key t) tree))

(defun nsubst (new old tree &key key test test-not)
  (subst new old tree :key key :test test :test-not test-not))

(defun nsubst-if (new predicate tree &key key)
  (subst-if new predicate tree :key key))

(defun nsubst-if-not (new predicate tree &key key)
  (subst-if-not new predicate tree :key key))

(defun sublis (alist tree &key key test test-not)
  (sys::%rebuild-tree
   tree
   (lambda (x)
     (let ((pair (assoc (if key (funcall key x) x) alist :test test :test-not test-not)))
       (if pair (values (cdr pair) t) nil)))))

(defun nsublis (alist tree &key key test test-not)
  (sublis alist tree :key key :test test :test-not test-not))

;;; Lists: sets. The standard tests without :key run in Rust (hashed for
;;; long lists); the general paths follow SBCL's result orders.

(defun sys::%set-op-general (op list1 list2 key test test-not)
  (flet ((in (x list)
           (member (if key (funcall key x) x) list :key key :test test :test-not test-not)))
    (case op
      (0 (let ((out list2))
           (dolist (x list1 out) (unless (in x list2) (setq out (cons x out))))))
      (1 (let ((out nil))
           (dolist (x list1 out) (when (in x list2) (setq out (cons x out))))))
      (2 (if (null list2)
             list1
             (let ((out nil))
               (dolist (x list1 out) (unless (in x list2) (setq out (cons x out)))))))
      (3 (let ((out nil))
           (dolist (x list1) (unless (in x list2) (setq out (cons x out))))
           ;; The second list's elements are tested as (test x2 x1) in SBCL's order.
           (dolist (x list2 out)
             (unless (member-if (lambda (y)
                                  (let ((kx (if key (funcall key x) x)) (ky (if key (funcall key y) y)))
                                    (cond (test-not (not (funcall test-not ky kx)))
                                          (test (funcall test ky kx))
                                          (t (eql ky kx)))))
                                list1)
               (setq out (cons x out))))))
      (t (dolist (x list1 t) (unless (in x list2) (return nil)))))))

(defun sys::%set-op-dispatch (op list1 list2 key test test-not)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%set-op op list1 list2 code)
        (sys::%set-op-general op list1 list2 key test test-not))))

(defun union (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 0 list1 list2 key test test-not))
(defun nunion (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 0 list1 list2 key test test-not))
(defun intersection (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 1 list1 list2 key test test-not))
(defun nintersection (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 1 list1 list2 key test test-not))
(defun set-difference (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 2 list1 list2 key test test-not))
(defun nset-difference (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 2 list1 list2 key test test-not))
(defun set-exclusive-or (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 3 list1 list2 key test test-not))
(defun nset-exclusive-or (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 3 list1 list2 key test test-not))
(defun subsetp (list1 list2 &key key test test-not)
  (sys::%set-op-dispatch 4 list1 list2 key test test-not))

;;; Sequences: result types

(defun sys::%result-kind (type)
  "0 for a list type, 1 for a general vector type, 2 for a string type, 3 for a bit vector type."
  (let ((head (if (consp type) (car type) type)))
    (case head
      ((list cons null) 0)
      ((string simple-string base-string simple-base-string) 2)
      ((vector simple-vector array simple-array)
       (cond ((and (consp type) (consp (cdr type))
                   (member (sys::%expand-type (car (cdr type))) '(character base-char standard-char)))
              2)
             ((and (consp type) (consp (cdr type)) (eq (car (cdr type)) 'bit)) 3)
             (t 1)))
      ((bit-vector simple-bit-vector) 3)
      (t (let ((expansion (sys::%expand-element-types type)))
           (if (equal expansion type)
               (error 'type-error :datum type :expected-type '(member list vector string))
               (sys::%result-kind expansion)))))))

(defun sys::%make-kind (kind n)
  (case kind
    (0 (make-list n))
    (1 (sys::%seq-make-vector n nil))
    (3 (make-array n :element-type 'bit))
    (t (sys::%seq-make-string n nil))))

(defun make-sequence (type size &key (initial-element nil init-p))
  ;; (vector elt) and (simple-array elt (*)) of a specialized element type.
  (when (and (consp type) (member (car type) '(vector simple-array array)) (consp (cdr type))
             (not (member (cadr type) '(* t character base-char standard-char bit))))
    (return-from make-sequence
      (if init-p
          (make-array size :element-type (cadr type) :initial-element initial-element)
          (make-array size :element-type (cadr type)))))
  (case (sys::%result-kind type)
    (0 (make-list size :initial-element initial-element))
    (1 (sys::%seq-make-vector size initial-element))
    (3 (make-array size :element-type 'bit :initial-element (if init-p initial-element 0)))
    (t (sys::%seq-make-string size (if init-p initial-element #\Space)))))

(defun concatenate (result-type &rest sequences)
  (apply #'sys::%seq-concatenate (sys::%result-kind result-type) sequences))

(defun coerce (object result-type)
  (cond ((or (eq result-type t) (eq result-type 'sequence) (and (not (consp result-type)) (typep object result-type)))
         (if (and (eq result-type 'sequence) (not (typep object 'sequence)))
             (error 'type-error :datum object :expected-type result-type)
             object))
        ((eq result-type 'character)
         (cond ((typep object 'character) object)
               ((and (stringp object) (= (length object) 1)) (elt object 0))
               ((and (symbolp object) (= (length (symbol-name object)) 1)) (elt (symbol-name object) 0))
               (t (error 'type-error :datum object :expected-type 'character))))
        ((and (or (eq result-type 'complex) (and (consp result-type) (eq (car result-type) 'complex)))
              (typep object 'number))
         ;; A real becomes a complex of the part type asked for (a rational
         ;; stays rational, as COMPLEX makes it).
         (let ((part (if (consp result-type) (cadr result-type) '*)))
           (if (and (realp object) (member part '(float double-float single-float short-float long-float)))
               (complex (float object 1d0) 0d0)
               (if (realp object) (complex object) object))))
        ((member result-type '(float double-float single-float short-float long-float))
         (if (typep object 'real)
             (float object 1d0)
             (error 'type-error :datum object :expected-type result-type)))
        ((eq result-type 'function)
         (cond ((functionp object) object)
               ((symbolp object) (symbol-function object))
               ((and (consp object) (eq (car object) 'lambda)) (eval (list 'function object)))
               (t (error 'type-error :datum object :expected-type 'function))))
        ;; A vector type with an element type or a length, (VECTOR FIXNUM), or a
        ;; simple type the object is not, makes a new vector of that type.
        ((and (typep object 'sequence)
              (or (and (consp result-type) (member (car result-type) '(vector simple-array array)))
                  (member result-type '(simple-string simple-vector simple-bit-vector simple-base-string)))
              (not (typep object result-type)))
         (replace (make-sequence result-type (length object)) object))
        ((and (typep object 'sequence)
              (member (if (consp result-type) (car result-type) result-type)
                      '(list cons null string simple-string base-string simple-base-string
                        vector simple-vector array simple-array bit-vector simple-bit-vector)))
         (let ((kind (sys::%result-kind result-type)))
           (if (and (eql kind (sys::%seq-kind object))
                    (or (/= kind 1) (not (eq result-type 'simple-vector)) (typep object 'simple-vector)))
               object
               (progn
                 (when (and (eq result-type 'null) object)
                   (error 'type-error :datum object :expected-type 'null))
                 (when (and (eq result-type 'cons) (null object))
                   (error 'type-error :datum object :expected-type 'cons))
                 (sys::%seq-concatenate kind object)))))
        ((and (consp result-type) (typep object result-type)) object)
        ((not (equal (sys::%expand-element-types result-type) result-type))
         (coerce object (sys::%expand-element-types result-type)))
        (t (error 'type-error :datum object :expected-type result-type))))

;;; Sequences: mapping

(defun sys::%map-states (sequences)
  "The walking state of each sequence: its list, or the vector itself."
  (mapcar-internal #'identity sequences))

(defun sys::%min-length (sequences)
  (let ((n nil))
    (dolist (s sequences n)
      (let ((l (length s)))
        (when (or (null n) (< l n)) (setq n l))))))

(defun sys::%map-args (states seqs i)
  "The arguments for the Ith call, advancing the list states in place."
  (let ((args nil) (st states) (sq seqs))
    (tagbody
     next
       (when st
         (let ((s (car st)))
           (if (listp (car sq))
               (progn (setq args (cons (car s) args)) (rplaca st (cdr s)))
               (setq args (cons (sys::%seq-vref s i) args))))
         (setq st (cdr st) sq (cdr sq))
         (go next)))
    (sys::%nreverse-list args)))

(defun map (result-type function sequence &rest more-sequences)
  (let ((kind (if result-type (sys::%result-kind result-type) nil)))
    (if (and (null more-sequences) (listp sequence))
        (cond ((null kind) (sys::%do-seq (x i sequence nil nil nil) (funcall function x)))
              ((eql kind 0) (mapcar function sequence))
              (t (let* ((n (length sequence)) (out (sys::%make-kind kind n)) (i 0))
                   (dolist (x sequence out)
                     (sys::%seq-vset out i (funcall function x))
                     (setq i (1+ i))))))
        (let* ((seqs (cons sequence more-sequences))
               (n (sys::%min-length seqs))
               (states (sys::%map-states seqs))
               (out (if kind (sys::%make-kind kind n) nil))
               (tail out))
          (dotimes (i n)
            (let ((v (apply function (sys::%map-args states seqs i))))
              (cond ((null kind))
                    ((eql kind 0) (rplaca tail v) (setq tail (cdr tail)))
                    (t (sys::%seq-vset out i v)))))
          out))))

(defun map-into (result-sequence function &rest sequences)
  ;; A vector with a fill pointer is filled up to its whole size, and its
  ;; fill pointer set to the number of elements stored.
  (let* ((n (sys::%seq-capacity result-sequence))
         (n (if sequences (let ((m (sys::%min-length sequences))) (if (< m n) m n)) n))
         (states (sys::%map-states sequences))
         (tail result-sequence))
    (sys::%seq-set-fill result-sequence n)
    (dotimes (i n)
      (let ((v (apply function (sys::%map-args states sequences i))))
        (if (listp result-sequence)
            (progn (rplaca tail v) (setq tail (cdr tail)))
            (sys::%seq-vset result-sequence i v))))
    result-sequence))

(defun sys::%some-general (predicate sequences want-true)
  "SOME/EVERY over several sequences: the first value of PREDICATE that is
true (WANT-TRUE) or the first false one."
  (let* ((n (sys::%min-length sequences))
         (states (sys::%map-states sequences)))
    (dotimes (i n (if want-true nil t))
      (let ((v (apply predicate (sys::%map-args states sequences i))))
        (if want-true
            (when v (return v))
            (unless v (return nil)))))))

(defun some (predicate sequence &rest more-sequences)
  (if more-sequences
      (sys::%some-general predicate (cons sequence more-sequences) t)
      (progn
        (sys::%do-seq (x i sequence nil nil nil)
          (let ((v (funcall predicate x))) (when v (return-from some v))))
        nil)))

(defun every (predicate sequence &rest more-sequences)
  (if more-sequences
      (sys::%some-general predicate (cons sequence more-sequences) nil)
      (progn
        (sys::%do-seq (x i sequence nil nil nil)
          (unless (funcall predicate x) (return-from every nil)))
        t)))

(defun notany (predicate sequence &rest more-sequences)
  (not (apply #'some predicate sequence more-sequences)))

(defun notevery (predicate sequence &rest more-sequences)
  (not (apply #'every predicate sequence more-sequences)))

(defun reduce (function sequence &key key from-end start end (initial-value nil init-p))
  ;; Walks the sequence in place (vectors cons nothing; a list from the end
  ;; is walked through a reversed copy of its range, as in SBCL).
  (let ((acc initial-value) (have init-p))
    (if from-end
        (sys::%do-seq (x i sequence start end t)
          (let ((k (if key (funcall key x) x)))
            (if have (setq acc (funcall function k acc)) (setq acc k have t))))
        (sys::%do-seq (x i sequence start end nil)
          (let ((k (if key (funcall key x) x)))
            (if have (setq acc (funcall function acc k)) (setq acc k have t)))))
    (if have acc (funcall function))))

;;; Sequences: searching and counting

(defun find (item sequence &key from-end test test-not start end key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%seq-find item sequence start end from-end code nil)
        (sys::%scan (sys::%test-pred item test test-not key) sequence start end from-end nil))))

(defun find-if (predicate sequence &key from-end start end key)
  (sys::%scan (sys::%key-pred predicate key nil) sequence start end from-end nil))

(defun find-if-not (predicate sequence &key from-end start end key)
  (sys::%scan (sys::%key-pred predicate key t) sequence start end from-end nil))

(defun position (item sequence &key from-end test test-not start end key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%seq-find item sequence start end from-end code t)
        (sys::%scan (sys::%test-pred item test test-not key) sequence start end from-end t))))

(defun position-if (predicate sequence &key from-end start end key)
  (sys::%scan (sys::%key-pred predicate key nil) sequence start end from-end t))

(defun position-if-not (predicate sequence &key from-end start end key)
  (sys::%scan (sys::%key-pred predicate key t) sequence start end from-end t))

(defun sys::%count-general (pred sequence start end from-end)
  (let ((n 0))
    (sys::%do-seq (x i sequence start end from-end)
      (when (funcall pred x) (setq n (1+ n))))
    n))

(defun count (item sequence &key from-end test test-not start end key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%seq-count item sequence start end code)
        (sys::%count-general (sys::%test-pred item test test-not key) sequence start end from-end))))

(defun count-if (predicate sequence &key from-end start end key)
  (sys::%count-general (sys::%key-pred predicate key nil) sequence start end from-end))

(defun count-if-not (predicate sequence &key from-end start end key)
  (sys::%count-general (sys::%key-pred predicate key t) sequence start end from-end))

;;; Sequences: removing and substituting

(defun sys::%remove-general (pred sequence start end count from-end destructive)
  (if (and (listp sequence) (null start) (null end) (null count) (not destructive))
      ;; The common (remove-if p list): one pass, no index list; the result
      ;; shares the original tail after the last removed element.
      ;; The walk goes to the end: LIST-LENGTH (in Rust) first turns a circular list
      ;; into a type-error, at a small fraction of the walk's own cost.
      (let* ((head (cons nil nil)) (tail head) (pending sequence) (l sequence))
        (unless (list-length sequence)
          (error 'type-error :datum sequence :expected-type 'list))
        (tagbody
         next
           (when (consp l)
             (when (funcall pred (car l))
               ;; Copy the kept elements between the last removal and this one.
               (tagbody
                copy
                  (unless (eq pending l)
                    (rplacd tail (setq tail (cons (car pending) nil)))
                    (setq pending (cdr pending))
                    (go copy)))
               (setq pending (cdr l)))
             (setq l (cdr l))
             (go next)))
        (rplacd tail pending)
        (cdr head))
      (sys::%remove-at sequence (sys::%matching-indices pred sequence start end from-end count) destructive)))

(defun remove (item sequence &key from-end test test-not start end count key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%seq-remove item sequence start end count from-end code nil)
        (sys::%remove-general (sys::%test-pred item test test-not key) sequence start end count from-end nil))))

(defun remove-if (predicate sequence &key from-end start end count key)
  (sys::%remove-general (sys::%key-pred predicate key nil) sequence start end count from-end nil))

(defun remove-if-not (predicate sequence &key from-end start end count key)
  (sys::%remove-general (sys::%key-pred predicate key t) sequence start end count from-end nil))

(defun delete (item sequence &key from-end test test-not start end count key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%seq-remove item sequence start end count from-end code t)
        (sys::%remove-general (sys::%test-pred item test test-not key) sequence start end count from-end t))))

(defun delete-if (predicate sequence &key from-end start end count key)
  (sys::%remove-general (sys::%key-pred predicate key nil) sequence start end count from-end t))

(defun delete-if-not (predicate sequence &key from-end start end count key)
  (sys::%remove-general (sys::%key-pred predicate key t) sequence start end count from-end t))

(defun sys::%duplicates-general (sequence from-end test test-not start end key destructive)
  (let* ((pairs nil) (drop nil)
         (same (lambda (a b)
                 (cond (test-not (not (funcall test-not a b)))
                       (test (funcall test a b))
                       (t (eql a b))))))
    ;; Collect (index . key) in order, then drop every element with an equal
    ;; one later (earlier, when FROM-END).
    (sys::%do-seq (x i sequence start end nil)
      (setq pairs (cons (cons i (if key (funcall key x) x)) pairs)))
    (setq pairs (sys::%nreverse-list pairs))
    (if from-end
        (let ((kept nil))
          (dolist (p pairs)
            (if (member-if (lambda (k) (funcall same k (cdr p))) kept)
                (setq drop (cons (car p) drop))
                (setq kept (cons (cdr p) kept)))))
        (do ((tail pairs (cdr tail))) ((null tail))
          (let ((p (car tail)))
            (when (member-if (lambda (q) (funcall same (cdr p) (cdr q))) (cdr tail))
              (setq drop (cons (car p) drop))))))
    (sys::%remove-at sequence drop destructive)))

(defun remove-duplicates (sequence &key from-end test test-not start end key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%remove-duplicates sequence start end from-end code nil)
        (sys::%duplicates-general sequence from-end test test-not start end key nil))))

(defun delete-duplicates (sequence &key from-end test test-not start end key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%remove-duplicates sequence start end from-end code t)
        (sys::%duplicates-general sequence from-end test test-not start end key t))))

(defun substitute (newitem olditem sequence &key from-end test test-not start end count key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%seq-substitute newitem olditem sequence start end count from-end code nil)
        (sys::%substitute-at sequence newitem
                             (sys::%matching-indices (sys::%test-pred olditem test test-not key)
                                                     sequence start end from-end count)
                             nil))))

(defun substitute-if (newitem predicate sequence &key from-end start end count key)
  (sys::%substitute-at sequence newitem
                       (sys::%matching-indices (sys::%key-pred predicate key nil) sequence start end from-end count)
                       nil))

(defun substitute-if-not (newitem predicate sequence &key from-end start end count key)
  (sys::%substitute-at sequence newitem
                       (sys::%matching-indices (sys::%key-pred predicate key t) sequence start end from-end count)
                       nil))

(defun nsubstitute (newitem olditem sequence &key from-end test test-not start end count key)
  (let ((code (sys::%test-code test test-not key)))
    (if code
        (sys::%seq-substitute newitem olditem sequence start end count from-end code t)
        (sys::%substitute-at sequence newitem
                             (sys::%matching-indices (sys::%test-pred olditem test test-not key)
                                                     sequence start end from-end count)
                             t))))

(defun nsubstitute-if (newitem predicate sequence &key from-end start end count key)
  (sys::%substitute-at sequence newitem
                       (sys::%matching-indices (sys::%key-pred predicate key nil) sequence start end from-end count)
                       t))

(defun nsubstitute-if-not (newitem predicate sequence &key from-end start end count key)
  (sys::%substitute-at sequence newitem
                       (sys::%matching-indices (sys::%key-pred predicate key t) sequence start end from-end count)
                       t))

;;; Sequences: comparing

(defun sys::%as-vector (sequence)
  (if (listp sequence) (sys::%seq-concatenate 1 sequence) sequence))

(defun mismatch (sequence1 sequence2 &key from-end test test-not key (start1 0) end1 (start2 0) end2)
  (let ((code (sys::%test-code test test-not key)))
    (when code
      (return-from mismatch
        (sys::%seq-mismatch sequence1 sequence2 from-end code start1 end1 start2 end2))))
  (let* ((v1 (sys::%as-vector sequence1)) (v2 (sys::%as-vector sequence2))
         (end1 (sys::%seq-check-bounds v1 start1 end1))
         (end2 (sys::%seq-check-bounds v2 start2 end2))
         (test (or test #'eql)))
    (flet ((same (a b)
             (let ((a (if key (funcall key a) a)) (b (if key (funcall key b) b)))
               (if test-not (not (funcall test-not a b)) (funcall test a b)))))
      (if from-end
          (let ((i end1) (j end2))
            (tagbody
             next
               (when (and (> i start1) (> j start2)
                          (same (sys::%seq-vref v1 (1- i)) (sys::%seq-vref v2 (1- j))))
                 (setq i (1- i) j (1- j))
                 (go next)))
            (if (and (= i start1) (= j start2)) nil i))
          (let ((i start1) (j start2))
            (tagbody
             next
               (when (and (< i end1) (< j end2)
                          (same (sys::%seq-vref v1 i) (sys::%seq-vref v2 j)))
                 (setq i (1+ i) j (1+ j))
                 (go next)))
            (if (and (= i end1) (= j end2)) nil i))))))

(defun search (sequence1 sequence2 &key from-end test test-not key (start1 0) end1 (start2 0) end2)
  (let ((code (sys::%test-code test test-not key)))
    (when code
      (return-from search
        (sys::%seq-search sequence1 sequence2 from-end code start1 end1 start2 end2))))
  (let* ((v1 (sys::%as-vector sequence1)) (v2 (sys::%as-vector sequence2))
         (end1 (sys::%seq-check-bounds v1 start1 end1))
         (end2 (sys::%seq-check-bounds v2 start2 end2))
         (n (- end1 start1))
         (test (or test #'eql))
         (found nil))
    (flet ((match-at (p)
             (do ((i start1 (1+ i)) (j p (1+ j))) ((>= i end1) t)
               (let ((a (sys::%seq-vref v1 i)) (b (sys::%seq-vref v2 j)))
                 (when key (setq a (funcall key a) b (funcall key b)))
                 (unless (if test-not (not (funcall test-not a b)) (funcall test a b))
                   (return nil))))))
      (do ((p start2 (1+ p))) ((> (+ p n) end2) found)
        (when (match-at p)
          (setq found p)
          (unless from-end (return p)))))))

;;; Sequences: sorting and merging. Stable merge sorts: lists are relinked
;;; in place (no consing); vectors and strings are merged bottom-up between
;;; themselves and one scratch vector.

(defun sys::%merge-lists (a b predicate key head)
  "Merge two sorted lists destructively, after the scratch cons HEAD. An
element of B goes first only when strictly before A's, which keeps it stable."
  (let ((tail head))
    (tagbody
     next
       (when (and a b)
         (if (if key
                 (funcall predicate (funcall key (car b)) (funcall key (car a)))
                 (funcall predicate (car b) (car a)))
             (progn (rplacd tail b) (setq tail b b (cdr b)))
             (progn (rplacd tail a) (setq tail a a (cdr a))))
         (go next)))
    (rplacd tail (if a a b))
    (cdr head)))

(defun sys::%sort-list-n (list n predicate key head)
  "Sort the first N (> 0) conses of LIST; returns the sorted list and the rest."
  (if (= n 1)
      (let ((rest (cdr list)))
        (rplacd list nil)
        (values list rest))
      (let ((h (sys::%seq-half n)))
        (multiple-value-bind (a rest) (sys::%sort-list-n list h predicate key head)
          (multiple-value-bind (b rest2) (sys::%sort-list-n rest (- n h) predicate key head)
            (values (sys::%merge-lists a b predicate key head) rest2))))))

(defun sys::%sort-vector (vector predicate key)
  ;; The vector itself is one of the two buffers the passes alternate
  ;; between (a string only ever receives its own characters back).
  (let* ((n (length vector))
         (src vector)
         (dst (sys::%seq-make-vector n nil))
         (width 1))
    (tagbody
     pass
       (when (< width n)
         (let ((lo 0))
           (tagbody
            run
              (when (< lo n)
                (let* ((mid (+ lo width)) (mid (if (< mid n) mid n))
                       (hi (+ mid width)) (hi (if (< hi n) hi n))
                       (i lo) (j mid) (k lo))
                  (tagbody
                   merge
                     (when (and (< i mid) (< j hi))
                       (let ((x (sys::%seq-vref src i)) (y (sys::%seq-vref src j)))
                         (if (if key
                                 (funcall predicate (funcall key y) (funcall key x))
                                 (funcall predicate y x))
                             (progn (sys::%seq-vset dst k y) (setq j (1+ j)))
                             (progn (sys::%seq-vset dst k x) (setq i (1+ i)))))
                       (setq k (1+ k))
                       (go merge)))
                  (tagbody
                   left
                     (when (< i mid)
                       (sys::%seq-vset dst k (sys::%seq-vref src i))
                       (setq i (1+ i) k (1+ k))
                       (go left)))
                  (tagbody
                   right
                     (when (< j hi)
                       (sys::%seq-vset dst k (sys::%seq-vref src j))
                       (setq j (1+ j) k (1+ k))
                       (go right)))
                  (setq lo hi))
                (go run))))
         (let ((tmp src)) (setq src dst dst tmp))
         (setq width (+ width width))
         (go pass)))
    (if (eq src vector) vector (replace vector src))))

(defun stable-sort (sequence predicate &key key)
  (if (listp sequence)
      (if (and (consp sequence) (consp (cdr sequence)))
          (values (sys::%sort-list-n sequence (length sequence) predicate key (cons nil nil)))
          sequence)
      (progn (sys::%seq-kind sequence)
             (sys::%sort-vector sequence predicate key))))

(defun sort (sequence predicate &key key)
  (stable-sort sequence predicate :key key))

(defun merge (result-type sequence1 sequence2 predicate &key key)
  (let* ((kind (sys::%result-kind result-type))
         (l1 (if (listp sequence1) sequence1 (sys::%seq-concatenate 0 sequence1)))
         (l2 (if (listp sequence2) sequence2 (sys::%seq-concatenate 0 sequence2)))
         (merged (sys::%merge-lists l1 l2 predicate key (cons nil nil))))
    (if (eql kind 0) merged (sys::%seq-concatenate kind merged))))

;;; SETF places of this area. CAR-like places expand into direct calls of
;;; the Rust updaters (no funcall of a setf function); the (SETF name)
;;; functions exist too, for #'(setf car) and APPLY.

(defun sys::%define-place (name expander setter)
  (sys::%putprop name 'sys::setf-expander expander)
  (sys::%set-fdefinition (list 'setf name) setter)
  name)

(defun sys::%cxr-place (name)
  "CAR/CDR places: (c<op><inner>r x) is set through (car|cdr (c<inner>r x))."
  (let* ((s (symbol-name name))
         (updater (if (eql (elt s 1) #\A) 'sys::%set-car 'sys::%set-cdr))
         (inner (if (= (length s) 3)
                    nil
                    (intern (sys::%seq-concatenate 2 "C" (subseq s 2)) "COMMON-LISP"))))
    (sys::%define-place
     name
     (lambda (args value)
       (list updater (if inner (list inner (car args)) (car args)) value))
     (lambda (value object)
       (funcall updater (if inner (funcall inner object) object) value)))))

(dolist (name '(car cdr caar cadr cdar cddr caaar caadr cadar caddr cdaar cdadr cddar cdddr
                caaaar caaadr caadar caaddr cadaar cadadr caddar cadddr
                cdaaar cdaadr cdadar cdaddr cddaar cddadr cdddar cddddr))
  (sys::%cxr-place name))

(sys::%define-place 'rest
                    (lambda (args value) (list 'sys::%set-cdr (car args) value))
                    (lambda (value object) (sys::%set-cdr object value)))

(let ((n 0))
  (dolist (name '(first second third fourth fifth sixth seventh eighth ninth tenth))
    (let ((k n))
      (sys::%define-place name
                          (lambda (args value) (list 'sys::%set-nth k (car args) value))
                          (lambda (value object) (sys::%set-nth k object value))))
    (setq n (1+ n))))

(sys::%define-place 'nth
                    (lambda (args value) (list 'sys::%set-nth (car args) (car (cdr args)) value))
                    (lambda (value n list) (sys::%set-nth n list value)))

(sys::%define-place 'elt
                    (lambda (args value) (list 'sys::%set-elt (car args) (car (cdr args)) value))
                    (lambda (value sequence index) (sys::%set-elt sequence index value)))

(sys::%define-place 'subseq
                    (lambda (args value)
                      (let ((s (gensym)) (st (gensym)) (en (gensym)) (v (gensym)))
                        `(let* ((,s ,(car args)) (,st ,(car (cdr args))) (,en ,(car (cdr (cdr args)))) (,v ,value))
                           (replace ,s ,v :start1 ,st :end1 ,en)
                           ,v)))
                    (lambda (value sequence start &optional end)
                      (replace sequence value :start1 start :end1 end)
                      value))

;; GETF stores into the place holding the plist: a full expander, so that
;; (push x (getf place key)) evaluates PLACE's subforms once and assigns PLACE.
(define-setf-expander getf (place indicator &optional default &environment env)
  (multiple-value-bind (temps vals stores store-form access) (get-setf-expansion place env)
    (let ((i (gensym)) (d (gensym)) (s (gensym)))
      (values (append temps (list i d)) (append vals (list indicator default)) (list s)
              `(let ((,(car stores) (sys::%putf ,access ,i ,s))) ,store-form ,s)
              `(getf ,access ,i ,d)))))

(defmacro remf (place indicator)
  (let ((p (sys::%place place)) (new (gensym)) (found (gensym)))
    `(let* ,(car p)
       (multiple-value-bind (,new ,found) (sys::%remf ,(car (cdr p)) ,indicator)
         (setf ,(car (cdr p)) ,new)
         ,found))))
