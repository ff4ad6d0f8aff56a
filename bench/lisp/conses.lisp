;;; List building and walking: cons-heavy code with short-lived garbage.
(defun make-range (n)
  (let ((acc nil))
    (dotimes (i n) (push i acc))
    (nreverse acc)))

(defun my-reverse (list)
  (let ((acc nil))
    (dolist (x list acc) (push x acc))))

(defun sum-list (list)
  (let ((s 0))
    (dolist (x list s) (setq s (+ s x)))))

(defun evens (list)
  (cond ((null list) nil)
        ((evenp (car list)) (cons (car list) (evens (cdr list))))
        (t (evens (cdr list)))))

(defun pairs (list)
  (mapcar (lambda (x) (cons x (* x x))) list))

(let ((total 0))
  (dotimes (round 600)
    (let* ((l (make-range 2000))
           (r (my-reverse l))
           (e (evens r))
           (p (pairs e))
           (a (append e l)))
      (setq total (+ total (sum-list a) (length p) (cdr (car p))))))
  (print total))
