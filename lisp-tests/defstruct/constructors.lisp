;; DEFSTRUCT options: :constructor (keyword and BOA), :conc-name,
;; :copier, :predicate.
(defstruct (boa (:constructor make-boa (a b &optional (c 3) d &rest r &key (k 9) &aux (e (+ a b)))))
  a b c (d 44) r k e (f 'unset))
(print (make-boa 1 2))
(print (make-boa 1 2 4))
(print (make-boa 1 2 4 5 :k 1))
(print (handler-case (make-boa 1) (program-error () 'program-error)))
;; Several constructors, one of them the default keyword one.
(defstruct (pair (:constructor make-pair)
                 (:constructor pair (left right))
                 (:constructor pair-of-one (left &aux (right left))))
  left right)
(print (list (make-pair :left 1) (pair 1 2) (pair-of-one 'x)))
;; Only a BOA constructor (naming one suppresses make-opt), one with &key and supplied-p variables.
(defstruct (opt
                (:constructor new-opt (&key (a 1 a-p) ((:bee b)) &aux (flag a-p))))
  a (b 'bdefault) flag)
(print (fboundp 'make-opt))
(print (list (new-opt) (new-opt :a 5 :bee 6)))
;; :conc-name nil and a custom prefix; :predicate and :copier names.
(defstruct (vec3 (:conc-name nil) (:predicate is-vec3) (:copier dup-vec3)) vx vy vz)
(let ((v (make-vec3 :vx 1 :vy 2 :vz 3)))
  (print (list (vx v) (vy v) (vz v) (is-vec3 v) (is-vec3 'v)))
  (setf (vz v) 30)
  (print (list v (dup-vec3 v))))
(defstruct (account (:conc-name acct-) (:copier nil) (:predicate nil)) (balance 0) owner)
(let ((a (make-account :owner "ann")))
  (incf (acct-balance a) 50)
  (decf (acct-balance a) 8)
  (print (list a (fboundp 'copy-account) (fboundp 'account-p))))
;; :conc-name given as a string; :print-function and :print-object accepted.
(defstruct (shape (:conc-name "SH-") (:print-function ignored-printer)) kind)
(print (sh-kind (make-shape :kind 'circle)))
;; Keyword arguments in any order, :allow-other-keys.
(defstruct kw a b c)
(print (make-kw :c 3 :a 1))
(print (make-kw :b 2 :zzz 4 :allow-other-keys t))
(print (handler-case (make-kw :zzz 1) (program-error () 'program-error)))
;; Slot defaults do not see the other arguments.
(defvar a 'global-a)
(defstruct see (a 1) (b a))
(print (make-see :a 2))
;; Redefinition with the same slots keeps working.
(defstruct kw a b c)
(print (make-kw :a 'again))
;; Malformed definitions are errors when the DEFSTRUCT is expanded.
(print (handler-case (macroexpand '(defstruct (bad) (1 2))) (error () 'error)))
(print (handler-case (macroexpand '(defstruct "name" a)) (error () 'error)))
(print (handler-case (macroexpand '(defstruct (opts (:frobnicate t)) a)) (error () 'error)))
(print (handler-case (macroexpand '(defstruct (orphan (:include no-such-structure)) a)) (error () 'error)))
