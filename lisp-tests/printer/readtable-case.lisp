;; The readtable case: how READ converts the letters of symbol tokens, and how
;; symbols print so that they read back, under each of the four cases and
;; each *print-case*.
(defun show-reads (mode)
  (let ((*readtable* (copy-readtable nil)))
    (setf (readtable-case *readtable*) mode)
    (format t "~s:" (readtable-case *readtable*))
    (dolist (text '("hello" "HELLO" "Hello" "|Mixed|case" "a\\Bc" ":key" "#:gen"))
      (format t " ~a" (symbol-name (read-from-string text))))
    (terpri)))
(mapc #'show-reads '(:upcase :downcase :preserve :invert))

(defun show-prints (mode)
  (let ((*readtable* (copy-readtable nil))
        (names (list (intern "ABC") (intern "abc") (intern "Abc") (intern "A b") :kw)))
    (setf (readtable-case *readtable*) mode)
    (dolist (print-case '(:upcase :downcase :capitalize))
      (let ((*print-case* print-case))
        (format t "~(~a~) ~(~a~):~{ ~s~}~{ ~a~}~%" mode print-case names names)))))
(mapc #'show-prints '(:upcase :downcase :preserve :invert))

;; What is printed reads back as the same symbol under the same readtable.
(dolist (mode '(:upcase :downcase :preserve :invert))
  (let ((*readtable* (copy-readtable nil)))
    (setf (readtable-case *readtable*) mode)
    (print (every (lambda (name)
                    (let ((s (intern name)))
                      (eq s (read-from-string (prin1-to-string s)))))
                  '("ABC" "abc" "Abc" "A b" "12" "a|b")))))
(terpri)
(print (handler-case (setf (readtable-case (copy-readtable nil)) :sideways)
         (type-error (e) (list :type-error (type-error-datum e)))))
(terpri)
