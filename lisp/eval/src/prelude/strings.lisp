;;;; The prelude: strings (being written).
