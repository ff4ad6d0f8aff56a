;;;; The prelude: pathnames (CLHS 19), as SBCL has them on Unix, and the
;;;; file-system functions over them.
;;;;
;;;; A pathname is a structure of the built-in type PATHNAME (LOGICAL-PATHNAME
;;;; includes it): host, device, directory, name, type, version, and its native
;;;; namestring, computed once when it is made, which builtins taking a file
;;;; read (runtime/pathnames.rs says why a structure). #P"x" reads as
;;;; (sys::%read-eval (sys::%pathname-literal "x")); the printer calls
;;;; SYS::%PRINT-PATHNAME; EQUAL and EQUALP compare components (equal.rs).
;;;;
;;;; Invariants: pathnames are immutable (read-only slots; no setter is
;;;; exported). A physical pathname's host is :UNIX and its device NIL; a
;;;; logical one's host is its upper-case host name and its device
;;;; :UNSPECIFIC. A directory is NIL or (:ABSOLUTE|:RELATIVE . parts), the
;;;; parts strings, :WILD, :WILD-INFERIORS, :UP or :BACK (and :HOME first in
;;;; an absolute physical one, for ~/). A component string holding * or ? is
;;;; a wildcard pattern (so a literal * cannot be named). Functions that take
;;;; a file merge it with *DEFAULT-PATHNAME-DEFAULTS* and translate logical
;;;; pathnames first (SYS::%PHYSICAL), then hand the native namestring to a
;;;; builtin of builtins/directory.rs.

;; #P"x" reads as (mprof-system:%read-eval (mprof-system:%pathname-literal "x")).
(export (intern "%PATHNAME-LITERAL" "MPROF-SYSTEM") "MPROF-SYSTEM")

(defstruct (pathname (:constructor sys::%make-pathname-struct
                         (host device directory name type version %native))
                     (:conc-name sys::%pn-)
                     (:predicate pathnamep)
                     (:copier nil)
                     (:print-object sys::%print-pathname))
  (host nil :read-only t)
  (device nil :read-only t)
  (directory nil :read-only t)
  (name nil :read-only t)
  (type nil :read-only t)
  (version nil :read-only t)
  (%native nil :read-only t))

(defstruct (logical-pathname (:include pathname)
                             (:constructor sys::%make-logical-pathname-struct
                                 (host device directory name type version %native))
                             (:conc-name sys::%lpn-)
                             (:predicate nil)
                             (:copier nil)
                             (:print-object sys::%print-pathname)))

(defvar sys::*logical-hosts* (make-hash-table :test 'equal)
  "Logical host name (upper case) -> (translations-as-given . parsed pairs).")
(defvar sys::*logical-host-names* nil
  "The keys of SYS::*LOGICAL-HOSTS*, for builtins given a logical namestring.")

;;; ---- component helpers ----

(defun sys::%pattern-p (x)
  (and (stringp x) (or (find #\* x) (find #\? x)) t))

(defun sys::%wild-component-p (x)
  (or (eq x :wild) (eq x :wild-inferiors) (sys::%pattern-p x)))

(defun sys::%split-string (string char)
  "The pieces of STRING between occurrences of CHAR (empty ones included)."
  (let ((parts nil) (start 0))
    (dotimes (i (length string))
      (when (char= (char string i) char)
        (push (subseq string start i) parts)
        (setq start (1+ i))))
    (push (subseq string start) parts)
    (nreverse parts)))

(defun sys::%unescape (string)
  "STRING without the backslashes that escape the next character."
  (if (find #\\ string)
      (with-output-to-string (out)
        (let ((escaped nil))
          (dotimes (i (length string))
            (let ((c (char string i)))
              (cond (escaped (write-char c out) (setq escaped nil))
                    ((char= c #\\) (setq escaped t))
                    (t (write-char c out)))))))
      string))

(defun sys::%last-unescaped (char string)
  "The position of the last CHAR in STRING not escaped by a backslash."
  (let ((found nil) (escaped nil))
    (dotimes (i (length string) found)
      (let ((c (char string i)))
        (cond (escaped (setq escaped nil))
              ((char= c #\\) (setq escaped t))
              ((char= c char) (setq found i)))))))

(defun sys::%common-case (x)
  "A component in the :COMMON case: all upper <-> all lower, mixed unchanged."
  (cond ((stringp x)
         (cond ((and (some #'alpha-char-p x) (every (lambda (c) (not (lower-case-p c))) x))
                (string-downcase x))
               ((and (some #'alpha-char-p x) (every (lambda (c) (not (upper-case-p c))) x))
                (string-upcase x))
               (t x)))
        ((consp x) (mapcar #'sys::%common-case x))
        (t x)))

(defun sys::%collapse-backs (directory)
  "DIRECTORY with each :BACK and the name before it removed."
  (if (and (consp directory) (member :back directory))
      (let ((out nil))
        (dolist (part (cdr directory))
          (if (and (eq part :back) out (or (stringp (car out)) (eq (car out) :wild)))
              (pop out)
              (push part out)))
        (cons (car directory) (nreverse out)))
      directory))

(defun sys::%canonical-directory (directory)
  (cond ((stringp directory) (list :absolute directory))
        ((eq directory :wild) (list :absolute :wild-inferiors))
        ((and (consp directory) (member (car directory) '(:absolute :relative)))
         (sys::%collapse-backs directory))
        ((null directory) nil)
        (t (error 'type-error :datum directory
                              :expected-type '(or list string (member :wild :unspecific))))))

;;; ---- making pathnames, native namestrings ----

(defun sys::%home-directory ()
  (let ((home (sys::%getenv "HOME")))
    (if (and home (plusp (length home))) (string-right-trim "/" home) "")))

(defun sys::%native-piece (x)
  (cond ((stringp x) x)
        ((eq x :wild) "*")
        ((eq x :wild-inferiors) "**")
        ((member x '(:up :back)) "..")
        (t "")))

(defun sys::%physical-native (directory name type)
  (with-output-to-string (out)
    (when directory
      (let ((parts (cdr directory)))
        (when (eq (car directory) :absolute)
          (when (eq (car parts) :home)
            (write-string (sys::%home-directory) out)
            (pop parts))
          (write-char #\/ out))
        (dolist (p parts)
          (write-string (sys::%native-piece p) out)
          (write-char #\/ out))))
    (when name
      (write-string (sys::%native-piece name) out))
    (when (and type (not (eq type :unspecific)))
      (write-char #\. out)
      (write-string (sys::%native-piece type) out))))

(defvar sys::*translating-logical-pathname* nil
  "True while a new logical pathname's translation is computed: the logical
pathnames made meanwhile are not translated in turn (a translation into its
own host would otherwise never end).")

(defun sys::%make-pathname-object (host device directory name type version)
  (if (stringp host)
      (let* ((p (sys::%make-logical-pathname-struct host :unspecific directory name type version nil))
             (physical (and (not sys::*translating-logical-pathname*)
                            (gethash host sys::*logical-hosts*)
                            (let ((sys::*translating-logical-pathname* t))
                              (ignore-errors (translate-logical-pathname p))))))
        (if (and physical (not (typep physical 'logical-pathname)))
            (sys::%make-logical-pathname-struct host :unspecific directory name type version
                                                (sys::%pn-%native physical))
            p))
      (sys::%make-pathname-struct :unix device directory name type version
                                  (sys::%physical-native directory name type))))

;;; ---- parsing ----

(defun sys::%parse-dir-piece (piece)
  (let ((u (sys::%unescape piece)))
    (cond ((string= piece "..") :up)
          ((string= piece "**") :wild-inferiors)
          ((string= piece "*") :wild)
          (t u))))

(defun sys::%parse-file-piece (piece)
  (cond ((null piece) nil)
        ((string= piece "*") :wild)
        (t (sys::%unescape piece))))

(defun sys::%parse-physical (string)
  "The physical pathname a Unix namestring names (SBCL's rules)."
  (let* ((slash (sys::%last-unescaped #\/ string))
         (dir-part (and slash (subseq string 0 (1+ slash))))
         (file-part (if slash (subseq string (1+ slash)) string))
         (directory nil) (name nil) (type nil))
    (when dir-part
      (let* ((absolute (char= (char dir-part 0) #\/))
             (parts (remove "" (sys::%split-string dir-part #\/) :test #'string=))
             (pieces (mapcar #'sys::%parse-dir-piece parts)))
        (if (and (not absolute) parts (string= (first parts) "~"))
            (setq directory (list* :absolute :home (cdr pieces)))
            (setq directory (cons (if absolute :absolute :relative) pieces)))))
    (unless (string= file-part "")
      (let ((dot (sys::%last-unescaped #\. file-part)))
        (if (and dot (plusp dot))
            (setq name (subseq file-part 0 dot) type (subseq file-part (1+ dot)))
            (setq name file-part))))
    (setq name (sys::%parse-file-piece name) type (sys::%parse-file-piece type))
    (sys::%make-pathname-object :unix nil directory name type (if name :newest nil))))

(defun sys::%logical-word (word what namestring)
  (let ((w (string-upcase word)))
    (unless (every (lambda (c) (or (alphanumericp c) (char= c #\-) (char= c #\*))) w)
      (error 'type-error :datum namestring :expected-type 'logical-pathname))
    (cond ((string= w "*") :wild)
          ((and (eq what :directory) (string= w "**")) :wild-inferiors)
          (t w))))

(defun sys::%logical-host-of (string)
  "The defined logical host STRING starts with (\"HOST:...\"), or NIL."
  (let ((colon (position #\: string)))
    (when (and colon (plusp colon))
      (let ((host (string-upcase (subseq string 0 colon))))
        (and (gethash host sys::*logical-hosts*) host)))))

(defun sys::%parse-logical (string host)
  "The logical pathname of STRING (\"HOST:DIR;DIR;NAME.TYPE.VERSION\", the
host optional when HOST is given)."
  (let* ((colon (position #\: string))
         (host (string-upcase (if colon (subseq string 0 colon) host)))
         (rest (if colon (subseq string (1+ colon)) string))
         (semi (position #\; rest :from-end t))
         (dirs (and semi (sys::%split-string (subseq rest 0 semi) #\;)))
         (file (if semi (subseq rest (1+ semi)) rest))
         (relative (and dirs (string= (first dirs) "")))
         (directory (cons (if relative :relative :absolute)
                          (mapcar (lambda (d) (sys::%logical-word d :directory string))
                                  (remove "" dirs :test #'string=))))
         (fields (if (string= file "") nil (sys::%split-string file #\.)))
         (name (and fields (sys::%logical-word (first fields) :name string)))
         (type (and (cdr fields) (sys::%logical-word (second fields) :type string)))
         (version (let ((v (third fields)))
                    (cond ((null v) nil)
                          ((string-equal v "NEWEST") :newest)
                          ((string= v "*") :wild)
                          ((every #'digit-char-p v) (parse-integer v))
                          (t (error 'type-error :datum string :expected-type 'logical-pathname))))))
    (when (cdddr fields)
      (error 'type-error :datum string :expected-type 'logical-pathname))
    (sys::%make-pathname-object host :unspecific directory name type version)))

(defun parse-namestring (thing &optional host (default-pathname *default-pathname-defaults*)
                         &key (start 0) end junk-allowed)
  (declare (ignore default-pathname junk-allowed))
  (cond ((pathnamep thing) (values thing start))
        ((streamp thing) (values (pathname thing) start))
        ((not (stringp thing))
         (error 'type-error :datum thing :expected-type '(or string pathname stream)))
        (t
         (let* ((end (or end (length thing)))
                (text (subseq thing start end))
                (logical-host (if (stringp host)
                                  (string-upcase host)
                                  (sys::%logical-host-of text))))
           (values (if logical-host
                       (sys::%parse-logical text logical-host)
                       (sys::%parse-physical text))
                   end)))))

(defun pathname (pathspec)
  "The pathname PATHSPEC designates: itself, a namestring parsed, a file stream's name."
  (cond ((pathnamep pathspec) pathspec)
        ((stringp pathspec) (values (parse-namestring pathspec)))
        ((streamp pathspec) (values (parse-namestring (sys::%stream-name pathspec))))
        (t (error 'type-error :datum pathspec :expected-type '(or string pathname stream)))))

(defun sys::%pathname-literal (namestring)
  (pathname namestring))

(defun logical-pathname (pathspec)
  (cond ((typep pathspec 'logical-pathname) pathspec)
        ((stringp pathspec)
         (let ((colon (position #\: pathspec)))
           (unless (and colon (plusp colon))
             (error 'type-error :datum pathspec :expected-type 'logical-pathname))
           (let ((host (string-upcase (subseq pathspec 0 colon))))
             (unless (gethash host sys::*logical-hosts*)
               (error "~S is not a valid logical namestring: logical host not yet defined: ~S"
                      pathspec host))
             (sys::%parse-logical pathspec host))))
        ((streamp pathspec) (logical-pathname (sys::%stream-name pathspec)))
        (t (error 'type-error :datum pathspec :expected-type '(or string logical-pathname stream)))))

;;; ---- components ----

(defun sys::%case-of (x case)
  (if (and (eq case :common) x) (sys::%common-case x) x))

(defun pathname-host (pathname &key (case :local))
  (declare (ignore case))
  (sys::%pn-host (pathname pathname)))

(defun pathname-device (pathname &key (case :local))
  (declare (ignore case))
  (sys::%pn-device (pathname pathname)))

(defun pathname-directory (pathname &key (case :local))
  (let ((p (pathname pathname)))
    (if (typep p 'logical-pathname)
        (sys::%pn-directory p)
        (sys::%case-of (sys::%pn-directory p) case))))

(defun pathname-name (pathname &key (case :local))
  (let ((p (pathname pathname)))
    (if (typep p 'logical-pathname) (sys::%pn-name p) (sys::%case-of (sys::%pn-name p) case))))

(defun pathname-type (pathname &key (case :local))
  (let ((p (pathname pathname)))
    (if (typep p 'logical-pathname) (sys::%pn-type p) (sys::%case-of (sys::%pn-type p) case))))

(defun pathname-version (pathname)
  (sys::%pn-version (pathname pathname)))

(defun make-pathname (&key (host nil hostp) (device nil devicep) (directory nil directoryp)
                        (name nil namep) (type nil typep) (version nil versionp)
                        defaults (case :local))
  "A pathname of the components given; missing ones come from DEFAULTS (an
explicit NIL is kept), the host from *DEFAULT-PATHNAME-DEFAULTS* without DEFAULTS."
  (let* ((d (and defaults (pathname defaults)))
         (host (cond (hostp (if (stringp host) (string-upcase host) host))
                     (d (sys::%pn-host d))
                     (t (sys::%pn-host (pathname *default-pathname-defaults*)))))
         (host (or host :unix))
         (logical (stringp host))
         (fix (lambda (x)
                (cond (logical (if (stringp x) (string-upcase x)
                                   (if (consp x) (mapcar (lambda (y) (if (stringp y) (string-upcase y) y)) x) x)))
                      ((eq case :common) (sys::%common-case x))
                      (t x)))))
    (when (and logical (not (gethash host sys::*logical-hosts*)))
      (error "logical host not yet defined: ~S" host))
    (dolist (c (list name type))
      (unless (or (null c) (stringp c) (member c '(:wild :unspecific)))
        (error 'type-error :datum c :expected-type '(or null string (member :wild :unspecific)))))
    (sys::%make-pathname-object
     host
     (cond (devicep device) ((and d (equal (sys::%pn-host d) host)) (sys::%pn-device d))
           (logical :unspecific) (t nil))
     (sys::%canonical-directory
      (funcall fix (cond (directoryp directory) (d (sys::%pn-directory d)) (t nil))))
     (funcall fix (cond (namep name) (d (sys::%pn-name d)) (t nil)))
     (funcall fix (cond (typep type) (d (sys::%pn-type d)) (t nil)))
     (cond (versionp version) (d (sys::%pn-version d)) (t nil)))))

;;; ---- namestrings ----

(defun sys::%escape-piece (string &key dots)
  "STRING with backslashes before backslashes, and before dots when DOTS
(:all, or :after-first for a name without type)."
  (if (or (find #\\ string) (and dots (find #\. string)))
      (with-output-to-string (out)
        (dotimes (i (length string))
          (let ((c (char string i)))
            (when (or (char= c #\\)
                      (and (char= c #\.) (or (eq dots :all) (and (eq dots :after-first) (plusp i)))))
              (write-char #\\ out))
            (write-char c out))))
      string))

(defun sys::%directory-namestring-of (p)
  (let ((directory (sys::%pn-directory p)))
    (if (typep p 'logical-pathname)
        (with-output-to-string (out)
          (when (eq (car directory) :relative) (write-char #\; out))
          (dolist (part (cdr directory))
            (write-string (sys::%native-piece part) out)
            (write-char #\; out)))
        (with-output-to-string (out)
          (when directory
            (let ((parts (cdr directory)))
              (when (eq (car directory) :absolute)
                (if (eq (car parts) :home)
                    (progn (write-char #\~ out) (write-char #\/ out) (pop parts))
                    (write-char #\/ out)))
              (dolist (part parts)
                (when (eq part :back)
                  (error ":BACK cannot be represented in namestrings."))
                (write-string (if (stringp part) (sys::%escape-piece part) (sys::%native-piece part)) out)
                (write-char #\/ out))))))))

(defun sys::%file-namestring-of (p)
  (let ((name (sys::%pn-name p)) (type (sys::%pn-type p)) (version (sys::%pn-version p)))
    (if (typep p 'logical-pathname)
        (with-output-to-string (out)
          (when name (write-string (sys::%native-piece name) out))
          (when type (write-char #\. out) (write-string (sys::%native-piece type) out))
          (when (and type version)
            (write-char #\. out)
            (cond ((eq version :newest) (write-string "NEWEST" out))
                  ((eq version :wild) (write-char #\* out))
                  (t (princ version out)))))
        (progn
          (when (and (null name) type (not (eq type :unspecific)))
            ;; (Not ~S of P: printing P calls this.)
            (error "The pathname with the type ~S and no name does not have a namestring ~
                    (there is a :TYPE component but no :NAME component)." type))
          (with-output-to-string (out)
            (when name
              (write-string (if (stringp name)
                                (sys::%escape-piece name :dots (if (and type (not (eq type :unspecific))) nil :after-first))
                                (sys::%native-piece name))
                            out))
            (when (and type (not (eq type :unspecific)))
              (write-char #\. out)
              (write-string (if (stringp type) (sys::%escape-piece type :dots :all) (sys::%native-piece type))
                            out)))))))

(defun sys::%namestring-of (p)
  (if (typep p 'logical-pathname)
      (concatenate 'string (sys::%pn-host p) ":" (sys::%directory-namestring-of p)
                   (sys::%file-namestring-of p))
      (concatenate 'string (sys::%directory-namestring-of p) (sys::%file-namestring-of p))))

(defun namestring (pathname)
  (if (and (streamp pathname) (not (pathnamep pathname)))
      (sys::%stream-name pathname)
      (sys::%namestring-of (pathname pathname))))

(defun file-namestring (pathname) (sys::%file-namestring-of (pathname pathname)))
(defun directory-namestring (pathname) (sys::%directory-namestring-of (pathname pathname)))

(defun host-namestring (pathname)
  (let ((host (sys::%pn-host (pathname pathname))))
    (if (stringp host) host "")))

(defun sys::%native-namestring (pathspec)
  "The native namestring of PATHSPEC (a logical pathname translated)."
  (sys::%pn-%native (sys::%physical pathspec)))

(defun sys::%print-pathname (p stream)
  (let ((text (ignore-errors (sys::%namestring-of p))))
    (cond ((and text (or *print-escape* *print-readably*))
           (write-string "#P" stream)
           (let ((*print-escape* t)) (prin1 text stream)))
          (text (write-string text stream))
          (t (when *print-readably* (error 'print-not-readable :object p))
             (format stream "#<~S (with no namestring) :HOST ~S :DEVICE ~S :DIRECTORY ~S :NAME ~S :TYPE ~S :VERSION ~S>"
                     (type-of p) (sys::%pn-host p) (sys::%pn-device p) (sys::%pn-directory p)
                     (sys::%pn-name p) (sys::%pn-type p) (sys::%pn-version p)))))
  p)

(defun enough-namestring (pathname &optional (defaults *default-pathname-defaults*))
  "The shortest namestring that gives PATHNAME when merged with DEFAULTS."
  (let ((p (pathname pathname)) (d (pathname defaults)))
    (if (not (equal (sys::%pn-host p) (sys::%pn-host d)))
        (namestring p)
        (let* ((pdir (sys::%pn-directory p)) (ddir (sys::%pn-directory d))
               (n (length ddir))
               (dir (cond ((null pdir) '(:relative))
                          ((eq (car pdir) :relative) pdir)
                          ((and (plusp n) (>= (length pdir) n) (equal (subseq pdir 0 n) ddir))
                           (cons :relative (nthcdr n pdir)))
                          (t pdir)))
               (type (sys::%pn-type p))
               (type-needed (and type (not (eq type :unspecific))))
               (name (sys::%pn-name p))
               (name-needed (or type-needed (and name (not (equal name (sys::%pn-name d))))))
               (short (sys::%make-pathname-object (sys::%pn-host p) (sys::%pn-device p)
                                                  (if (equal dir '(:relative)) nil dir)
                                                  (and name-needed name) (and type-needed type)
                                                  (and name-needed (sys::%pn-version p)))))
          (sys::%namestring-of short)))))

;;; ---- merging ----

(defun sys::%merge-directories (pdir ddir)
  (cond ((null pdir) ddir)
        ((and (eq (car pdir) :relative) (consp ddir))
         (sys::%collapse-backs (append ddir (cdr pdir))))
        (t pdir)))

(defun merge-pathnames (pathname &optional (defaults *default-pathname-defaults*) (default-version :newest))
  "PATHNAME with its missing components filled from DEFAULTS (a relative
directory appended to the defaults' one)."
  (let* ((d (pathname defaults))
         ;; A namestring is parsed on the defaults' host when that is logical.
         (p (if (and (stringp pathname) (stringp (sys::%pn-host d)))
                (values (parse-namestring pathname (sys::%pn-host d)))
                (pathname pathname)))
         (host (or (sys::%pn-host p) (sys::%pn-host d)))
         (same-host (equal host (sys::%pn-host d)))
         (logical (stringp host)))
    (flet ((fix (x) (if (and logical (stringp x)) (string-upcase x) x)))
      (sys::%make-pathname-object
       host
       (or (sys::%pn-device p) (and same-host (sys::%pn-device d)))
       (let ((dir (sys::%merge-directories (sys::%pn-directory p) (sys::%pn-directory d))))
         (if logical (sys::%upcase-parts dir) dir))
       (fix (or (sys::%pn-name p) (sys::%pn-name d)))
       (fix (or (sys::%pn-type p) (sys::%pn-type d)))
       (or (sys::%pn-version p)
           (if (sys::%pn-name p) default-version (or (sys::%pn-version d) default-version)))))))

(defvar *default-pathname-defaults* (or (ignore-errors (sys::%parse-physical (sys::%cwd)))
                                         (sys::%parse-physical ""))
  "The pathname relative names are merged with: the current directory at start-up.")

;;; ---- wildcards: matching and translating ----

(defun wild-pathname-p (pathname &optional field-key)
  (let ((p (pathname pathname)))
    (flet ((wild (x) (if (consp x) (some #'sys::%wild-component-p x) (sys::%wild-component-p x))))
      (case field-key
        ((nil) (or (wild (sys::%pn-directory p)) (wild (sys::%pn-name p)) (wild (sys::%pn-type p))
                   (eq (sys::%pn-version p) :wild) (eq (sys::%pn-host p) :wild) (eq (sys::%pn-device p) :wild)))
        (:host (eq (sys::%pn-host p) :wild))
        (:device (eq (sys::%pn-device p) :wild))
        (:directory (wild (sys::%pn-directory p)))
        (:name (wild (sys::%pn-name p)))
        (:type (wild (sys::%pn-type p)))
        (:version (eq (sys::%pn-version p) :wild))
        (t (error 'type-error :datum field-key
                              :expected-type '(member nil :host :device :directory :name :type :version)))))))

(defun sys::%glob-match (pattern string)
  "The list of substrings * and ? matched when STRING matches the pattern
PATTERN (NIL when it does not; (T) when it matches with no wildcard)."
  (let ((np (length pattern)) (ns (length string)))
    (labels ((try (pj sj acc)
               (cond ((= pj np) (and (= sj ns) (or (reverse acc) (list t))))
                     ((char= (char pattern pj) #\*)
                      (do ((k ns (1- k))) ((< k sj) nil)
                        (let ((r (try (1+ pj) k (cons (subseq string sj k) acc))))
                          (when r (return r)))))
                     ((= sj ns) nil)
                     ((char= (char pattern pj) #\?)
                      (try (1+ pj) (1+ sj) (cons (subseq string sj (1+ sj)) acc)))
                     ((char= (char pattern pj) (char string sj)) (try (1+ pj) (1+ sj) acc))
                     (t nil))))
      (try 0 0 nil))))

(defun sys::%match-piece (wild value)
  "The pieces a wildcard component WILD matched in VALUE: a list (possibly
empty) when it matches, :FAIL when it does not."
  (cond ((or (null wild) (eq wild :wild))
         (if (or (null wild) (stringp value) (null value) (symbolp value)) (list value) :fail))
        ((sys::%pattern-p wild)
         (let ((m (and (stringp value) (sys::%glob-match wild value))))
           (cond ((null m) :fail) ((equal m '(t)) nil) (t m))))
        ((and (stringp wild) (stringp value)) (if (string= wild value) nil :fail))
        ((equal wild value) nil)
        ((and (eq wild :newest) (null value)) nil)
        (t :fail)))

(defun sys::%match-directory (wild value)
  "The pieces the wildcard directory WILD matched in VALUE (each :WILD or
pattern piece a string, each :WILD-INFERIORS a list of parts), or :FAIL."
  (cond ((null wild) (list value))
        ((eq wild :wild) (list value))
        ((and (consp wild) (null value))
         (if (equal wild '(:absolute :wild-inferiors)) (list nil) :fail))
        ((not (eq (car wild) (car value))) :fail)
        (t
         (labels ((walk (ws vs)
                    (cond ((null ws) (if (null vs) (list nil) nil))
                          ((eq (car ws) :wild-inferiors)
                           (do ((k (length vs) (1- k))) ((< k 0) nil)
                             (let ((rest (walk (cdr ws) (nthcdr k vs))))
                               (when rest
                                 (return (list (cons (subseq vs 0 k) (car rest))))))))
                          ((null vs) nil)
                          (t (let ((m (sys::%match-piece (car ws) (car vs))))
                               (unless (eq m :fail)
                                 (let ((rest (walk (cdr ws) (cdr vs))))
                                   (when rest
                                     ;; One piece per wild part: a :WILD's string,
                                     ;; a pattern's list of matched substrings.
                                     (list (if (sys::%wild-component-p (car ws))
                                               (cons (if (eq (car ws) :wild) (car vs) m) (car rest))
                                               (car rest)))))))))))
           (let ((r (walk (cdr wild) (cdr value))))
             (if r (car r) :fail))))))

(defun pathname-match-p (pathname wildcard)
  "Whether PATHNAME matches WILDCARD (a missing component of WILDCARD matches anything)."
  (let ((p (pathname pathname)) (w (pathname wildcard)))
    (and (or (null (sys::%pn-host w)) (equal (sys::%pn-host p) (sys::%pn-host w))
             (eq (sys::%pn-host w) :wild))
         (not (eq (sys::%match-directory (sys::%pn-directory w) (sys::%pn-directory p)) :fail))
         (not (eq (sys::%match-piece (sys::%pn-name w) (sys::%pn-name p)) :fail))
         (not (eq (sys::%match-piece (sys::%pn-type w) (sys::%pn-type p)) :fail))
         (let ((wv (sys::%pn-version w)) (pv (sys::%pn-version p)))
           (or (member wv '(nil :wild)) (eql wv pv) (and (eq wv :newest) (null pv))))
         t)))

(defun sys::%fill-piece (to pieces source-value downcase)
  "The component TO gives, its wildcards replaced by PIECES in order
(SOURCE-VALUE when TO is NIL or :WILD matched a whole component)."
  (flet ((fix (x) (if (and downcase (stringp x)) (string-downcase x) x)))
    (cond ((null to) (fix source-value))
          ((eq to :wild) (fix (if pieces (car pieces) source-value)))
          ((sys::%pattern-p to)
           (with-output-to-string (out)
             (dotimes (i (length to))
               (let ((c (char to i)))
                 (if (member c '(#\* #\?))
                     (let ((piece (pop pieces)))
                       (when (stringp piece) (write-string (fix piece) out)))
                     (write-char c out))))))
          (t to))))

(defun translate-pathname (source from-wildcard to-wildcard &key)
  "SOURCE, which matches FROM-WILDCARD, rewritten by TO-WILDCARD: each wild
part of TO-WILDCARD takes what the corresponding wild part of FROM-WILDCARD
matched."
  (let* ((s (pathname source)) (from (pathname from-wildcard)) (to (pathname to-wildcard))
         (downcase (and (typep s 'logical-pathname) (not (typep to 'logical-pathname))))
         (dir-pieces (sys::%match-directory (sys::%pn-directory from) (sys::%pn-directory s)))
         (name-pieces (sys::%match-piece (sys::%pn-name from) (sys::%pn-name s)))
         (type-pieces (sys::%match-piece (sys::%pn-type from) (sys::%pn-type s))))
    (flet ((lose (what a b)
             (error "Pathname components from SOURCE and FROM args to TRANSLATE-PATHNAME~%did not match:~%  ~S ~S"
                    a b what)))
      (when (eq dir-pieces :fail)
        (lose :directory (cdr (sys::%pn-directory s)) (cdr (sys::%pn-directory from))))
      (when (eq name-pieces :fail) (lose :name (sys::%pn-name s) (sys::%pn-name from)))
      (when (eq type-pieces :fail) (lose :type (sys::%pn-type s) (sys::%pn-type from))))
    (let* ((from-dir (sys::%pn-directory from))
           (to-dir (sys::%pn-directory to))
           (directory
             (cond ((null to-dir)
                    (if downcase (sys::%downcase-parts (sys::%pn-directory s)) (sys::%pn-directory s)))
                   ((or (null from-dir) (eq from-dir :wild))
                    ;; Everything of the source's directory is the one piece.
                    (sys::%fill-directory to-dir (list (cdr (sys::%pn-directory s))) downcase))
                   (t (sys::%fill-directory to-dir dir-pieces downcase))))
           (host (sys::%pn-host to))
           (logical (stringp host)))
      (flet ((fix (x) (if (and logical (stringp x)) (string-upcase x) x)))
      (sys::%make-pathname-object
       host
       (if logical :unspecific nil)
       (if logical (sys::%upcase-parts directory) directory)
       (fix (sys::%fill-piece (sys::%pn-name to) name-pieces (sys::%pn-name s) downcase))
       (fix (sys::%fill-piece (sys::%pn-type to) type-pieces (sys::%pn-type s) downcase))
       (let ((v (sys::%pn-version to)))
         (if (or (null v) (eq v :wild)) (sys::%pn-version s) v)))))))

(defun sys::%downcase-parts (directory)
  (mapcar (lambda (x) (if (stringp x) (string-downcase x) x)) directory))

(defun sys::%upcase-parts (directory)
  (mapcar (lambda (x) (if (stringp x) (string-upcase x) x)) directory))

(defun sys::%fill-directory (to-dir pieces downcase)
  "TO-DIR with its wild parts filled, in order, from PIECES (what the FROM
directory's wild parts matched: lists of parts for :WILD-INFERIORS)."
  (flet ((fix (x) (if (and downcase (stringp x)) (string-downcase x) x)))
    (cons (car to-dir)
          (let ((out nil))
            (dolist (part (cdr to-dir) (nreverse out))
              (cond ((eq part :wild-inferiors)
                     (let ((piece (pop pieces)))
                       (dolist (x (if (listp piece) piece (list piece)))
                         (push (fix x) out))))
                    ((eq part :wild)
                     (let ((piece (pop pieces)))
                       (push (fix (if (listp piece) (car piece) piece)) out)))
                    ((sys::%pattern-p part)
                     (let ((piece (pop pieces)))
                       (push (sys::%fill-piece part (if (listp piece) piece (list piece)) nil downcase) out)))
                    (t (push part out))))))))

;;; ---- logical pathname translations ----

(defun sys::%host-name (host)
  (string-upcase (if (typep host 'logical-pathname) (sys::%pn-host host) (string host))))

(defun logical-pathname-translations (host)
  (let ((entry (gethash (sys::%host-name host) sys::*logical-hosts*)))
    (unless entry
      (error "logical host not yet defined: ~S" host))
    (car entry)))

(defun (setf logical-pathname-translations) (translations host)
  (let ((name (sys::%host-name host)))
    ;; Define the host first: the FROM wildcards are parsed on it.
    (unless (gethash name sys::*logical-hosts*)
      (setf (gethash name sys::*logical-hosts*) (cons nil nil))
      (push name sys::*logical-host-names*))
    (let ((parsed (mapcar (lambda (entry)
                            (list (if (pathnamep (first entry))
                                      (first entry)
                                      (sys::%parse-logical (first entry) name))
                                  (pathname (second entry))))
                          translations)))
      (setf (gethash name sys::*logical-hosts*) (cons translations parsed))
      translations)))

(defun translate-logical-pathname (pathname &key)
  "The physical pathname a logical PATHNAME names through its host's
translations (a physical pathname is returned as it is)."
  (let ((p (pathname pathname)))
    (dotimes (i 50 (error "Translating ~S: the translations loop" pathname))
      (unless (typep p 'logical-pathname)
        (return p))
      (let* ((entry (gethash (sys::%pn-host p) sys::*logical-hosts*))
             (rule (find-if (lambda (r) (pathname-match-p p (first r))) (cdr entry))))
        (unless rule
          (error 'sys::simple-file-error :pathname p
                                         :format-control "No translation for ~S"
                                         :format-arguments (list p)))
        (setq p (translate-pathname p (first rule) (second rule)))))))

(defvar sys::*logical-pathname-translation-directories* '("/etc/common-lisp/translations/")
  "Where LOAD-LOGICAL-PATHNAME-TRANSLATIONS looks for HOST.translations.")

(defun load-logical-pathname-translations (host)
  "Define HOST's translations from the file HOST.translations (lower case),
which holds the translation list; NIL when HOST is already defined."
  (let ((name (sys::%host-name host)))
    (if (gethash name sys::*logical-hosts*)
        nil
        (let ((file (dolist (dir sys::*logical-pathname-translation-directories* nil)
                      (let ((f (concatenate 'string dir (string-downcase name) ".translations")))
                        (when (probe-file f) (return f))))))
          (unless file
            (error 'sys::simple-file-error
                   :pathname name
                   :format-control "No translations file for the logical host ~A (looked for ~(~A~).translations in ~{~A~^, ~})"
                   :format-arguments (list name name sys::*logical-pathname-translation-directories*)))
          (with-open-file (in file)
            (setf (logical-pathname-translations name) (read in)))
          t))))

;;; ---- the file system ----

(defun sys::%physical (pathspec)
  "PATHSPEC as a physical pathname merged with *DEFAULT-PATHNAME-DEFAULTS*."
  (let ((p (translate-logical-pathname (pathname pathspec))))
    (if (and (consp (sys::%pn-directory p)) (eq (car (sys::%pn-directory p)) :absolute))
        p
        (let ((d (translate-logical-pathname *default-pathname-defaults*)))
          (translate-logical-pathname (merge-pathnames p d nil))))))

(defun probe-file (pathspec)
  "The truename of the file PATHSPEC names, or NIL when there is none."
  (let ((name (sys::%probe-file (sys::%pn-%native (sys::%physical pathspec)))))
    (and name (sys::%parse-physical name))))

(defun truename (pathspec)
  (or (probe-file pathspec)
      (error 'sys::simple-file-error
             :pathname pathspec
             :format-control "Failed to find the TRUENAME of ~A: No such file or directory"
             :format-arguments (list (sys::%pn-%native (sys::%physical pathspec))))))

(defun directory (pathspec &key (resolve-symlinks t))
  "The truenames of the existing files PATHSPEC (a wild pathname) names, sorted."
  (declare (ignore resolve-symlinks))
  (mapcar #'sys::%parse-physical (sys::%directory (sys::%pn-%native (sys::%physical pathspec)))))

(defun delete-file (file)
  (sys::%delete-file (sys::%pn-%native (sys::%physical file))))

(defun rename-file (file new-name)
  "Rename FILE to NEW-NAME merged with FILE; (values new-name old-truename new-truename)."
  (let* ((old (truename file))
         (new (merge-pathnames new-name file)))
    (sys::%rename-file (sys::%pn-%native old) (sys::%pn-%native (sys::%physical new)))
    (values new old (truename new))))

(defun file-author (pathspec)
  (sys::%file-author (sys::%pn-%native (sys::%physical pathspec))))

(defun file-write-date (pathspec)
  "The file's modification time as a universal time."
  (let ((native (sys::%pn-%native (sys::%physical pathspec))))
    (or (and (sys::%file-kind native) (sys::%file-write-date native))
        (error 'sys::simple-file-error
               :pathname pathspec
               :format-control "Failed to find the WRITE-DATE of ~A: No such file or directory"
               :format-arguments (list native)))))

(defun ensure-directories-exist (pathspec &key verbose)
  "Create the directories of PATHSPEC's directory part; (values pathspec created)."
  (let* ((p (sys::%physical pathspec))
         (dir (sys::%physical-native (sys::%pn-directory p) nil nil)))
    (when (wild-pathname-p p :directory)
      (error 'sys::simple-file-error :pathname pathspec
                                     :format-control "ENSURE-DIRECTORIES-EXIST: ~S is wild"
                                     :format-arguments (list pathspec)))
    (let ((created (sys::%create-directories dir)))
      (when (and created verbose)
        (format *standard-output* "~&creating directory: ~A~%" dir))
      (values pathspec created))))

(defun user-homedir-pathname (&optional host)
  (declare (ignore host))
  (sys::%parse-physical (concatenate 'string (sys::%home-directory) "/")))
