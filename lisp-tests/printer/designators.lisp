;;; Stream designators: FORMAT T writes to the current *standard-output*,
;;; NIL means *standard-output* for the printing functions.

(print (with-output-to-string (*standard-output*) (format t "x")))
(print (with-output-to-string (*standard-output*) (format t "~a-~a" 1 2) (princ "p" nil) (prin1 'q nil) (write 'w)))
(print (with-output-to-string (*standard-output*) (print 1) (terpri) (fresh-line) (write-string "ws" nil)))
(print (with-output-to-string (s) (let ((*standard-output* s)) (format t "~&in s~%"))))
(format t "~&back to the real output~%")
