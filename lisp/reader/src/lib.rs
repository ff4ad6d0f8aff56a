//! Text to syntax for mprof-lisp.
