;;; FORMAT of a circular structure whose type has a print function (PAIP's
;;; waltz.lisp: vertexes list their neighbours, which list them back).
(defstruct (v (:print-function pv)) name (neighbors nil))
(defun pv (v stream depth) (declare (ignore depth)) (format stream "~a" (v-name v)) v)
(defvar *a* (make-v :name 'a))
(defvar *b* (make-v :name 'b :neighbors (list *a*)))
(setf (v-neighbors *a*) (list *b*))
(format t "~a~%" *a*)
(print :ok)
(format t "~a and ~s~%" *b* (list *a* *b*))
