;;; Printing runs Lisp code: a condition's :report for princ and ~a, and
;;; defstruct's :print-function and :print-object, wherever the object is.

(define-condition my-error (error)
  ((what :initarg :what :reader what))
  (:report (lambda (c s) (format s "my error about ~a" (what c)))))

(define-condition plain-error (error) () (:report "a plain report"))

(let ((e (make-condition 'my-error :what 'cheese)))
  (print (format nil "~a" e))
  (print (princ-to-string e))
  (princ e) (terpri)
  (print (format nil "[~a] [~a]" e (make-condition 'plain-error)))
  (print (format nil "~{<~a>~}" (list e e)))
  (print (handler-case (error 'my-error :what 42)
           (error (c) (format nil "caught: ~a" c)))))

(defstruct (point (:print-function print-point)) x y)
(defun print-point (p stream depth)
  (declare (ignore depth))
  (format stream "<~a,~a>" (point-x p) (point-y p)))

(defstruct (seg (:print-object (lambda (s stream) (format stream "#<SEG ~s-~s>" (seg-a s) (seg-b s))))) a b)

(defvar *p* (make-point :x 1 :y 2))
(print *p*)
(prin1 *p*) (terpri)
(princ *p*) (terpri)
(print (list *p* (list *p*) (vector *p*)))
(print (prin1-to-string *p*))
(print (format nil "~a and ~s" *p* (list *p*)))
(print (make-seg :a *p* :b (make-point :x 3 :y 4)))
(print (write-to-string (make-seg :a "s" :b 'q) :escape nil))

;; An included structure inherits its parent's print function.
(defstruct (point3 (:include point)) z)
(print (make-point3 :x 5 :y 6 :z 7))

;; The print function sees the print variables as WRITE's keywords set them.
(defstruct (esc (:print-function (lambda (o s d) (declare (ignore o d)) (format s "escape=~a" *print-escape*)))))
(print (list (prin1-to-string (make-esc)) (princ-to-string (make-esc)) (write-to-string (make-esc) :escape nil)))

;; A print function that exits non-locally leaves printing in a clean state.
(defstruct (bomb (:print-function (lambda (o s d) (declare (ignore o s d)) (error "boom")))))
(print (handler-case (prin1-to-string (list 1 (make-bomb))) (error (c) (format nil "~a" c))))
(print (list *print-escape* (prin1-to-string *p*)))

;; A circular structure printed through its print function terminates.
(defstruct (node (:print-function (lambda (n s d) (declare (ignore d)) (format s "#<NODE ~a>" (node-name n))))) name next)
(let ((a (make-node :name 'a)))
  (setf (node-next a) a)
  (print a))

;; PRINT-UNREADABLE-OBJECT inside a print method.
(defstruct (box (:print-function (lambda (b s d)
                                   (declare (ignore d))
                                   (print-unreadable-object (b s :type t)
                                     (format s "holding ~s" (box-item b))))))
  item)
(print (make-box :item "jam"))
(print (list (make-box :item (make-box :item 1))))
(print (handler-case (write-to-string (make-box :item 2) :readably t)
         (print-not-readable () :not-readable)))
(print (with-output-to-string (s) (print-unreadable-object (*p* s :type t))))

;; Reports are inherited: a function, and a string.
(define-condition sub-error (my-error) ())
(define-condition sub-plain-error (plain-error) ())
(print (format nil "~a / ~a" (make-condition 'sub-error :what 'tea) (make-condition 'sub-plain-error)))
(print (princ-to-string (make-condition 'sub-plain-error)))
(let ((*print-case* :downcase)) (print (list 'cl:car (find-package "KEYWORD"))))
