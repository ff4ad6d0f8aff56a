(format nil (let ((s "")) (dotimes (i 3000) (setq s (concatenate 'string "~(" s "~)"))) s))
