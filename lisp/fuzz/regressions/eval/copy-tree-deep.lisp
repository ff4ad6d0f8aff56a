(let ((x nil)) (dotimes (i 100000) (setq x (list x))) (list (equal x (copy-tree x)) (subst 1 nil x)))
