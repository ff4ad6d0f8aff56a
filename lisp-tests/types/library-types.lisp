;;; Types libraries test: simple strings and vectors are not adjustable or fill-pointered,
;;; COERCE to a specialized vector type, SUBTYPEP of LIST against its union.
(let ((s (make-array 3 :element-type 'character :fill-pointer 2 :adjustable t :initial-contents "abc")))
  (print (list (typep s 'simple-string) (simple-string-p s) (eq s (coerce s 'simple-string))
               (coerce s 'simple-string) (typep (coerce s 'simple-string) 'simple-string))))
(print (array-element-type (coerce '(1 2 3) '(vector fixnum))))
(print (coerce '(1 2 3) '(vector fixnum)))
(print (array-element-type (coerce #(1 2) '(simple-array (unsigned-byte 8) (*)))))
(print (coerce "abc" 'simple-string))
(print (let ((v (make-array 2 :adjustable t :initial-contents '(a b)))) (list (typep v 'simple-vector) (typep (coerce v 'simple-vector) 'simple-vector))))
(print (typep (make-array 2 :fill-pointer 1) 'simple-array))
(print (multiple-value-list (subtypep 'list '(or null cons))))
(print (multiple-value-list (subtypep 'null '(and symbol list))))
(print (multiple-value-list (subtypep '(and symbol list) 'null)))
