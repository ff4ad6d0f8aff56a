//! The mprof-lisp object model.
