;;; Parsing namestrings into components, and namestrings back (SBCL's Unix rules).
(defun parts (p)
  (let ((p (pathname p)))
    (list (pathname-device p) (pathname-directory p) (pathname-name p)
          (pathname-type p) (pathname-version p))))

(dolist (s '("/a/b/c.lisp" "foo" ".bashrc" "foo.tar.gz" "a/../b" "./foo" "../x/" "/" ""
             "*" "*.*" "**/*.lisp" "/a/**/b/*.lisp" "foo." ".foo.bar" "/a//b/c" "~/x"
             "/tmp/x.lisp.~1~" "..." "a.b/c.d" "../" "." ".." "/a/./b" "x/." "/a/b/.."
             "/a/b/" "a/b/" "/usr/share/common-lisp/source/"))
  (format t "~S -> ~S ~S~%" s (parts s) (namestring s)))

(print (list (file-namestring "/a/b/c.lisp") (file-namestring "/a/b/") (file-namestring "/a/b/*.*")))
(print (list (directory-namestring "/a/b/c.lisp") (directory-namestring "c.lisp")
             (directory-namestring "a/c.lisp") (directory-namestring #p"~/x/y")))
(print (host-namestring "/a/b/c.lisp"))
(print (multiple-value-list (parse-namestring "/a/b.c")))
(print (multiple-value-list (parse-namestring "")))
(print (multiple-value-list (parse-namestring #p"/a")))
(print (pathname-name "/a/b.c/"))
(print (list (pathname-name #p"/tmp/foo.lisp" :case :common)
             (pathname-name #p"/tmp/FOO.lisp" :case :common)
             (pathname-name #p"/tmp/Foo.lisp" :case :common)
             (pathname-directory "/a/b/c.lisp" :case :common)))
(print (with-open-file (s "/tmp/mprof-pathnames-parse.txt" :direction :output :if-exists :supersede)
         (list (pathname s) (namestring s))))
(let ((p #p"/q/r.s")) (print (eq p (pathname p))))
