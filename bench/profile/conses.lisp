;; Cons-heavy: build, reverse, copy and sum lists.
(defun build (n) (let ((l nil)) (dotimes (i n) (push i l)) l))
(defun sum-list (l) (let ((s 0)) (dolist (x l) (setq s (+ s x))) s))
(defun run ()
  (let ((total 0))
    (dotimes (k 900)
      (setq total (+ total (sum-list (reverse (build 10000))))))
    total))
(print (run))
