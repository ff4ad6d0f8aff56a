;;;; The prelude: readtables, and the reader written in Lisp that READ uses
;;;; when the current readtable has reader macros of the program's own.
;;;;
;;;; A readtable holds the program's macro characters (char -> (function .
;;;; non-terminating-p)) and dispatch tables (dispatch char -> sub-char ->
;;;; function). While *READTABLE* has none (the standard syntax), READ,
;;;; READ-PRESERVING-WHITESPACE and READ-FROM-STRING use the Rust reader. With
;;;; some, they read with SYS::%LISP-READ below, which follows CLHS 2.2: it
;;;; calls the program's macro functions (which may call READ on the same
;;;; stream) and reads the standard syntax itself, handing each token (and
;;;; each #\, #:, #x... atom) to the Rust reader as text. The reader runs on
;;;; Lisp frames: data nested deeper than --max-depth ends in
;;;; stack-exhausted, never a crash. LOAD reads each form of a file the same
;;;; way (SYS::%LOAD-READ), so reader macros a file installs apply to the rest
;;;; of it. The readtable case (%CASE, the first slot: the evaluator reads it
;;;; there) tells the Rust reader how to convert the letters of symbol tokens.

(defstruct (readtable (:constructor sys::%make-readtable) (:copier nil) (:predicate readtablep))
  (%case :upcase)
  (macros (make-hash-table))
  (dispatch (make-hash-table)))

(defvar *readtable* (sys::%make-readtable))
(defvar sys::*standard-readtable* (sys::%make-readtable))
(defvar *read-base* 10)
(defvar *read-suppress* nil)
(defvar *read-default-float-format* 'double-float)

(defun sys::%readtable-arg (readtable)
  (cond ((null readtable) sys::*standard-readtable*)
        ((readtablep readtable) readtable)
        (t (error 'type-error :datum readtable :expected-type 'readtable))))

(defun copy-readtable (&optional (from *readtable*) to)
  (let ((from (sys::%readtable-arg from))
        (to (or to (sys::%make-readtable))))
    (setf (readtable-%case to) (readtable-%case from))
    (clrhash (readtable-macros to))
    (maphash (lambda (k v) (setf (gethash k (readtable-macros to)) v)) (readtable-macros from))
    (clrhash (readtable-dispatch to))
    (maphash (lambda (k v)
               (let ((table (make-hash-table)))
                 (maphash (lambda (k2 v2) (setf (gethash k2 table) v2)) v)
                 (setf (gethash k (readtable-dispatch to)) table)))
             (readtable-dispatch from))
    to))

(defun readtable-case (readtable)
  (readtable-%case (sys::%readtable-arg readtable)))

(defun (setf readtable-case) (mode readtable)
  (unless (member mode '(:upcase :downcase :preserve :invert))
    (error 'type-error :datum mode :expected-type '(member :upcase :downcase :preserve :invert)))
  (setf (readtable-%case (sys::%readtable-arg readtable)) mode))

(defun set-macro-character (char function &optional non-terminating-p (readtable *readtable*))
  (setf (gethash char (readtable-macros (sys::%readtable-arg readtable)))
        (cons function non-terminating-p))
  t)

(defun get-macro-character (char &optional (readtable *readtable*))
  (let ((entry (gethash char (readtable-macros (sys::%readtable-arg readtable)))))
    (cond (entry (values (car entry) (cdr entry)))
          ((member char '(#\( #\) #\' #\" #\; #\` #\,))
           (values (sys::%standard-macro-function char) nil))
          ((eql char #\#) (values (sys::%standard-macro-function char) t))
          (t (values nil nil)))))

(defun sys::%standard-macro-function (char)
  "A function reading what the standard macro character CHAR introduces."
  (lambda (stream c)
    (declare (ignore c))
    (multiple-value-bind (object found) (sys::%read-standard-syntax stream char nil)
      (if found object (values)))))

(defun make-dispatch-macro-character (char &optional non-terminating-p (readtable *readtable*))
  (let ((rt (sys::%readtable-arg readtable)))
    (setf (gethash char (readtable-dispatch rt)) (make-hash-table))
    (setf (gethash char (readtable-macros rt)) (cons :dispatch non-terminating-p))
    t))

(defun set-dispatch-macro-character (disp-char sub-char function &optional (readtable *readtable*))
  (let* ((rt (sys::%readtable-arg readtable))
         (table (or (gethash disp-char (readtable-dispatch rt))
                    (if (eql disp-char #\#)
                        (setf (gethash disp-char (readtable-dispatch rt)) (make-hash-table))
                        (error "~S is not a dispatching macro character" disp-char)))))
    (setf (gethash (char-upcase sub-char) table) function)
    t))

(defun get-dispatch-macro-character (disp-char sub-char &optional (readtable *readtable*))
  (let ((table (gethash disp-char (readtable-dispatch (sys::%readtable-arg readtable)))))
    (and table (gethash (char-upcase sub-char) table))))

(defun set-syntax-from-char (to-char from-char &optional (to-readtable *readtable*) from-readtable)
  (let ((to (sys::%readtable-arg to-readtable))
        (from (sys::%readtable-arg from-readtable)))
    (multiple-value-bind (f non-terminating) (get-macro-character from-char from)
      (if f
          (setf (gethash to-char (readtable-macros to)) (cons f non-terminating))
          (remhash to-char (readtable-macros to))))
    t))

(defun sys::%standard-syntax-p (readtable)
  (and (zerop (hash-table-count (readtable-macros readtable)))
       (zerop (hash-table-count (readtable-dispatch readtable)))))

;;; The Lisp reader.

(defun sys::%whitespace-p (c)
  (member c '(#\Space #\Tab #\Newline #\Return #\Page #\Linefeed)))

(defun sys::%terminating-p (c)
  "Does C end a token (whitespace or a terminating macro character)?"
  (or (sys::%whitespace-p c)
      (let ((entry (gethash c (readtable-macros *readtable*))))
        (if entry
            (not (cdr entry))
            (member c '(#\( #\) #\' #\" #\; #\` #\,))))))

(defun sys::%read-token-text (stream first)
  "The text of the token starting with FIRST, escapes kept as written."
  (let ((out (make-string-output-stream)))
    (when first (write-char first out))
    (let ((bar (eql first #\|)))
      (loop
        (let ((c (peek-char nil stream nil nil)))
          (cond ((null c) (return))
                ((and (not bar) (sys::%terminating-p c)) (return))
                ((eql c #\\)
                 (write-char (read-char stream) out)
                 (let ((n (read-char stream nil nil))) (when n (write-char n out))))
                (t (write-char (read-char stream) out)
                   (when (eql c #\|) (setq bar (not bar))))))))
    (get-output-stream-string out)))

(defun sys::%parse-text (text)
  "The object the standard syntax TEXT denotes (a token or a # atom)."
  (if *read-suppress*
      nil
      (values (sys::%read-from-string text t nil))))

(defun sys::%lisp-read (stream eof-error-p eof-value recursive-p &optional preserve-whitespace)
  "READ with the current readtable. Outside a recursive call, one whitespace
character after the object is consumed unless PRESERVE-WHITESPACE."
  (loop
    (multiple-value-bind (object found) (sys::%lisp-read-1 stream eof-error-p eof-value nil)
      (when found
        (unless (or recursive-p preserve-whitespace)
          (let ((next (peek-char nil stream nil nil)))
            (when (and next (sys::%whitespace-p next)) (read-char stream))))
        (return object)))))

(defun sys::%skip-whitespace (stream)
  (loop (let ((c (peek-char nil stream nil nil)))
          (if (and c (sys::%whitespace-p c)) (read-char stream) (return c)))))

(defun sys::%lisp-read-1 (stream eof-error-p eof-value in-list)
  "Read one object: (values object T), or (values nil nil) when a macro read
nothing (a comment). IN-LIST: a closing parenthesis or a lone dot is
returned as the keyword :CLOSE or :DOT."
  (let ((c (sys::%skip-whitespace stream)))
    (when (null c)
      (if eof-error-p
          (error 'end-of-file :stream stream)
          (return-from sys::%lisp-read-1 (values eof-value t))))
    (read-char stream)
    (let ((entry (gethash c (readtable-macros *readtable*))))
      (cond ((and entry (eq (car entry) :dispatch))
             (sys::%read-dispatch stream c))
            (entry
             (let ((values (multiple-value-list (funcall (car entry) stream c))))
               (if values (values (car values) t) (values nil nil))))
            (t (sys::%read-standard-syntax stream c in-list))))))

(defun sys::%read-standard-syntax (stream c in-list)
  "Read what the standard syntax makes of C (just read) and what follows."
  (cond ((eql c #\() (values (sys::%read-list stream) t))
            ((eql c #\))
             (if in-list
                 (values :close t)
                 (error 'sys::simple-reader-error :stream stream
                        :format-control "unmatched close parenthesis" :format-arguments nil)))
            ((eql c #\') (values (list 'quote (sys::%lisp-read stream t nil t)) t))
            ((eql c #\`) (values (list 'sys::backquote (sys::%lisp-read stream t nil t)) t))
            ((eql c #\,)
             (let ((next (peek-char nil stream nil nil)))
               (cond ((member next '(#\@ #\.))
                      (read-char stream)
                      (values (list 'sys::unquote-splicing (sys::%lisp-read stream t nil t)) t))
                     (t (values (list 'sys::unquote (sys::%lisp-read stream t nil t)) t)))))
            ((eql c #\;)
             (loop (let ((d (read-char stream nil nil)))
                     (when (or (null d) (eql d #\Newline)) (return))))
             (values nil nil))
            ((eql c #\") (unread-char c stream)
             (values (sys::%parse-text (sys::%read-string-text stream)) t))
            ((eql c #\#) (sys::%read-dispatch stream c))
            (t (let ((text (sys::%read-token-text stream c)))
                 (if (and in-list (string= text "."))
                     (values :dot t)
                     (values (sys::%parse-text text) t))))))

(defun sys::%read-string-text (stream)
  (let ((out (make-string-output-stream)))
    (write-char (read-char stream) out)
    (loop (let ((d (read-char stream)))
            (write-char d out)
            (cond ((eql d #\\) (write-char (read-char stream) out))
                  ((eql d #\") (return)))))
    (get-output-stream-string out)))

(defun sys::%read-list (stream)
  (let ((items nil))
    (loop
      (multiple-value-bind (x found) (sys::%lisp-read-1 stream t nil t)
        (cond ((not found))
              ((eq x :close) (return (nreverse items)))
              ((eq x :dot)
               (unless items
                 (error 'sys::simple-reader-error :stream stream
                        :format-control "nothing before the dot in a list" :format-arguments nil))
               (let ((tail (sys::%lisp-read stream t nil t)))
                 (unless (eq (sys::%read-close stream) :close)
                   (error 'sys::simple-reader-error :stream stream
                          :format-control "more than one object follows the dot" :format-arguments nil))
                 (let ((l (nreverse items)))
                   (setf (cdr (last l)) tail)
                   (return l))))
              (t (push x items)))))))

(defun sys::%read-close (stream)
  (loop (multiple-value-bind (x found) (sys::%lisp-read-1 stream t nil t)
          (when found (return x)))))

(defun sys::%read-dispatch (stream disp-char)
  (let ((digits nil) (sub nil))
    (loop (setq sub (read-char stream))
          (if (digit-char-p sub) (push sub digits) (return)))
    (let* ((arg (and digits (parse-integer (coerce (reverse digits) 'string))))
           (table (gethash disp-char (readtable-dispatch *readtable*)))
           (f (and table (gethash (char-upcase sub) table))))
      (cond (f (let ((values (multiple-value-list (funcall f stream sub arg))))
                 (if values (values (car values) t) (values nil nil))))
            ((not (eql disp-char #\#))
             (error 'sys::simple-reader-error :stream stream
                    :format-control "no dispatch function for ~C~C" :format-arguments (list disp-char sub)))
            (t (sys::%read-standard-dispatch stream sub arg))))))

(defun sys::%read-standard-dispatch (stream sub arg)
  (case (char-upcase sub)
    (#\' (values (list 'function (sys::%lisp-read stream t nil t)) t))
    (#\( (unread-char sub stream) (values (coerce (sys::%lisp-read stream t nil t) 'vector) t))
    (#\| (let ((depth 1) (prev nil))
           (loop (let ((d (read-char stream)))
                   (cond ((and (eql prev #\|) (eql d #\#)) (decf depth) (setq d nil))
                         ((and (eql prev #\#) (eql d #\|)) (incf depth) (setq d nil)))
                   (when (zerop depth) (return))
                   (setq prev d))))
         (values nil nil))
    (#\. (let ((form (sys::%lisp-read stream t nil t)))
           (unless *read-eval*
             (error 'sys::simple-reader-error :stream stream
                    :format-control "#.~S is not allowed: *READ-EVAL* is NIL" :format-arguments (list form)))
           (values (eval form) t)))
    ((#\+ #\-)
     (let* ((feature (let ((*package* (find-package "KEYWORD"))) (sys::%lisp-read stream t nil t)))
            (present (sys::%feature-present-p feature)))
       (if (eq present (char= sub #\+))
           (values (sys::%lisp-read stream t nil t) t)
           (progn (let ((*read-suppress* t)) (sys::%lisp-read stream t nil t)) (values nil nil)))))
    (#\A (values (sys::%array-from-contents arg (sys::%lisp-read stream t nil t)) t))
    (#\P (values (pathname (sys::%lisp-read stream t nil t)) t))
    (t ;; An atom (#\x, #:foo, #x1F, #b101, #o7, #3r12...): the Rust reader reads its text.
     (let ((text (concatenate 'string "#" (if arg (princ-to-string arg) "") (string sub)
                              (if (eql sub #\\)
                                  (let ((first (read-char stream)))
                                    (sys::%read-token-text stream first))
                                  (sys::%read-token-text stream nil)))))
       (values (sys::%parse-text text) t)))))

(defun sys::%feature-present-p (feature)
  (cond ((symbolp feature) (and (member feature *features* :test #'string=) t))
        ((and (consp feature) (string= (car feature) "AND"))
         (every #'sys::%feature-present-p (cdr feature)))
        ((and (consp feature) (string= (car feature) "OR"))
         (and (some #'sys::%feature-present-p (cdr feature)) t))
        ((and (consp feature) (string= (car feature) "NOT"))
         (not (sys::%feature-present-p (second feature))))
        (t (error 'sys::simple-reader-error :format-control "bad feature expression ~S"
                                            :format-arguments (list feature)))))

;;; READ and friends: the Rust reader for the standard syntax, this one else.

(defun read (&optional stream (eof-error-p t) eof-value recursive-p)
  (if (sys::%standard-syntax-p *readtable*)
      (sys::%read-time-finish (sys::%read stream eof-error-p eof-value recursive-p))
      (sys::%lisp-read (sys::%input-stream stream) eof-error-p eof-value recursive-p)))

(defun read-preserving-whitespace (&optional stream (eof-error-p t) eof-value recursive-p)
  (if (sys::%standard-syntax-p *readtable*)
      (sys::%read-time-finish (sys::%read-preserving-whitespace stream eof-error-p eof-value recursive-p))
      (sys::%lisp-read (sys::%input-stream stream) eof-error-p eof-value recursive-p t)))

(defun read-from-string (string &optional (eof-error-p t) eof-value &key (start 0) end preserve-whitespace)
  (if (sys::%standard-syntax-p *readtable*)
      (multiple-value-bind (value index)
          (sys::%read-from-string string eof-error-p eof-value :start start :end end
                                  :preserve-whitespace preserve-whitespace)
        (values (sys::%read-time-finish value) index))
      (let ((s (make-string-input-stream string start end)))
        (values (sys::%lisp-read s eof-error-p eof-value nil preserve-whitespace)
                (+ start (file-position s))))))

(defun sys::%input-stream (designator)
  (cond ((null designator) *standard-input*)
        ((eq designator t) *terminal-io*)
        (t designator)))

(defmacro with-standard-io-syntax (&body body)
  "Run BODY with the reader and printer variables at their standard values."
  `(let ((*package* (find-package "COMMON-LISP-USER"))
         (*print-array* t) (*print-base* 10) (*print-case* :upcase) (*print-circle* nil)
         (*print-escape* t) (*print-gensym* t) (*print-length* nil) (*print-level* nil)
         (*print-lines* nil) (*print-radix* nil) (*print-readably* t)
         (*print-right-margin* nil)
         (*read-base* 10) (*read-default-float-format* 'single-float) (*read-eval* t)
         (*read-suppress* nil) (*readtable* sys::*standard-readtable*))
     ,@body))

(defun sys::%load-read (text offset)
  "LOAD's next form of TEXT from OFFSET when *READTABLE* has macro characters of
the program's: (form end-offset), or NIL at the end of the text."
  (let* ((s (make-string-input-stream text offset))
         (form (sys::%lisp-read s nil s nil)))
    (if (eq form s) nil (list form (+ offset (file-position s))))))
