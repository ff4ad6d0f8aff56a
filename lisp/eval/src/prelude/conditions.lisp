;;;; The prelude, part 2: the condition system. Handlers live in the special
;;;; variable SYS:*HANDLER-CLUSTERS* (a list of clusters of (type . function));
;;;; a handler runs with the clusters outside its own, as CL requires.
;;;; Restarts are catch tags in SYS::*RESTART-CLUSTERS*.

(defun sys::%conditionp (x)
  (if (sys:%struct-type-name x) (typep x 'condition) nil))

(defun sys::%initarg-value (slot initargs info)
  ;; info: list of (slot-name initargs initform-thunk) for slots declared by
  ;; DEFINE-CONDITION; other slots take the keyword of their own name.
  (let ((entry (member-if-internal (lambda (e) (eq (car e) slot)) info)))
    (if entry
        (let ((e (car entry)))
          (block found
            (dolist-internal (k (car (cdr e)))
              (let ((tail (sys:%dkey initargs k)))
                (when tail (return-from found (car tail)))))
            (let ((thunk (car (cdr (cdr e)))))
              (if thunk (funcall thunk) nil))))
        (let ((tail (sys:%dkey initargs (intern (symbol-name slot) "KEYWORD"))))
          (if tail (car tail) nil)))))

(defun member-if-internal (f list)
  (block nil
    (tagbody
     next
       (when list
         (when (funcall f (car list)) (return-from nil list))
         (setq list (cdr list))
         (go next)))
    nil))

(defun make-condition (type &rest initargs)
  (let ((stype (sys:%find-struct-type type)))
    (unless (and stype (typep (sys:%make-instance stype) 'condition))
      (error 'type-error :datum type :expected-type '(satisfies sys::condition-type-p)))
    (let ((info (sys:%struct-type-extra stype)))
      (apply #'sys:%make-instance stype
             (mapcar-internal (lambda (slot) (sys::%initarg-value slot initargs info))
                              (sys:%struct-type-slots stype))))))

(defun sys::%coerce-to-condition (datum arguments default-type)
  (cond ((sys::%conditionp datum) datum)
        ((symbolp datum) (apply #'make-condition datum arguments))
        ((stringp datum)
         (make-condition default-type :format-control datum :format-arguments arguments))
        (t (make-condition 'simple-type-error
                           :datum datum
                           :expected-type '(or string symbol condition)
                           :format-control "~S is not a condition designator."
                           :format-arguments (list datum)))))

(defvar *break-on-signals* nil
  "A type: signalling a condition of this type calls BREAK before the handlers run.")

(defun sys::%signal (condition)
  (when (and *break-on-signals* (typep condition *break-on-signals*))
    (break "~A~%BREAK was entered because of *BREAK-ON-SIGNALS*." condition))
  (let ((clusters sys:*handler-clusters*))
    (tagbody
     next
       (when clusters
         (let ((cluster (car clusters)))
           (setq clusters (cdr clusters))
           (let ((sys:*handler-clusters* clusters))
             (dolist-internal (h cluster)
               (when (typep condition (car h))
                 (funcall (cdr h) condition)))))
         (go next))))
  nil)

(defun signal (datum &rest arguments)
  (sys::%signal (sys::%coerce-to-condition datum arguments 'simple-condition))
  nil)

(defvar sys::*interactive-debugger* nil
  "True at an interactive REPL: an unhandled error enters the debugger (debugger.lisp).")

(defvar *debugger-hook* nil
  "A function of a condition and the hook, called (with *DEBUGGER-HOOK* bound to NIL)
before the debugger is entered; if it returns, the debugger is entered as usual.")

(defun sys::%call-debugger-hook (condition)
  (let ((hook *debugger-hook*))
    (when hook
      (let ((*debugger-hook* nil))
        (funcall hook condition hook)))))

(defun error (datum &rest arguments)
  (let ((condition (sys::%coerce-to-condition datum arguments 'simple-error)))
    (sys::%signal condition)
    ;; INVOKE-DEBUGGER's work, inlined so that a backtrace shows no extra frame.
    (sys::%call-debugger-hook condition)
    (when sys::*interactive-debugger* (sys::%interactive-debugger condition))
    (sys:%unhandled-condition condition)))

(defun invoke-debugger (condition)
  (unless (typep condition 'condition)
    (error 'type-error :datum condition :expected-type 'condition))
  (sys::%call-debugger-hook condition)
  (when sys::*interactive-debugger* (sys::%interactive-debugger condition))
  (sys:%unhandled-condition condition))

(defmacro handler-bind (bindings &body body)
  `(let ((sys:*handler-clusters*
           (cons (list ,@(mapcar-internal (lambda (b) `(cons ',(car b) ,(car (cdr b)))) bindings))
                 sys:*handler-clusters*)))
     ,@body))

(defmacro handler-case (form &rest clauses)
  (let* ((no-error (member-if-internal (lambda (c) (eq (car c) :no-error)) clauses))
         (clauses (remove-if-internal (lambda (c) (eq (car c) :no-error)) clauses))
         (block (gensym "HANDLER-CASE"))
         (var (gensym "CONDITION"))
         (tags (mapcar-internal (lambda (c) (declare (ignore c)) (gensym "HANDLER")) clauses)))
    `(block ,block
       (let ((,var nil))
         (declare (ignorable ,var))
         (tagbody
            (return-from ,block
              (handler-bind ,(mapcar-internal (lambda (c tag) `(,(car c) (lambda (c) (setq ,var c) (go ,tag))))
                                              clauses tags)
                ,(if no-error
                     `(multiple-value-call (lambda ,@(cdr (car no-error))) ,form)
                     form)))
            ,@(sys::%mapcan-internal
               (lambda (c tag)
                 (list tag
                       `(return-from ,block
                          ,(if (car (cdr c))
                               `(let ((,(car (car (cdr c))) ,var)) ,@(cdr (cdr c)))
                               `(progn ,@(cdr (cdr c)))))))
               clauses tags))))))

(defun sys::%mapcan-internal (f a b)
  (let ((out nil))
    (tagbody
     next
       (when (and a b)
         (setq out (append (reverse-internal (funcall f (car a) (car b))) out))
         (setq a (cdr a) b (cdr b))
         (go next)))
    (sys::%nreverse-list out)))

(defun reverse-internal (list)
  (let ((out nil))
    (dolist-internal (x list) (setq out (cons x out)))
    out))

(defmacro ignore-errors (&body body)
  `(handler-case (progn ,@body) (error (c) (values nil c))))

;;; Restarts: a restart is (name tag index report-function).

(defvar sys::*restart-clusters* nil)

(defun restart-name (restart) (car restart))

(defmacro restart-case (form &rest clauses)
  (let ((block (gensym "RESTART-CASE")) (tag (gensym "TAG")) (result (gensym)))
    `(block ,block
       (let* ((,tag (list nil))
              (,result
                (catch ,tag
                  (let ((sys::*restart-clusters*
                          (cons (list ,@(let ((i -1))
                                          (mapcar-internal
                                           (lambda (c)
                                             (setq i (+ i 1))
                                             (let ((report (car (cdr (member-eql :report (cdr (cdr c)))))))
                                               `(list ',(car c) ,tag ,i
                                                      ,(cond ((stringp report) report)
                                                             (report `(function ,report))
                                                             (t nil)))))
                                           clauses)))
                                sys::*restart-clusters*)))
                    (return-from ,block ,form)))))
         (case (car ,result)
           ,@(let ((i -1))
               (mapcar-internal
                (lambda (c)
                  (setq i (+ i 1))
                  (let ((body (cdr (cdr c))))
                    ;; Skip :report/:interactive/:test options.
                    (tagbody
                     next
                       (when (and body (keywordp (car body)) (cdr body))
                         (setq body (cdr (cdr body)))
                         (go next)))
                    `(,i (apply (lambda ,(car (cdr c)) ,@body) (cdr ,result)))))
                clauses)))))))

(defun compute-restarts (&optional condition)
  (declare (ignore condition))
  (let ((out nil))
    (dolist-internal (cluster sys::*restart-clusters*)
      (dolist-internal (r cluster) (setq out (cons r out))))
    (reverse-internal out)))

(defun find-restart (name &optional condition)
  (declare (ignore condition))
  (if (consp name)
      name
      (block nil
        (dolist-internal (cluster sys::*restart-clusters*)
          (dolist-internal (r cluster)
            (when (eq (car r) name) (return-from nil r))))
        nil)))

(defun invoke-restart (restart &rest arguments)
  (let ((r (find-restart restart)))
    (unless r
      (error 'sys::simple-control-error
             :format-control "No restart ~S is active." :format-arguments (list restart)))
    (throw (car (cdr r)) (cons (car (cdr (cdr r))) arguments))))

(defmacro with-simple-restart ((name format-control &rest args) &body body)
  `(restart-case (progn ,@body)
     (,name () :report (lambda (s) (format s ,format-control ,@args)) (values nil t))))

(defun abort (&optional condition) (declare (ignore condition)) (invoke-restart 'abort))
(defun continue (&optional condition)
  (declare (ignore condition))
  (let ((r (find-restart 'continue))) (when r (invoke-restart r))))
(defun muffle-warning (&optional condition) (declare (ignore condition)) (invoke-restart 'muffle-warning))
(defun use-value (value &optional condition)
  (declare (ignore condition))
  (let ((r (find-restart 'use-value))) (when r (invoke-restart r value))))
(defun store-value (value &optional condition)
  (declare (ignore condition))
  (let ((r (find-restart 'store-value))) (when r (invoke-restart r value))))

(defun warn (datum &rest arguments)
  (let ((condition (sys::%coerce-to-condition datum arguments 'simple-warning)))
    (restart-case
        (progn
          (sys::%signal condition)
          (format *error-output* "~&WARNING: ~A~%" (sys::%report-string condition)))
      (muffle-warning () nil))
    nil))

(defun cerror (continue-string datum &rest arguments)
  (restart-case (apply #'error datum arguments)
    (continue () :report (lambda (s) (apply #'format s continue-string arguments)) nil))
  nil)

(defun break (&optional (format-control "Break") &rest format-arguments)
  (with-simple-restart (continue "Return from BREAK.")
    ;; BREAK enters the debugger whatever the hook says (CLHS BREAK).
    (let ((*debugger-hook* nil))
      (invoke-debugger (make-condition 'simple-condition :format-control format-control
                                                         :format-arguments format-arguments))))
  nil)

(defun sys::%report-string (condition)
  (let ((report (sys:%condition-report-function condition)))
    (cond ((stringp report) report)
          ((functionp report)
           (let ((s (make-string-output-stream)))
             (funcall report condition s)
             (get-output-stream-string s)))
          (t (sys:%condition-static-report condition)))))

(defun sys::%condition-precedence (name parents)
  (let ((out (list name)))
    (dolist-internal (p (if parents parents '(condition)))
      (let ((ty (sys:%find-struct-type p)))
        (unless ty (error "~S is not a defined condition type" p))
        (dolist-internal (n (sys::%type-precedence ty))
          (unless (member-eql n out) (setq out (cons n out))))))
    (reverse-internal out)))

(defun sys::%define-condition (name parents own-slots info report &optional default-initargs)
  (let ((slots nil) (all-info nil))
    (dolist-internal (p (if parents parents '(condition)))
      (let ((ty (sys:%find-struct-type p)))
        (dolist-internal (s (sys:%struct-type-slots ty))
          (unless (member-eql s slots) (setq slots (cons s slots))))
        (setq all-info (append all-info (sys:%struct-type-extra ty)))))
    (dolist-internal (s own-slots)
      (unless (member-eql s slots) (setq slots (cons s slots))))
    (sys:%make-struct-type name (sys::%condition-precedence name parents) (reverse-internal slots) t)
    (setq info (append info all-info))
    ;; A default initarg (KEY . THUNK) becomes the initform of the slot KEY
    ;; initializes, in an entry ahead of the slot's others (the first entry
    ;; for a slot is the one used; an initarg given to MAKE-CONDITION still wins).
    (dolist-internal (d (reverse-internal default-initargs))
      (let* ((key (car d))
             (entry (car (member-if-internal (lambda (e) (member-eql key (car (cdr e)))) info)))
             (slot (if entry
                       (car entry)
                       (car (member-if-internal (lambda (s) (string= (symbol-name s) (symbol-name key))) slots)))))
        (when slot
          (setq info (cons (list slot (if entry (car (cdr entry)) (list key)) (cdr d)) info)))))
    (sys:%struct-type-extra name info)
    (when report (sys:%struct-type-set-report name report))
    name))

;;; A condition slot's :reader, :writer and :accessor functions: ordinary
;;; functions while the prelude loads; once CLOS is there (clos-standard.lisp
;;; redefines these two), methods of generic functions specialized on the
;;; condition type, as in SBCL, so a program may add methods of its own.
(defun sys::%condition-reader (name type slot)
  (declare (ignore type))
  (sys:%set-fdefinition name (lambda (c) (sys:%slot-by-name c slot))))

(defun sys::%condition-writer (name type slot)
  (declare (ignore type))
  (sys:%set-fdefinition name (lambda (v c) (sys::%set-slot-by-name c slot v))))

(defmacro define-condition (name parents slot-specs &rest options)
  (let ((own nil) (info nil) (readers nil) (report nil) (defaults nil))
    (dolist-internal (spec slot-specs)
      (let* ((slot (if (consp spec) (car spec) spec))
             (plist (if (consp spec) (cdr spec) nil))
             (initargs nil) (initform nil) (has-initform nil))
        (setq own (cons slot own))
        (tagbody
         next
           (when plist
             (let ((k (car plist)) (v (car (cdr plist))))
               (cond ((eq k :initarg) (setq initargs (cons v initargs)))
                     ((eq k :initform) (setq initform v has-initform t))
                     ((eq k :reader)
                      (setq readers (cons `(sys::%condition-reader ',v ',name ',slot) readers)))
                     ((eq k :writer)
                      (setq readers (cons `(sys::%condition-writer ',v ',name ',slot) readers)))
                     ((eq k :accessor)
                      (setq readers (cons `(sys::%condition-reader ',v ',name ',slot) readers))
                      (setq readers (cons `(sys::%condition-writer '(setf ,v) ',name ',slot) readers)))))
             (setq plist (cdr (cdr plist)))
             (go next)))
        (setq info (cons `(list ',slot ',initargs ,(if has-initform `(lambda () ,initform) nil)) info))))
    (dolist-internal (o options)
      (when (eq (car o) :default-initargs)
        (do ((rest (cdr o) (cdr (cdr rest)))) ((null rest))
          (setq defaults (cons `(cons ',(car rest) (lambda () ,(car (cdr rest)))) defaults))))
      (when (eq (car o) :report)
        (let ((r (car (cdr o))))
          (setq report (cond ((stringp r) r)
                             ((symbolp r) `(function ,r))
                             (t `(function ,r)))))))
    `(progn
       (sys::%define-condition ',name ',parents ',(reverse-internal own) (list ,@info) ,report
                               (list ,@(reverse-internal defaults)))
       ,@readers
       ',name)))

;;; Readers of the standard condition types.
(defun simple-condition-format-control (c) (sys:%slot-by-name c 'sys::format-control))
(defun simple-condition-format-arguments (c) (sys:%slot-by-name c 'sys::format-arguments))
(defun type-error-datum (c) (sys:%slot-by-name c 'sys::datum))
(defun type-error-expected-type (c) (sys:%slot-by-name c 'sys::expected-type))
(defun cell-error-name (c) (sys:%slot-by-name c 'sys::name))
(defun arithmetic-error-operation (c) (sys:%slot-by-name c 'sys::operation))
(defun arithmetic-error-operands (c) (sys:%slot-by-name c 'sys::operands))
(defun stream-error-stream (c) (sys:%slot-by-name c 'sys::stream))
(defun file-error-pathname (c) (sys:%slot-by-name c 'sys::pathname))
(defun package-error-package (c) (sys:%slot-by-name c 'sys::package))

;;; The correctable errors: each offers a restart that changes the place and
;;; tries again, as SBCL's do (STORE-VALUE for CHECK-TYPE, CCASE, CTYPECASE;
;;; CONTINUE for ASSERT, which asks for new values of its places).

(defmacro assert (test &optional places datum &rest arguments)
  (let ((again (gensym "ASSERT")))
    `(tagbody
        ,again
        (unless ,test
          (restart-case ,(if datum
                             `(error ,datum ,@arguments)
                             `(error "The assertion ~S failed." ',test))
            (continue ()
              :report (lambda (stream)
                        (format stream ,(if places "Retry assertion with new value~P for ~{~S~^, ~}." "Retry assertion.")
                                ,@(when places `(,(length places) ',places))))
              ,@(mapcar (lambda (place)
                          `(setf ,place (sys::%prompt-for-value ',place)))
                        places)))
          (go ,again)))))

(defun sys::%prompt-for-value (place)
  "A new value for PLACE, read and evaluated from *QUERY-IO*."
  (format *query-io* "~&Type a form to be evaluated for ~S: " place)
  (finish-output *query-io*)
  (eval (read *query-io*)))

(defmacro sys::%with-store-value-retry ((place) form)
  "Evaluate FORM (which signals) with a STORE-VALUE restart that sets PLACE."
  (let ((new (gensym "NEW")))
    `(restart-case ,form
       (store-value (,new)
         :report (lambda (stream) (format stream "Supply a new value for ~S." ',place))
         :interactive (lambda () (list (sys::%prompt-for-value ',place)))
         (setf ,place ,new)))))

(defmacro check-type (place type &optional type-string)
  (let ((v (gensym)) (again (gensym "CHECK-TYPE")) (done (gensym "DONE")))
    `(block ,done
       (tagbody
          ,again
          (let ((,v ,place))
            (when (typep ,v ',type) (return-from ,done nil))
            (sys::%with-store-value-retry (,place)
              (error 'sys::simple-type-error
                     :datum ,v :expected-type ',type
                     :format-control "The value of ~S is ~S, which is not ~A."
                     :format-arguments (list ',place ,v ,(or type-string (format nil "of type ~S" type))))))
          (go ,again)))))

(defmacro ccase (keyplace &rest clauses)
  (let ((done (gensym "CCASE")) (again (gensym "AGAIN")) (v (gensym)))
    `(block ,done
       (tagbody
          ,again
          (let ((,v ,keyplace))
            (return-from ,done
              (case ,v
                ,@(mapcar (lambda (c) (if (member (car c) '(t otherwise)) (cons (list (car c)) (cdr c)) c))
                          clauses)
                (otherwise
                 (sys::%with-store-value-retry (,keyplace)
                   (sys::%case-failure ,v ',(sys::%case-keys clauses)))
                 (go ,again)))))))))

(defmacro ctypecase (keyplace &rest clauses)
  (let ((done (gensym "CTYPECASE")) (again (gensym "AGAIN")) (v (gensym)))
    `(block ,done
       (tagbody
          ,again
          (let ((,v ,keyplace))
            (return-from ,done
              (typecase ,v
                ,@clauses
                (otherwise
                 (sys::%with-store-value-retry (,keyplace)
                   (error 'type-error :datum ,v :expected-type '(or ,@(mapcar #'car clauses))))
                 (go ,again)))))))))

(define-condition print-not-readable (error)
  ((object :initarg :object :reader print-not-readable-object))
  (:report (lambda (condition stream)
             (let ((*print-readably* nil))
               (format stream "~S cannot be printed readably." (print-not-readable-object condition))))))
