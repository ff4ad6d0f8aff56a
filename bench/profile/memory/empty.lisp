;; The baseline: an implementation's peak with nothing allocated.
(print 0)
