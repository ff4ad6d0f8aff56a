//! The mprof-lisp interpreter.
