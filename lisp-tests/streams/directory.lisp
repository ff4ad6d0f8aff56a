;;;; DIRECTORY: wild names (* and ?), types, ** for any depth, directories as
;;;; dir/, truenames, sorted. The files are made under /tmp and deleted after.

(defvar *root* "/tmp/mprof-lisp-directory-test/")
(defvar *files* '("a.lisp" "b.txt" "noext" ".hidden" "sub/c.lisp" "sub/deep/d.lisp" "other/e.lisp"))
(dolist (f *files*)
  (let ((path (concatenate 'string *root* f)))
    (ensure-directories-exist path)
    (with-open-file (out path :direction :output :if-exists :supersede) (write-line f out))))

(defun listing (pattern)
  (mapcar (lambda (p) (subseq (namestring p) (length *root*)))
          (directory (concatenate 'string *root* pattern))))

(dolist (p '("*.lisp" "*.*" "*" "*/" "**/*.lisp" "*/*.lisp" "a.lisp" "zz.lisp" "" "?.lisp"
             "a*.*" "sub/deep/../c.lisp" "**/" "nosuchdir/*.lisp"))
  (print (list p (listing p))))

(dolist (f *files*) (delete-file (concatenate 'string *root* f)))
(print (listing "**/*.*"))
