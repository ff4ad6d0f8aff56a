(defun spin () (loop))
(handler-bind ((storage-condition (lambda (c) (declare (ignore c)) (spin)))) (spin))
(let ((keep nil)) (loop (push (make-list 1000) keep)))
