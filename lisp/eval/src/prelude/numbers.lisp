;;;; The prelude: numbers. The numeric functions themselves are builtins
;;;; (builtins/numbers.rs); here are the constants, the floating-point
;;;; condition types SBCL signals beyond those made at start-up, the initial
;;;; random state, and the keyword parsing of PARSE-INTEGER.

(defconstant most-positive-fixnum 4611686018427387903)
(defconstant most-negative-fixnum -4611686018427387904)
(defconstant pi 3.141592653589793d0)

(defconstant most-positive-double-float 1.7976931348623157d308)
(defconstant most-negative-double-float -1.7976931348623157d308)
(defconstant least-positive-double-float 4.9406564584124654d-324)
(defconstant least-negative-double-float -4.9406564584124654d-324)
(defconstant least-positive-normalized-double-float 2.2250738585072014d-308)
(defconstant least-negative-normalized-double-float -2.2250738585072014d-308)
(defconstant double-float-epsilon 1.1102230246251568d-16)
(defconstant double-float-negative-epsilon 5.551115123125784d-17)

;; FLOATING-POINT-OVERFLOW and DIVISION-BY-ZERO are made at start-up.
(define-condition floating-point-invalid-operation (arithmetic-error) ())
(define-condition floating-point-underflow (arithmetic-error) ())
(define-condition floating-point-inexact (arithmetic-error) ())
(define-condition sys::simple-parse-error (simple-condition parse-error) ())

;; Deterministic at start-up, as SBCL's is: a program's random numbers are the
;; same from run to run unless it asks for (make-random-state t).
(defvar *random-state* (sys::%seeded-random-state 0))

(defun parse-integer (string &key (start 0) end (radix 10) junk-allowed)
  (sys::%parse-integer string start end radix junk-allowed))
