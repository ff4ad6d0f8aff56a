;;;; Gray streams: a character output stream of the program's own, with and
;;;; without column tracking, through every CL output function, FORMAT's ~T and
;;;; ~&, the printer, and *STANDARD-OUTPUT* and *TERMINAL-IO* bound to it.
;;;; (CL-USER uses the Gray package, as SBCL's uses SB-GRAY.)

;; Collects what is written, upper-cased, and knows its column.
(defclass upcase-stream (fundamental-character-output-stream)
  ((text :initform (make-string-output-stream) :reader text)
   (column :initform 0 :accessor column)))

(defmethod stream-write-char ((s upcase-stream) char)
  (write-char (char-upcase char) (text s))
  (setf (column s) (if (char= char #\Newline) 0 (1+ (column s))))
  char)

(defmethod stream-line-column ((s upcase-stream)) (column s))

(defun contents (s) (get-output-stream-string (text s)))

(let ((s (make-instance 'upcase-stream)))
  (write-char #\a s)
  (write-string "bcdef" s :start 1 :end 3)
  (write-line "gh" s)
  (terpri s)
  (print (list (fresh-line s) (progn (write-string "x" s) (fresh-line s))))
  (format s "name~10Tvalue~%~a~10T~s~%" "pi" 3)
  (format s "~&~a~&~a" 1 2)
  (prin1 "quoted" s)
  (princ " plain " s)
  (print 'sym s)
  (write '(1 2) :stream s :base 2)
  (pprint '(a b) s)
  (print (contents s)))

;; No column: FORMAT's ~T writes two spaces and ~& a newline, as SBCL's.
(defclass plain-stream (fundamental-character-output-stream)
  ((text :initform (make-string-output-stream) :reader text)))
(defmethod stream-write-char ((s plain-stream) char)
  (write-char char (text s)))

(let ((s (make-instance 'plain-stream)))
  (format s "a~&b~5Tc~%~5Td")
  (fresh-line s)
  (write-string "e" s)
  (print (list (stream-line-column s) (stream-start-line-p s)))
  (print (contents s)))

;; The standard output and terminal variables bound to a Gray stream.
(let ((s (make-instance 'upcase-stream)))
  (let ((*standard-output* s))
    (print 1)
    (format t " two ~a" 3)
    (write-string " four"))
  (let ((*terminal-io* s))
    (princ " five" t)
    (format *terminal-io* "~%six"))
  (print (contents s)))

;; Returned values, and the stream predicates.
(let ((s (make-instance 'upcase-stream)))
  (print (list (write-char #\z s) (write-string "ab" s) (terpri s) (format s "x")
               (streamp s) (typep s 'stream) (output-stream-p s) (input-stream-p s)
               (open-stream-p s) (interactive-stream-p s) (stream-element-type s)))
  (print (list (close s) (open-stream-p s))))
