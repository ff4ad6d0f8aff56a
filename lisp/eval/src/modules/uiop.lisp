;;;; placeholder
