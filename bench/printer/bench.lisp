;;; Printing throughput: the printing functions and FORMAT over lists,
;;; nested lists, strings, symbols, numbers and structures, to a string
;;; stream (so the terminal does not dominate) and to *standard-output*.

(defstruct bpoint x y)

(defvar *data*
  (list (loop for i below 50 collect i)
        (loop for i below 10 collect (list i (list (* i 2) "str" 'sym) (/ i 7)))
        "a string with \"quotes\" and a \\ backslash"
        (make-bpoint :x 1.5 :y '(a b c))
        (vector 1 2 3 'x "y" #\z)
        (expt 2 100)))

(defun run (n)
  (let ((total 0))
    (dotimes (i n total)
      (dolist (d *data*)
        (incf total (length (prin1-to-string d)))
        (incf total (length (princ-to-string d)))
        (incf total (length (format nil "~a ~s" d d))))
      (let ((s (make-string-output-stream)))
        (dolist (d *data*) (print d s) (write d :stream s))
        (incf total (length (get-output-stream-string s)))))))

(print (run 20000))
(dotimes (i 10000) (prin1 *data*) (terpri))
