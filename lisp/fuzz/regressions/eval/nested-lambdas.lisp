(defmacro nest (n) (let ((f 'x)) (dotimes (i n) (setq f `(lambda (x) ,f))) f))
(nest 4000)
