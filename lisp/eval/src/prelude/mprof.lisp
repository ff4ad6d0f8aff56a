;;;; The prelude: the MPROF package, the Lisp interface of the memory profiler.
;;;; (mprof:start) records every allocation from then on against the stack of
;;;; Lisp function names; (mprof:report) collects garbage (so "kept" means
;;;; still reachable) and prints the mprof tables.

(defun mprof::start (&key primitives-to-caller (memory t) time counts io)
  "Start recording allocations (unless :MEMORY NIL). With :PRIMITIVES-TO-CALLER T,
allocations made by builtins and library functions are charged to their Lisp
caller. :TIME T also measures time per call arc and summarizes input/output;
:COUNTS T counts executions of the forms of files loaded from now on; :IO T
summarizes input/output."
  (mprof::%start primitives-to-caller memory time counts (or io time)))

(defun mprof::report (&key (stream *standard-output*) tables exact merge-cycles
                           (path-depth 5) call-sites counts time io
                           (memory (not (or counts time io))))
  "Print the memory kept, allocation bin, direct allocation and allocation
call graph tables. :TABLES is a list of :kept (or :leak) :bins :direct :graph.
:TIME T prints the flat profile and call graph of the time profile, :COUNTS T
the call counts and the annotated listings, :IO T the input/output summary
(then the memory tables only with :MEMORY T)."
  (let ((tables (if (and tables (listp tables))
                    (mapcar (lambda (x) (if (or (eq x :kept) (eq x 'kept)) :leak x)) tables)
                    tables)))
    (write-string (mprof::%report-text tables exact merge-cycles path-depth call-sites
                                       memory time counts io)
                  stream))
  (values))

(defun mprof::write-profile (&optional (path "mprof.out"))
  "Write the profile file (readable by `mprof report`)."
  (let ((r (mprof::%write-profile path)))
    (if (stringp r) (error "cannot write the profile to ~a: ~a" path r) path)))

(defmacro mprof::with-profiling ((&rest options) &body body)
  "Profile BODY: start, run, stop (even on a non-local exit)."
  ;; One form, not a PROGN: at top level a PROGN's forms are compiled one by one,
  ;; and the compilation of the body would be recorded after START.
  `(unwind-protect (progn (mprof::start ,@options) ,@body)
     (mprof::stop)))

(sys::%export-package-symbols "MPROF")
