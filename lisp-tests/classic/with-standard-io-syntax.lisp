;;; WITH-STANDARD-IO-SYNTAX binds the reader and printer variables to their standard values.
(print (let ((*print-base* 16) (*print-length* 2) (*package* (find-package "KEYWORD")))
         (with-standard-io-syntax (list (prin1-to-string 255) (prin1-to-string '(1 2 3)) (prin1-to-string 'car)
                                        (package-name *package*) (read-from-string "#.(+ 1 2)")))))
