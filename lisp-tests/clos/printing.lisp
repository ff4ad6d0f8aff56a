;;; PRINT-OBJECT for instances, structures and conditions, and
;;; PRINT-UNREADABLE-OBJECT.

(defclass point () ((x :initarg :x :reader px) (y :initarg :y :reader py)))
(defmethod print-object ((p point) stream)
  (format stream "#<POINT ~a,~a>" (px p) (py p)))
(defclass point3 (point) ((z :initarg :z :reader pz)))
(print (make-instance 'point :x 1 :y 2))
(print (list (make-instance 'point :x 3 :y 4) (make-instance 'point3 :x 5 :y 6 :z 7)))
(format t "~%~a and ~s~%" (make-instance 'point :x 0 :y 0) (make-instance 'point :x 9 :y 9))
(print (prin1-to-string (make-instance 'point :x 1 :y 1)))
(print (princ-to-string (make-instance 'point :x 2 :y 2)))

(defmethod print-object ((p point3) stream)
  (print-unreadable-object (p stream :type t)
    (format stream "~a ~a ~a" (px p) (py p) (pz p))))
(print (make-instance 'point3 :x 1 :y 2 :z 3))

(defclass named () ((name :initarg :name)))
(defmethod print-object ((n named) stream)
  (if *print-escape*
      (call-next-method)
      (format stream "~a" (slot-value n 'name))))
(princ (make-instance 'named :name "plain"))
(terpri)

(defstruct card rank suit)
(print (make-card :rank 1 :suit :hearts))
(defmethod print-object ((c card) stream)
  (format stream "[~a of ~(~a~)]" (card-rank c) (card-suit c)))
(print (make-card :rank 10 :suit :spades))
(print (list (make-card :rank 2 :suit :clubs)))
(defstruct (joker (:include card)))
(print (make-joker :rank 0 :suit :none))

(define-condition game-over (error) ((score :initarg :score :reader score))
  (:report (lambda (c s) (format s "Game over with ~a points" (score c)))))
(define-condition tie (game-over) ())
(handler-case (error 'tie :score 3)
  (error (e) (format t "~a~%" e)))
(defmethod print-object ((c tie) stream)
  (if *print-escape*
      (call-next-method)
      (format stream "A tie at ~a" (score c))))
(handler-case (error 'tie :score 4)
  (error (e) (format t "~a~%" e)))
(handler-case (error 'game-over :score 5)
  (error (e) (format t "~a~%" e)))

;; PRINT-OBJECT on a condition class is used when escaping too; :REPORT when not.
(define-condition oops (error) ((n :initarg :n :reader n)) (:report (lambda (c s) (format s "oops ~a" (n c)))))
(defmethod print-object ((c oops) stream)
  (if *print-escape*
      (format stream "#<OOPS n=~a>" (n c))
      (call-next-method)))
(let ((c (make-condition 'oops :n 3)))
  (print c)
  (format t "~%~a|~s~%" c c)
  (print (prin1-to-string c))
  (print (princ-to-string c)))
(handler-case (error 'oops :n 4) (error (e) (format t "~a~%" e)))
