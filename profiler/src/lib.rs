//! The mprof reduction engine.
