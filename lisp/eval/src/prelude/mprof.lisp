;;;; The prelude: mprof (being written).
