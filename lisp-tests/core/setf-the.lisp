;;;; SETF, INCF and PUSH of a (THE type place) store into the place.
(defstruct pt (x 0 :type fixnum))
(let ((p (make-pt)) (v (vector 1 2)) (n 5))
  (incf (the fixnum (pt-x p)))
  (setf (the integer (aref v 0)) 10)
  (setf (the fixnum n) 7)
  (push 3 (the list (cdr (the cons (list 1)))))
  (print (list (pt-x p) v n (incf (the fixnum (pt-x p)) 5))))
