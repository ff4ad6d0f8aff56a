;;;; The mprof paper's producer/consumer example (its Figure 1), in Lisp.
;;;;
;;;; Two producers make widgets; the consumer drops the blue ones and keeps
;;;; the red ones in a global list. A deterministic generator decides the
;;;; colours, so the counts are the same on every run.
;;;;
;;;;   mprof-lisp --profile examples/widgets.lisp
;;;;
;;;; prints, on standard error, the memory kept table (the red widgets, made
;;;; along RUN > PRODUCE > MAKE-RED-WIDGET > MAKE-WIDGET), the allocation bins,
;;;; the direct allocation table and the allocation call graph.

(defstruct widget color id payload)

(defvar *red-widgets* nil "The red widgets the consumer keeps.")
(defvar *seed* 1 "State of the linear congruential generator.")

(defun next-random ()
  (setf *seed* (mod (+ (* *seed* 1103515245) 12345) 2147483648)))

(defun make-red-widget (id)
  (make-widget :color 'red :id id :payload (make-array 8 :initial-element 0)))

(defun make-blue-widget (id)
  (make-widget :color 'blue :id id :payload (make-array 8 :initial-element 0)))

(defun produce (id)
  (if (< (next-random) 1073741824)
      (make-red-widget id)
      (make-blue-widget id)))

(defun consume (widget)
  (when (eq (widget-color widget) 'red)
    (push widget *red-widgets*)))

(defun run (n)
  (dotimes (i n)
    (consume (produce i))))

(run 10000)
(format t "kept ~d red widgets of 10000~%" (length *red-widgets*))
