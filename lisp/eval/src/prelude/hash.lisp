;;;; The prelude: hash (being written).
