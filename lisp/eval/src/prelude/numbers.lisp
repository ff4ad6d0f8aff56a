;;;; The prelude: numbers (being written).
