;;; Nested backquote (CLHS 2.4.6): a comma belongs to the innermost backquote;
;;; ,,@ splices at the inner level each element evaluated at the outer one.
;;; The printed results avoid printing backquote forms themselves (SBCL prints
;;; its own representation); they evaluate what the templates build.

;; Alexandria's ONCE-ONLY, as it is written there.
(defmacro once-only (specs &body forms)
  (let ((gensyms (loop repeat (length specs) collect (gensym "ONCE-ONLY")))
        (names-and-forms (mapcar (lambda (spec)
                                   (etypecase spec
                                     (list (destructuring-bind (name form) spec (cons name form)))
                                     (symbol (cons spec spec))))
                                 specs)))
    `(let ,(mapcar (lambda (g n) (list g `(gensym ,(string (car n)))))
                   gensyms names-and-forms)
       `(let (,,@(mapcar (lambda (g n) ``(,,g ,,(cdr n))) gensyms names-and-forms))
          ,(let ,(mapcar (lambda (n g) (list (car n) g)) names-and-forms gensyms)
             ,@forms)))))
(defmacro square (x) (once-only (x) `(* ,x ,x)))
(defvar *calls* 0)
(defun next () (incf *calls*))
(print (list (square (next)) *calls*))

(defmacro with-rebinding (bindings &body body)
  (loop for binding in bindings
        for var = (if (consp binding) (car binding) binding)
        for name = (gensym)
        collect `(,name ,var) into renames
        collect ``(,,var ,,name) into temps
        finally (return `(let ,renames
                          (with-unique-names ,bindings
                            `(let (,,@temps)
                              ,,@body))))))
(defmacro with-unique-names ((&rest bindings) &body body)
  `(let ,(mapcar (lambda (b) (let ((v (if (consp b) (car b) b))) `(,v (gensym ,(symbol-name v))))) bindings)
     ,@body))
(defmacro twice (x) (with-rebinding (x) `(+ ,x ,x)))
(print (let ((*calls* 10)) (list (twice (next)) *calls*)))
;; WITH-REBINDING above is the shape cl-ppcre, cl-who and flexi-streams use.

;; ,,@ and ,@, at the inner level, evaluated.
(defmacro list-of (&rest forms) ``(list ,,@forms))
(print (eval (list-of 1 (+ 1 1) 3)))
(defmacro spliced (form) ``(a ,@,form z))
(defparameter *middle* '(b c))
(print (spliced *middle*))
(let ((x '(1 2)) (y 3))
  (print (eval ``(list ,,@x ,,y))))
(let ((x '((+ 1 1) (* 2 2))))
  (print (eval ``(list ,@(list ,@x)))))
(print (let ((a 1)) `(,a ,@(list 2 3) . ,(+ 2 2))))
(print `#(1 ,@(list 2 3) ,(* 2 2)))
(print (let ((l '(x y))) `(,@l)))
(print (let ((n 3)) (eval ``(,',n ,,n))))

;; One form placed by a macro inside two MACROLETs expands under each.
(defmacro two-contexts (&body body)
  `(list (macrolet ((m () 1)) ,@body)
         (macrolet ((m () 2)) ,@body)))
(print (two-contexts (m)))
