;;;; The prelude: read-time evaluation (#.), and the arrays #nA denotes for the
;;;; Lisp reader of readtable.lisp (the Rust reader reads #nA itself).
;;;;
;;;; The reader reads #.x as (sys::%read-eval x); evaluating is Lisp work, so it happens here
;;;; (see read_time.rs): READ, READ-PRESERVING-WHITESPACE and READ-FROM-STRING
;;;; finish their result when the builtin says it holds such markers, and LOAD
;;;; and the REPL evaluate a top-level form holding them through
;;;; SYS::%READ-TIME-EVAL.

(defvar *read-eval* t)
(defvar sys::*read-time-pending* nil)

(defun sys::%array-from-contents (rank contents)
  "The array #rankA contents denotes: its dimensions are the lengths of the
first element at each of RANK levels of nesting."
  (unless (and (integerp rank) (>= rank 0))
    (error 'sys::simple-reader-error :format-control "bad rank in #~SA"
                                     :format-arguments (list rank)))
  (let ((dims nil) (x contents))
    (dotimes (i rank)
      (unless (typep x 'sequence)
        (error 'sys::simple-reader-error
               :format-control "#~DA needs ~D levels of nested sequences, not ~S"
               :format-arguments (list rank rank contents)))
      (push (length x) dims)
      (setq x (if (plusp (length x)) (elt x 0) nil)))
    (if (zerop rank)
        (make-array nil :initial-element contents)
        (make-array (nreverse dims) :initial-contents contents))))

(defun sys::%read-time-resolve (form)
  "FORM with each (sys::%read-eval x) replaced by the value of x, innermost
first. Conses are visited
once (labelled data may be circular); lists are walked along their spine."
  (let ((seen (make-hash-table :test 'eq)))
    (labels ((marker-p (x)
               (and (consp x) (eq (car x) 'sys::%read-eval)))
             (finish (x)
               ;; #P"x" is (sys::%read-eval (sys::%pathname-literal "x")): always allowed.
               (unless (or *read-eval*
                           (and (consp (second x)) (eq (car (second x)) 'sys::%pathname-literal)))
                 (error 'sys::simple-reader-error
                        :format-control "#.~S is not allowed: *READ-EVAL* is NIL"
                        :format-arguments (list (second x))))
               (eval (walk (second x))))
             (walk (x)
               (cond ((marker-p x) (finish x))
                     ((consp x)
                      (unless (gethash x seen)
                        (do ((c x (cdr c)))
                            ((or (atom c) (gethash c seen)))
                          (setf (gethash c seen) t)
                          (setf (car c) (walk (car c)))
                          (cond ((marker-p (cdr c)) (setf (cdr c) (finish (cdr c))))
                                ((and (not (consp (cdr c))) (cdr c))
                                 (setf (cdr c) (walk (cdr c)))))))
                      x)
                     ((and (simple-vector-p x) (not (gethash x seen)))
                      (setf (gethash x seen) t)
                      (dotimes (i (length x) x)
                        (setf (svref x i) (walk (svref x i)))))
                     (t x))))
      (walk form))))

(defun sys::%read-time-eval (form)
  "A top-level form read with #.: resolve it, then evaluate it."
  (eval (sys::%read-time-resolve form)))

(defun sys::%read-time-finish (value)
  (if sys::*read-time-pending*
      (progn (setq sys::*read-time-pending* nil)
             (sys::%read-time-resolve value))
      value))

;;; READ, READ-PRESERVING-WHITESPACE and READ-FROM-STRING call
;;; SYS::%READ-TIME-FINISH on the builtins' results: see readtable.lisp.
