//! Exports: folded stacks, flame-graph SVG, JSON and pprof.
