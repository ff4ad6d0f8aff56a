;; Files: writing with with-open-file and the :if-exists choices, reading
;; back by lines, characters and forms, end of file, probe-file,
;; delete-file, load, and file errors.
(defvar *path* "/tmp/mprof-lisp-test-files.txt")
(defvar *missing* "/tmp/mprof-lisp-test-no-such-dir/missing.txt")
(when (probe-file *path*) (delete-file *path*))

(print (with-open-file (out *path* :direction :output :if-exists :supersede)
         (write-line "first line" out)
         (write-string "second " out)
         (write-char #\l out)
         (format out "ine ~d~%" 2)
         (prin1 '(a "b" 3) out)
         (terpri out)
         (print 42 out)
         'written))
(print (not (null (probe-file *path*))))

(with-open-file (in *path*)
  (print (read-line in))
  (print (multiple-value-list (read-line in)))
  (print (read in))
  (print (read in))
  (print (read in nil :eof))
  (print (read-line in nil :eof))
  (print (multiple-value-list (read-line in nil :eof))))

;; Appending, and line counting.
(with-open-file (out *path* :direction :output :if-exists :append)
  (write-string "no newline at the end" out))
(with-open-file (in *path*)
  (let ((lines nil))
    (loop for line = (read-line in nil nil)
          while line do (push line lines))
    (print (length lines))
    (print (first lines))))
(with-open-file (in *path*)
  (loop repeat 4 do (read-line in))
  (print (multiple-value-list (read-line in)))
  (print (multiple-value-list (read-line in nil 'done))))

;; Characters: read-char, peek-char, unread-char.
(with-open-file (out *path* :direction :output :if-exists :supersede)
  (write-string "ab  c" out))
(with-open-file (in *path*)
  (print (read-char in))
  (print (peek-char nil in))
  (print (read-char in))
  (print (peek-char t in))
  (let ((c (read-char in)))
    (unread-char c in)
    (print (read-char in)))
  (print (read-char in nil 'end))
  (print (handler-case (read-char in) (end-of-file () 'end-of-file))))

;; :if-exists and :if-does-not-exist.
(print (handler-case (open *path* :direction :output) (file-error () 'file-error)))
(print (handler-case (open *path* :direction :output :if-exists :error) (file-error () 'file-error)))
(print (open *path* :direction :output :if-exists nil))
(print (open *missing* :if-does-not-exist nil))
(print (handler-case (open *missing*) (file-error () 'file-error)))
(print (handler-case (with-open-file (in *missing*) (read-line in)) (file-error () 'file-error)))
(with-open-file (out *path* :direction :output :if-exists :supersede)
  (write-line "replaced" out))
(with-open-file (in *path*) (print (read-line in)))

;; Streams: open and closed, directions.
(let ((s (open *path*)))
  (print (list (streamp s) (input-stream-p s) (output-stream-p s) (open-stream-p s)))
  (print (close s))
  (print (open-stream-p s))
  (print (handler-case (read-line s) (error () 'error))))

;; LOAD evaluates every form of a file and returns T.
(with-open-file (out *path* :direction :output :if-exists :supersede)
  (format out "(defvar *loaded* 0)~%(defun loaded-square (x) (* x x))~%(setq *loaded* (loaded-square 7))~%(defvar *was-loading* (list (not (null *load-pathname*)) (not (null *load-truename*))))~%"))
(print (load *path*))
(print *loaded*)
(print (loaded-square 3))
(print *was-loading*)
(print (load *missing* :if-does-not-exist nil))
(print (handler-case (load *missing*) (file-error () 'file-error)))

;; delete-file
(print (delete-file *path*))
(print (probe-file *path*))
(print (handler-case (delete-file *path*) (file-error () 'file-error)))
(terpri)
