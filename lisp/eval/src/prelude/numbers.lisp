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

;; Every float is a double, so the long-float constants are the double ones (as in SBCL).
(defconstant most-positive-long-float most-positive-double-float)
(defconstant most-negative-long-float most-negative-double-float)
(defconstant least-positive-long-float least-positive-double-float)
(defconstant least-negative-long-float least-negative-double-float)
(defconstant long-float-epsilon double-float-epsilon)
(defconstant long-float-negative-epsilon double-float-negative-epsilon)

;;; Byte specifiers are conses (size . position), as in SBCL.
(defun byte (size position) (cons size position))
(defun byte-size (bytespec) (car bytespec))
(defun byte-position (bytespec) (cdr bytespec))
(defun sys::%byte-mask (bytespec)
  (ash (1- (ash 1 (byte-size bytespec))) (byte-position bytespec)))
(defun ldb (bytespec integer)
  (logand (ash integer (- (byte-position bytespec))) (1- (ash 1 (byte-size bytespec)))))
(defun ldb-test (bytespec integer) (not (zerop (ldb bytespec integer))))
(defun mask-field (bytespec integer) (logand integer (sys::%byte-mask bytespec)))
(defun dpb (newbyte bytespec integer)
  (let ((mask (sys::%byte-mask bytespec)))
    (logior (logand integer (lognot mask)) (logand (ash newbyte (byte-position bytespec)) mask))))
(defun deposit-field (newbyte bytespec integer)
  (let ((mask (sys::%byte-mask bytespec)))
    (logior (logand integer (lognot mask)) (logand newbyte mask))))

(defconstant boole-clr 0)
(defconstant boole-set 1)
(defconstant boole-1 2)
(defconstant boole-2 3)
(defconstant boole-c1 4)
(defconstant boole-c2 5)
(defconstant boole-and 6)
(defconstant boole-ior 7)
(defconstant boole-xor 8)
(defconstant boole-eqv 9)
(defconstant boole-nand 10)
(defconstant boole-nor 11)
(defconstant boole-andc1 12)
(defconstant boole-andc2 13)
(defconstant boole-orc1 14)
(defconstant boole-orc2 15)
(defun boole (op integer-1 integer-2)
  (case op
    (0 (logand integer-1 integer-2 0))
    (1 (logior integer-1 integer-2 -1))
    (2 (logior integer-1 (logand integer-2 0)))
    (3 (logior integer-2 (logand integer-1 0)))
    (4 (lognot (logior integer-1 (logand integer-2 0))))
    (5 (lognot (logior integer-2 (logand integer-1 0))))
    (6 (logand integer-1 integer-2))
    (7 (logior integer-1 integer-2))
    (8 (logxor integer-1 integer-2))
    (9 (logeqv integer-1 integer-2))
    (10 (lognand integer-1 integer-2))
    (11 (lognor integer-1 integer-2))
    (12 (logandc1 integer-1 integer-2))
    (13 (logandc2 integer-1 integer-2))
    (14 (logorc1 integer-1 integer-2))
    (15 (logorc2 integer-1 integer-2))
    (t (error 'type-error :datum op :expected-type '(integer 0 15)))))

;;; There are no complex numbers: a real is its own real part and conjugate.
(defun realpart (number) (+ number 0))
(defun imagpart (number) (* 0 number))
(defun conjugate (number) (+ number 0))
(defun phase (number)
  (if (minusp number) (float pi (if (floatp number) number 1d0)) (float 0 (if (floatp number) number 1d0))))

;;; All floats are doubles: the single- and short-float constants are the
;;; double-float ones (programs and test suites refer to them by name).
(defconstant most-positive-single-float most-positive-double-float)
(defconstant most-negative-single-float most-negative-double-float)
(defconstant least-positive-single-float least-positive-double-float)
(defconstant least-negative-single-float least-negative-double-float)
(defconstant least-positive-normalized-single-float least-positive-normalized-double-float)
(defconstant least-negative-normalized-single-float least-negative-normalized-double-float)
(defconstant single-float-epsilon double-float-epsilon)
(defconstant single-float-negative-epsilon double-float-negative-epsilon)
(defconstant most-positive-short-float most-positive-double-float)
(defconstant most-negative-short-float most-negative-double-float)
(defconstant least-positive-short-float least-positive-double-float)
(defconstant least-negative-short-float least-negative-double-float)
(defconstant least-positive-normalized-short-float least-positive-normalized-double-float)
(defconstant least-negative-normalized-short-float least-negative-normalized-double-float)
(defconstant short-float-epsilon double-float-epsilon)
(defconstant short-float-negative-epsilon double-float-negative-epsilon)
