;;;; READ-SEQUENCE and WRITE-SEQUENCE on character streams, and WRITE-STRING and
;;;; WRITE-LINE with :START and :END.
(print (let ((v (make-string 5 :initial-element #\-)))
         (with-input-from-string (s "abc")
           (list (read-sequence v s :start 1) v))))
(print (let ((v (make-list 3)))
         (with-input-from-string (s "xyzw") (list (read-sequence v s) v))))
(print (with-output-to-string (s) (write-sequence "hello" s :start 1 :end 4) (write-sequence '(#\! #\?) s)))
(print (with-output-to-string (s) (print (eq (write-sequence #(#\a #\b) s) 'x) s)))
(print (handler-case (with-output-to-string (s) (write-sequence "abc" s :start 5)) (error () :error)))
(print (with-output-to-string (s) (write-string "abcdef" s :start 2) (write-string "abcdef" s :end 2) (write-line "abcdef" s :start 1 :end 3)))
(print (handler-case (write-string "abc" *standard-output* :end 9) (type-error () :type-error)))
