//! libmprof.
