;;;; The prelude: defstruct (being written).
