;; A cons packs its car and cdr into one word each: integers near and past the
;; fixnum range, characters and floats must come back exactly, through SETF,
;; RPLACD and a garbage collection, and stay EQL to what was stored.
(defvar *edge* (list most-positive-fixnum most-negative-fixnum
                     (1+ most-positive-fixnum) (1- most-negative-fixnum)
                     (expt 2 63) (- (expt 2 63)) (1- (expt 2 63)) (- -1 (expt 2 63))
                     (expt 2 100) 0 -1 #\a #\Z 1.5d0))
(print *edge*)
(defvar *copy* (copy-list *edge*))
(setf (car *copy*) (1- (expt 2 62)))
(rplacd (last *copy*) (expt 2 62))
(let ((junk nil)) (dotimes (i 100000) (push (cons (* i (expt 2 61)) i) junk)) (length junk))
#+sbcl (sb-ext:gc :full t)
#-sbcl (mprof-ext:gc)
(print *copy*)
(print (loop for a in (cdr *edge*) for b in (cdr *copy*) always (eql a b)))
(print (eql (cdr (last *copy*)) (expt 2 62)))
(print (let ((s 0)) (dolist (x (butlast (cdr *edge*) 3) s) (setq s (+ s x)))))
(print (reduce #'+ (mapcar #'car (loop for i below 1000 collect (cons (* i (expt 2 61)) i)))))
