;;;; The prelude: hash tables and arrays. Lookup and update are builtins (they
;;;; never cons); what calls Lisp functions is here (MAPHASH and
;;;; WITH-HASH-TABLE-ITERATOR), and the SETF places of both.

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

;;; Both walk the table by position with SYS:%HASH-TABLE-NEXT, which skips
;;; nothing when the function removes the entry it was given.
(defun maphash (function hash-table)
  (let ((position -1) (key nil))
    (tagbody
     next
       (multiple-value-bind (p k v) (sys:%hash-table-next hash-table position key)
         (when p
           (setq position p key k)
           (funcall function k v)
           (go next))))
    nil))

(defmacro with-hash-table-iterator ((name hash-table) &body body)
  (let ((table (gensym "TABLE")) (position (gensym "POSITION")) (key (gensym "KEY")) (next (gensym "NEXT")))
    `(let ((,table ,hash-table) (,position -1) (,key nil))
       (flet ((,next ()
                (multiple-value-bind (p k v) (sys:%hash-table-next ,table ,position ,key)
                  (if p
                      (progn (setq ,position p ,key k) (values t k v))
                      nil))))
         (macrolet ((,name () '(,next)))
           ,@body)))))

;;; Array limits: the rank SBCL allows, and the element count MAKE-ARRAY
;;; accepts (arrays.rs's MAX_TOTAL_SIZE, a guard against allocation failure).
(defconstant array-rank-limit 129)
(defconstant array-dimension-limit 134217728)
(defconstant array-total-size-limit 134217728)
