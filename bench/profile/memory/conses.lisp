;; Holds 30 million conses at once: the peak is almost all cons cells.
(defvar *l* nil)
(dotimes (i 30000000) (setq *l* (cons i *l*)))
(print (length *l*))
