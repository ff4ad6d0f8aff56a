;;; *print-circle* with the pretty printer: labels inside logical blocks, shared tails, vectors, strings.
(setf *print-pretty* t *print-circle* t)
(let ((a (list 1))) (print (list a a)))
(let ((x (list 1 2 3))) (setf (cdr (last x)) x) (print x))
(let ((a (list 'a))) (pprint-fill *standard-output* (list a a)))
(let ((a (list 'a))) (print (list 'defun 'f (list a a) a)))
(let* ((a (list 1)) (l (list* a 2 a))) (pprint-logical-block (*standard-output* l :prefix "<" :suffix ">") (loop (write (pprint-pop)) (pprint-exit-if-list-exhausted) (write-char #\space))))
(terpri)
(let ((v (vector 1 2))) (setf (aref v 0) v) (print v))
(print (write-to-string (let ((a (list 1))) (list a a)) :circle t :pretty t))
(let ((*print-right-margin* 20)) (let ((a (list 'aaaa 'bbbb))) (print (list a 'cccc 'dddd a a a))))
(terpri)
;; Tabs at their column move one colinc (CLHS 22.3.6.1).
(pprint-logical-block (*standard-output* nil) (write-string "abcd") (pprint-tab :line 4 3) (write-string "|"))
(terpri)
;; ~_ outside a logical block on a plain stream does nothing.
(let ((*print-right-margin* 4)) (print (with-output-to-string (s) (format s "A ~_A ~_A ~_A ~_A ~_"))))
(terpri)
