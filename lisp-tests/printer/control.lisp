;;; The print control variables, through every printing function and
;;; through WRITE's keywords.

(defvar *l* '(1 (2 (3 (4 (5)))) 6 7 8 9 10))

(let ((*print-length* 3)) (print *l*) (prin1 *l*) (terpri) (princ *l*) (terpri))
(let ((*print-level* 2)) (print *l*) (print (format nil "~a ~s" *l* *l*)))
(let ((*print-level* 2) (*print-length* 2)) (print *l*) (print (vector 1 (vector 2 (vector 3)) 4 5)))
(print (write-to-string *l* :length 4 :level 3))
(write *l* :length 1) (terpri)
(let ((*print-length* 0)) (print '(a b)) (print #(a b)))
(let ((*print-level* 0)) (print '(a b)) (print 'atom))

;; *print-base* and *print-radix*
(let ((*print-base* 16)) (print 255) (print (list 10 11 -255 (expt 2 70))) (print 1/3))
(let ((*print-base* 2) (*print-radix* t)) (print 5) (print 1/2))
(let ((*print-base* 8) (*print-radix* t)) (print 64))
(let ((*print-radix* t)) (print 10) (print 2/3))
(print (write-to-string 255 :base 36 :radix t))
(print (format nil "~a ~s" 255 255))
(let ((*print-base* 16)) (print (format nil "~a ~d" 255 255)))

;; *print-case*
(dolist (c '(:upcase :downcase :capitalize))
  (let ((*print-case* c))
    (print '(foo-bar baz2quux :key |MiXed| |lower|))
    (princ '(foo-bar baz2quux :key))
    (terpri)))
(print (write-to-string 'hello-world :case :capitalize))

;; *print-escape* and *print-readably*
(let ((*print-escape* nil)) (write "a string") (write #\x) (write 'sym) (terpri))
(write "a \"quoted\" string" :escape t) (terpri)
(let ((*print-readably* t)) (print "x") (print '(a "b" 1.5 3/4)))
(print (handler-case (write-to-string #'car :readably t)
         (print-not-readable (c) (list :not-readable (functionp (print-not-readable-object c))))))
(print (handler-case (let ((*print-readably* t)) (prin1-to-string (list 1 #'car)))
         (error (c) (type-of c))))
(print (handler-case (let ((*print-readably* t)) (princ-to-string (list 1 "two")))
         (error (c) (type-of c))))

;; *print-gensym* and *print-array*
(let ((g (make-symbol "G")))
  (print g)
  (let ((*print-gensym* nil)) (print g) (print (list g g))))
(let ((*print-array* nil)) (print "strings print anyway"))
(print (write-to-string #(1 2) :array t))

;; *print-lines* and *print-right-margin* only shape pretty printing, which is off.
(let ((*print-lines* 1) (*print-right-margin* 10)) (print '(a long list of many symbols that goes on)))
(print (write-to-string '(a b c) :lines 1 :right-margin 5 :pretty nil))
