;;;; The prelude: hash tables and arrays. Lookup and update are builtins (they never
;;;; cons); what calls Lisp functions is here: MAPHASH and
;;;; WITH-HASH-TABLE-ITERATOR walk a snapshot vector #(k0 v0 k1 v1 ...) made
;;;; by SYS:%HASH-TABLE-SNAPSHOT, so the function may REMHASH or (SETF
;;;; GETHASH) the entry it is given, as CL allows.

(defsetf gethash sys:%puthash)

;;; Array places: the update functions take the new value last, so the
;;; short DEFSETF form fits and no (SETF AREF) function call conses.
(defsetf aref sys:%aset)
(defsetf bit sys:%aset)
(defsetf sbit sys:%aset)
(defsetf svref sys:%svset)
(defsetf row-major-aref sys:%row-major-aset)
(defsetf fill-pointer sys:%set-fill-pointer)

;;; The same updates as setf functions, for #'(setf gethash) and friends.
(defun (setf gethash) (value key hash-table &optional default)
  (declare (ignore default))
  (sys:%puthash key hash-table value))
(defun (setf aref) (value array &rest subscripts)
  (apply #'sys:%aset array (append subscripts (list value))))
(defun (setf svref) (value vector index) (sys:%svset vector index value))
(defun (setf row-major-aref) (value array index) (sys:%row-major-aset array index value))
(defun (setf fill-pointer) (value vector) (sys:%set-fill-pointer vector value))

(defun maphash (function hash-table)
  (let* ((snapshot (sys:%hash-table-snapshot hash-table))
         (n (length snapshot))
         (i 0))
    (tagbody
     next
       (when (< i n)
         (funcall function (svref snapshot i) (svref snapshot (+ i 1)))
         (setq i (+ i 2))
         (go next)))
    nil))

(defmacro with-hash-table-iterator ((name hash-table) &body body)
  (let ((snapshot (gensym "SNAPSHOT")) (i (gensym "I")) (next (gensym "NEXT")))
    `(let ((,snapshot (sys:%hash-table-snapshot ,hash-table)) (,i 0))
       (flet ((,next ()
                (if (< ,i (length ,snapshot))
                    (let ((k (svref ,snapshot ,i)) (v (svref ,snapshot (+ ,i 1))))
                      (setq ,i (+ ,i 2))
                      (values t k v))
                    nil)))
         (macrolet ((,name () '(,next)))
           ,@body)))))
