;;; The standard streams, limits and float constants exist with sensible values.
(print (every #'streamp (list *standard-output* *standard-input* *error-output* *trace-output*
                              *terminal-io* *query-io* *debug-io*)))
(print (every #'output-stream-p (list *standard-output* *error-output* *trace-output*
                                      *terminal-io* *query-io* *debug-io*)))
(print (list (>= call-arguments-limit 50) (>= lambda-parameters-limit 50)
             (>= multiple-values-limit 20)))
(print (every (lambda (k) (member k lambda-list-keywords))
              '(&optional &rest &key &aux &body &whole &environment &allow-other-keys)))
(print (list (/= (+ 1d0 double-float-epsilon) 1d0) (/= (- 1d0 double-float-negative-epsilon) 1d0)
             (plusp single-float-epsilon) (plusp short-float-epsilon) (plusp long-float-epsilon)
             (< most-negative-long-float 0 least-positive-long-float most-positive-long-float)
             (plusp least-positive-normalized-single-float)))
(print (list (integerp internal-time-units-per-second) (plusp internal-time-units-per-second)))
(print (list (boundp '*read-eval*) (boundp '*load-pathname*) (boundp '*modules*)
             (boundp '*default-pathname-defaults*) (boundp '*compile-file-pathname*)))
