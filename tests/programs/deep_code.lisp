;;; Code nested far past what a recursive Rust walk survives: a macro making
;;; 4,000 nested lambdas, forms 30,000 deep, and the bounds past which
;;; compilation and FORMAT end in conditions.
;; A macro producing 4,000 nested lambdas.
(defmacro nest (n) (let ((f 'x)) (dotimes (i n) (setq f `(funcall (lambda (x) ,f) (1+ x)))) `(lambda (x) ,f)))
(format t "lambdas ~a~%" (funcall (nest 4000) 0))
;; Forms 30,000 deep compile; 1,000,000 deep end in a storage-condition.
(defun lets (n) (let ((f 'x)) (dotimes (i n) (setq f (list 'let (list (list 'x (list '1+ f))) 'x))) (list 'let '((x 0)) f)))
(format t "eval ~a~%" (eval (lets 30000)))
(format t "too deep ~a~%"
        (handler-case (eval (lets 1000000)) (storage-condition () 'storage-condition)))
(defmacro m (n) (if (= n 0) 0 `(1+ (m ,(- n 1)))))
(format t "nested macros ~a~%" (m 40000))
(format t "format ~a~%"
        (handler-case (format nil (with-output-to-string (s)
                                    (dotimes (i 100000) (write-string "~(" s))
                                    (dotimes (i 100000) (write-string "~)" s))))
          (error () 'format-error)))
