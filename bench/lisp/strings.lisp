;;; Strings: building with WITH-OUTPUT-TO-STRING, character access,
;;; comparison and case conversion.
(defun make-word (i)
  (with-output-to-string (s)
    (format s "w~d-~a" i (if (evenp i) "even" "odd"))))

(defun count-char (c str)
  (let ((n 0))
    (dotimes (i (length str) n)
      (when (char= c (char str i)) (incf n)))))

(defun reverse-string (str)
  (let* ((n (length str))
         (r (make-string n)))
    (dotimes (i n r)
      (setf (char r i) (char str (- n i 1))))))

(let ((chars 0) (matches 0))
  (dotimes (i 80000)
    (let* ((w (make-word i))
           (u (string-upcase w))
           (r (reverse-string u)))
      (incf chars (count-char #\E r))
      (when (string= (reverse-string r) u) (incf matches))))
  (print (list chars matches)))
