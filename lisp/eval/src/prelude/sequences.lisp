;;;; The prelude: sequences (being written).
