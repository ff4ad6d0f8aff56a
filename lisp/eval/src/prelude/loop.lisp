;;;; The prelude: loop (being written).
