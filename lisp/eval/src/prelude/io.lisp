;;;; The prelude: io (being written).
