;;;; Run one chapter of PAIP's examples (examples.lisp, unmodified) example by
;;;; example, printing one line per example so that the driver can compare
;;;; implementations:
;;;;   @@EX <index> <pass|fail|error> <result or condition, PRIN1ed, one line>
;;;; The driver loads this file after binding CL-USER::*PAIP-DIR* and
;;;; CL-USER::*CHAPTER*; it uses the tutor's own FIND-CHAPTER and
;;;; NEARLY-EQUAL, as DO-EXAMPLES does, but goes on after an error.

(defun harness-line (text)
  (substitute #\Space #\Newline (if (> (length text) 200) (subseq text 0 200) text)))

(defun harness-print (object)
  (let ((*print-pretty* nil) (*print-circle* t) (*print-length* 50) (*print-level* 8)
        (*print-case* :upcase) (*package* (find-package "COMMON-LISP-USER")))
    (harness-line (prin1-to-string object))))

;; A fresh random state in every run: results that depend on RANDOM then
;; differ between two SBCL runs, which tells the driver to compare their status only.
(setf *random-state* (make-random-state t))

(format t "@@LOAD ~A~%"
        (handler-case
            (progn (load (concatenate 'string *paip-dir* "auxfns.lisp"))
                   (funcall (intern "REQUIRES") "examples")
                   "ok")
          (serious-condition (c) (harness-line (format nil "~A" c)))))
(finish-output)

(let ((chapter (funcall (intern "FIND-CHAPTER") *chapter*))
      (index 0))
  (dolist (example (and chapter (funcall (intern "CHAPTER-EXAMPLES") chapter)))
    (when (and (consp example) (not (eq (car example) :section)))
      (let* ((exp (copy-tree (first example)))
             (expected (getf (rest example) '=> :anything))
             (input (getf (rest example) :input))
             (output (make-string-output-stream)))
        (multiple-value-bind (result condition)
            (handler-case
                (let ((*standard-output* output) (*trace-output* output))
                  (values (if input
                              (with-input-from-string (*standard-input* input) (eval exp))
                              (eval exp))
                          nil))
              (serious-condition (c) (values nil c)))
          (format t "@@EX ~D ~A ~A~%" index
                  (cond (condition "error")
                        ((or (eq expected :anything)
                             (funcall (intern "NEARLY-EQUAL") result expected))
                         "pass")
                        (t "fail"))
                  (if condition
                      (harness-line (format nil "~A: ~A" (type-of condition)
                                            (handler-case (princ-to-string condition)
                                              (error () "(unprintable)"))))
                      (harness-print result)))
          (finish-output)))
      (incf index))))
(format t "@@END~%")
