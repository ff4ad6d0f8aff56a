;;;; Gray streams: a character input stream of the program's own, read with
;;;; every CL input function, READ included, and as *STANDARD-INPUT*.

(defclass string-source (fundamental-character-input-stream)
  ((text :initarg :text :reader text)
   (pos :initform 0 :accessor pos)
   (reads :initform 0 :accessor reads)))

(defmethod stream-read-char ((s string-source))
  (incf (reads s))
  (if (< (pos s) (length (text s)))
      (prog1 (char (text s) (pos s)) (incf (pos s)))
      :eof))

(defmethod stream-unread-char ((s string-source) char)
  (declare (ignore char))
  (decf (pos s))
  nil)

(defun source (text) (make-instance 'string-source :text text))

(let ((s (source "ab cd
second line
(+ 1 2) foo \"str\" 42")))
  (print (list (read-char s) (peek-char nil s) (read-char s) (peek-char t s)
               (read-char-no-hang s) (listen s)))
  (unread-char #\c s)
  (print (multiple-value-list (read-line s)))
  (print (multiple-value-list (read-line s)))
  (print (list (read s) (read s) (read s) (read s) (read s nil :done)))
  (print (list (read-char s nil :eof) (read-line s nil :eof) (listen s)
               (handler-case (read-char s) (end-of-file () :end-of-file))))
  (print (list (input-stream-p s) (output-stream-p s) (stream-element-type s))))

(let ((s (source "abcdefgh")) (v (make-string 5 :initial-element #\.)))
  (print (list (read-sequence v s :start 1 :end 4) v (read-sequence v s) v)))

(let ((*standard-input* (source "(a . b) #(1 2) rest of it
next")))
  (print (list (read) (read) (read-line) (read-line) (read-line nil nil :eof))))

(print (read-from-string "(1 2)"))
(print (with-input-from-string (s "x y") (list (read s) (read s))))
(print (read-delimited-list #\] (source "1 2 (3 4) ]")))
