;; Sequence library timings: each line compares a Rust fast path (standard
;; test, no :key) with the general Lisp path computing the same result,
;; and sorting lists with vectors. Prints ratios (general / fast), which do
;; not depend on the machine's speed as much as absolute times.
(defvar *seed* 1)
(defun next-random ()
  (let ((x (+ (* *seed* 31) 7)))
    (loop (when (< x 100000) (return)) (setq x (- x 100000)))
    (setq *seed* x)))
(defvar *list* (let ((l nil)) (dotimes (i 20000) (push (next-random) l)) l))
(defvar *vector* (coerce *list* 'vector))
(defmacro timed (form)
  `(let ((start (get-internal-real-time)))
     (dotimes (i 5) ,form)
     (+ 1 (- (get-internal-real-time) start))))
(defun report (name fast general)
  (format t "~a: fast ~d us, general ~d us, ratio ~d%~%" name fast general (round-ratio general fast)))
(defun round-ratio (a b) (let ((q 0)) (loop (when (> (* b (+ q 1)) (* 100 a)) (return q)) (incf q 10))))
(report "position (list)" (timed (position -1 *list*)) (timed (position -1 *list* :test (lambda (a b) (eql a b)))))
(report "count (vector)" (timed (count 7 *vector*)) (timed (count 7 *vector* :key #'identity :test (lambda (a b) (eql a b)))))
(report "remove (list)" (timed (remove 7 *list*)) (timed (remove-if (lambda (x) (eql x 7)) *list*)))
(report "member (list)" (timed (member -1 *list*)) (timed (member -1 *list* :test (lambda (a b) (eql a b)))))
(report "remove-duplicates (list, hashed vs n^2 on 300)"
        (timed (remove-duplicates (subseq *list* 0 300)))
        (timed (remove-duplicates (subseq *list* 0 300) :test (lambda (a b) (eql a b)))))
(let ((l (timed (sort (copy-list *list*) #'<))) (v (timed (sort (copy-seq *vector*) #'<))))
  (format t "sort 20000 fixnums x5: list ~d us, vector ~d us, vector/list ~d%~%" l v (round-ratio v l)))
