(let ((f 'x)) (dotimes (i 200000) (setq f (list 'car f))) (eval (list 'let '((x nil)) f)))
