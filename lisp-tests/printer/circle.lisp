;;; *print-circle*: shared and circular structure prints with #n= and #n#,
;;; and reads back with the same sharing.

(defvar *c* (list 1 2 3))
(setf (cdr (last *c*)) *c*)
(let ((*print-circle* t)) (print *c*))
(let ((*print-circle* nil) (*print-length* 7)) (print *c*))
(print (write-to-string *c* :circle t))

(defvar *shared* (list 'a 'b))
(let ((*print-circle* t))
  (print (list *shared* *shared*))
  (print (list *shared* (cdr *shared*)))
  (print (vector *shared* *shared*))
  (print (list 1 2 3)))
(let ((*print-circle* nil)) (print (list *shared* *shared*)))

(defvar *self* (list nil 'x))
(setf (car *self*) *self*)
(let ((*print-circle* t)) (print *self*))

(defvar *v* (vector 1 2 nil))
(setf (aref *v* 2) *v*)
(let ((*print-circle* t)) (print *v*))

;; A circular list with *print-level* and *print-length* too.
(let ((*print-circle* t) (*print-length* 2)) (print *c*))
(let ((*print-circle* t) (*print-level* 1)) (print (list *shared* (list *shared*))))

;; Uninterned symbols are labelled when printed with #:.
(let ((g (make-symbol "G")) (*print-circle* t)) (print (list g g)))

;; Reading #n= and #n# back.
(let* ((x (read-from-string "#1=(a b . #1#)")))
  (print (eq x (cddr x)))
  (let ((*print-circle* t)) (print x)))
(let ((y (read-from-string "(#1=(p q) #1# #2=#(1 #2#))")))
  (print (eq (first y) (second y)))
  (print (eq (third y) (aref (third y) 1)))
  (let ((*print-circle* t)) (print y)))
(let ((z (read-from-string "#1=(#1# . #1#)")))
  (print (and (eq z (car z)) (eq z (cdr z)))))
(print (let ((*print-circle* t)) (write-to-string (read-from-string (write-to-string *c* :circle t)) :circle t)))
(print (length (read-from-string "(#1=x #1# #1#)")))
