;;; Symbolic derivative (after Gabriel's DERIV): list construction,
;;; symbol comparison and mapcar over expression trees.
(defun deriv-aux (a) (list '/ (deriv a) a))

(defun deriv (a)
  (cond ((atom a) (if (eq a 'x) 1 0))
        ((eq (car a) '+) (cons '+ (mapcar #'deriv (cdr a))))
        ((eq (car a) '-) (cons '- (mapcar #'deriv (cdr a))))
        ((eq (car a) '*) (list '* a (cons '+ (mapcar #'deriv-aux (cdr a)))))
        ((eq (car a) '/) (list '- (list '/ (deriv (cadr a)) (caddr a))
                               (list '/ (cadr a) (list '* (caddr a) (caddr a) (deriv (caddr a))))))
        (t (error "no derivative for ~s" a))))

(defun count-nodes (tree)
  (if (consp tree) (+ (count-nodes (car tree)) (count-nodes (cdr tree))) 1))

(let ((n 0))
  (dotimes (i 60000)
    (setq n (+ n (count-nodes (deriv '(+ (* 3 x x) (* a x x) (* b x) 5))))))
  (print n))
