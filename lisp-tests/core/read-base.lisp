;;;; *READ-BASE*: integers and ratios read in that radix (an integer before a
;;;; float, as 1E5 in base 16), floats and integers with a decimal point in decimal;
;;;; the loader reads each top-level form with the current value.
(print (let ((*read-base* 16)) (read-from-string "(FF -a/2 1E5 1.5 10. g #x10)")))
(print (let ((*read-base* 2)) (read-from-string "(101 2 1/10)")))
(print (let ((*read-base* 36)) (read-from-string "zz")))
(print (let ((*read-base* 16)) (with-input-from-string (s "ff 10") (list (read s) (read s)))))
(setq *read-base* 8)
(print '(17 10. 1.0))
(setq *read-base* 10.)
(print '(17 10 1.0))
