;;; NIL and T are symbols: they have property lists.
(setf (get nil 'a) 1)
(print (get nil 'a))
(setf (get t 'b) 2)
(print (get t 'b))
(print (symbol-plist nil))
(remprop nil 'a)
(print (get nil 'a 'gone))
(print (handler-case (get 3 'a) (type-error (e) (list :type-error (type-error-datum e)))))
