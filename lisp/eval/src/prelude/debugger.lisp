;;;; The interactive debugger, entered from ERROR when no handler took the
;;;; condition and SYS::*INTERACTIVE-DEBUGGER* is true (the REPL sets it when
;;;; it reads from a terminal). It runs where the error happened, nothing
;;;; unwound: it lists the active restarts, chosen by number, and a backtrace
;;;; whose frames show their arguments, as SBCL's debugger does; any other
;;;; input is a form evaluated there. Choosing ABORT, or the end of input,
;;;; returns to the top level through SYS::DEBUGGER-ABORT, a condition the
;;;; REPL does not report again.

(define-condition sys::debugger-abort (condition) ()
  (:report "Returned to the top level from the debugger."))

(defun sys::%debugger-abort ()
  (sys:%unhandled-condition (make-condition 'sys::debugger-abort)))

(defun sys::%restart-report (restart)
  (let ((report (car (cdr (cdr (cdr restart))))))
    (cond ((stringp report) report)
          ((functionp report) (with-output-to-string (s) (funcall report s)))
          (t (string (restart-name restart))))))

(defun sys::%print-frames (frames limit)
  (let ((*print-length* 6) (*print-level* 3) (*print-circle* t) (i 0))
    (format t "~&Backtrace:~%")
    (dolist (f frames)
      (when (and limit (>= i limit))
        (format t "  ... ~D more (BT shows them all)~%" (- (length frames) i))
        (return))
      (format t "  ~D: ~S~%" i f)
      (setq i (+ i 1)))))

(defun sys::%debugger-read-value (restart)
  (format t "~&Enter a form to be evaluated for ~A: " (restart-name restart))
  (force-output)
  (let ((form (read *standard-input* nil nil)))
    (list (eval form))))

(defun sys::%debugger-frames ()
  ;; SYS::%BACKTRACE leaves out ERROR's and SIGNAL's frames; the debugger's own
  ;; and CERROR's are not the program's either.
  (let ((frames (sys::%backtrace)))
    (loop while (and frames
                     (member (car (car frames))
                             '(sys::%debugger-frames sys::%interactive-debugger cerror)))
          do (setq frames (cdr frames)))
    frames))

(defun sys::%interactive-debugger (condition)
  (let* ((sys::*interactive-debugger* nil)
         (frames (sys::%debugger-frames))
         (restarts (compute-restarts condition))
         (abort-index (length restarts)))
    (format t "~&~%debugger invoked on a ~S:~%  ~A~%~%" (type-of condition) condition)
    (format t "Type a restart number to choose it, BT for the whole backtrace, or a form to evaluate here.~%~%")
    (format t "restarts (invokable by number):~%")
    (let ((i 0))
      (dolist (r restarts)
        (format t "  ~D: [~A] ~A~%" i (restart-name r) (sys::%restart-report r))
        (setq i (+ i 1))))
    (format t "  ~D: [ABORT] Exit debugger, returning to top level.~%~%" abort-index)
    (sys::%print-frames frames 10)
    (loop
      (format t "~&0] ")
      (force-output)
      (let ((input (handler-case (read *standard-input* nil :eof)
                     (error (e) (format t "~&;; ~A~%" e) :unreadable))))
        (cond ((eq input :eof) (terpri) (sys::%debugger-abort))
              ((eq input :unreadable))
              ((and (integerp input) (<= 0 input) (< input abort-index))
               (let ((r (nth input restarts)))
                 (apply #'invoke-restart r
                        (if (member (restart-name r) '(use-value store-value))
                            (sys::%debugger-read-value r)
                            nil))))
              ((eql input abort-index) (sys::%debugger-abort))
              ((and (symbolp input) (member (symbol-name input) '("BT" "BACKTRACE") :test #'string=))
               (sys::%print-frames frames nil))
              ((and (symbolp input) (member (symbol-name input) '("ABORT" "Q" "QUIT" "TOP") :test #'string=))
               (sys::%debugger-abort))
              (t (handler-case (format t "~{~S~%~}" (multiple-value-list (eval input)))
                   (error (e) (format t "~&;; ~A~%" e)))))))))
