;;; T and NIL as stream designators follow the current dynamic bindings:
;;; FORMAT's T is *standard-output*, a stream argument T is *terminal-io*.
(print (with-output-to-string (*standard-output*) (format t "x")))
(print (with-output-to-string (*standard-output*) (princ "a" nil) (write-string "b" nil) (terpri nil)))
(print (with-output-to-string (*terminal-io*) (princ "y" t) (write-char #\z t)))
(print (with-output-to-string (*standard-output*) (print 1) (prin1 2 nil) (fresh-line)))
(print (list (streamp *query-io*) (streamp *debug-io*) (streamp *trace-output*)
             (output-stream-p *terminal-io*) (input-stream-p *terminal-io*)
             (output-stream-p *error-output*)))
(print (with-input-from-string (*standard-input* "hello there") (list (read) (read nil))))
