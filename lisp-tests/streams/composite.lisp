;;;; Composite streams: synonym, two-way, echo, broadcast and concatenated
;;;; streams, their accessors, types and classes, and the standard streams.

(defvar *target* (make-string-output-stream))

;; Synonym streams follow the variable's current value.
(let ((syn (make-synonym-stream '*target*)))
  (write-string "abc" syn)
  (let ((*target* (make-string-output-stream)))
    (format syn "def~a" 1)
    (print (get-output-stream-string *target*)))
  (print (list (get-output-stream-string *target*) (synonym-stream-symbol syn)
               (type-of syn) (typep syn 'synonym-stream) (input-stream-p syn) (output-stream-p syn)
               (class-name (class-of syn)) (stream-element-type syn)))
  (fresh-line syn)
  (print (list (progn (write-string "x" syn) (fresh-line syn)) (get-output-stream-string *target*))))

;; Two-way streams: input from one, output to the other.
(let* ((in (make-string-input-stream "line one
line two"))
       (out (make-string-output-stream))
       (tw (make-two-way-stream in out)))
  (print (list (read-line tw) (read-char tw) (peek-char nil tw)))
  (format tw "~a~10T|" "col")
  (print (list (get-output-stream-string out) (eq (two-way-stream-input-stream tw) in)
               (eq (two-way-stream-output-stream tw) out) (type-of tw)
               (input-stream-p tw) (output-stream-p tw))))

;; Echo streams: what is read is written to the output stream, once.
(let* ((out (make-string-output-stream))
       (e (make-echo-stream (make-string-input-stream "abc (1 2) rest") out)))
  (print (list (read-char e) (peek-char nil e) (read-char e)))
  (unread-char #\b e)
  (print (list (read-char e) (read e) (read-line e)))
  (print (list (get-output-stream-string out) (type-of e)
               (eq (echo-stream-output-stream e) out))))

;; Broadcast streams: output to every component; none discards it.
(let* ((a (make-string-output-stream)) (b (make-string-output-stream))
       (bs (make-broadcast-stream a b)))
  (write-string "hello" a)
  (format bs "x~10Ty~%")
  (print 42 bs)
  (print (list (get-output-stream-string a) (get-output-stream-string b)
               (length (broadcast-stream-streams bs)) (type-of bs)
               (file-position bs) (output-stream-p bs) (input-stream-p bs)))
  (let ((none (make-broadcast-stream)))
    (format none "nothing")
    (print (list (stream-element-type none) (file-position none) (file-length none)
                 (broadcast-stream-streams none)))))

;; Concatenated streams: each component in turn.
(let ((c (make-concatenated-stream (make-string-input-stream "ab
cd") (make-string-input-stream "") (make-string-input-stream "ef (g")
                                   (make-string-input-stream " h) i"))))
  (print (multiple-value-list (read-line c)))
  (print (list (read-char c) (read c) (read c) (read c)))
  (print (list (read-char c nil :eof) (concatenated-stream-streams c) (type-of c)
               (input-stream-p c) (output-stream-p c))))
(print (read-char (make-concatenated-stream) nil :eof))

;; Nested: a synonym of a two-way stream of a concatenated stream.
(defvar *tw* (make-two-way-stream (make-concatenated-stream (make-string-input-stream "1 ")
                                                            (make-string-input-stream "2"))
                                  (make-broadcast-stream)))
(print (let ((s (make-synonym-stream '*tw*))) (list (read s) (read s) (read s nil :end))))

;; Wrong directions are type errors.
(print (list (handler-case (read-char (make-broadcast-stream)) (type-error () :type-error))
             (handler-case (write-char #\a (make-concatenated-stream)) (type-error () :type-error))
             (handler-case (make-two-way-stream (make-string-output-stream) *standard-output*)
               (type-error () :type-error))
             (handler-case (make-broadcast-stream 3) (type-error () :type-error))
             (handler-case (make-synonym-stream "X") (type-error () :type-error))))

;; The standard streams are SBCL's: synonym streams to the process's streams.
(print (list (type-of *standard-output*) (type-of *standard-input*) (type-of *terminal-io*)
             (type-of *error-output*) (type-of *query-io*) (type-of *debug-io*)
             (type-of *trace-output*) (symbol-name (synonym-stream-symbol *trace-output*))
             (symbol-name (synonym-stream-symbol *terminal-io*))
             (input-stream-p *standard-output*) (output-stream-p *standard-output*)
             (input-stream-p *terminal-io*) (output-stream-p *terminal-io*)
             (stream-element-type *standard-output*)))
(print (mapcar (lambda (c) (subtypep c 'stream))
               '(broadcast-stream concatenated-stream echo-stream file-stream
                 string-stream synonym-stream two-way-stream)))
(print (list (class-name (class-of (make-broadcast-stream)))
             (subtypep (class-of (make-string-output-stream)) (find-class 'string-stream))
             (typep (make-string-input-stream "x") 'string-stream)
             (typep *standard-output* 'file-stream)))
