;;;; trivial-gray-streams for mprof-lisp: the package TRIVIAL-GRAY-STREAMS with
;;;; the exports of the portable library (the nine FUNDAMENTAL-* classes, the
;;;; nineteen Gray generic functions, its own STREAM-READ-SEQUENCE,
;;;; STREAM-WRITE-SEQUENCE and STREAM-FILE-POSITION, and the deprecated
;;;; TRIVIAL-GRAY-STREAM-MIXIN), written for this implementation's Gray streams
;;;; (the MPROF-GRAY package, prelude/gray-streams.lisp), as the library does for
;;;; each implementation it supports.
;;;;
;;;; As in the library: the generic functions are MPROF-GRAY's own (imported);
;;;; the classes are this package's, subclasses of MPROF-GRAY's, so that the
;;;; methods below bridge MPROF-GRAY's STREAM-READ-SEQUENCE (SBCL's lambda list:
;;;; stream sequence &optional start end) and STREAM-FILE-POSITION (stream
;;;; &optional position) to this package's (stream sequence start end &key) and
;;;; (stream) / (setf (stream-file-position stream) position). A method that
;;;; returns the symbol FALLBACK hands the call to MPROF-GRAY's default.

(defpackage "IMPL-SPECIFIC-GRAY"
  (:use "COMMON-LISP")
  (:import-from "MPROF-GRAY"
                "FUNDAMENTAL-STREAM" "FUNDAMENTAL-INPUT-STREAM" "FUNDAMENTAL-OUTPUT-STREAM"
                "FUNDAMENTAL-CHARACTER-STREAM" "FUNDAMENTAL-BINARY-STREAM"
                "FUNDAMENTAL-CHARACTER-INPUT-STREAM" "FUNDAMENTAL-CHARACTER-OUTPUT-STREAM"
                "FUNDAMENTAL-BINARY-INPUT-STREAM" "FUNDAMENTAL-BINARY-OUTPUT-STREAM"
                "STREAM-READ-CHAR" "STREAM-UNREAD-CHAR" "STREAM-READ-CHAR-NO-HANG"
                "STREAM-PEEK-CHAR" "STREAM-LISTEN" "STREAM-READ-LINE" "STREAM-CLEAR-INPUT"
                "STREAM-WRITE-CHAR" "STREAM-LINE-COLUMN" "STREAM-START-LINE-P"
                "STREAM-WRITE-STRING" "STREAM-TERPRI" "STREAM-FRESH-LINE"
                "STREAM-FINISH-OUTPUT" "STREAM-FORCE-OUTPUT" "STREAM-CLEAR-OUTPUT"
                "STREAM-ADVANCE-TO-COLUMN" "STREAM-READ-BYTE" "STREAM-WRITE-BYTE")
  (:export "FUNDAMENTAL-STREAM" "FUNDAMENTAL-INPUT-STREAM" "FUNDAMENTAL-OUTPUT-STREAM"
           "FUNDAMENTAL-CHARACTER-STREAM" "FUNDAMENTAL-BINARY-STREAM"
           "FUNDAMENTAL-CHARACTER-INPUT-STREAM" "FUNDAMENTAL-CHARACTER-OUTPUT-STREAM"
           "FUNDAMENTAL-BINARY-INPUT-STREAM" "FUNDAMENTAL-BINARY-OUTPUT-STREAM"
           "STREAM-READ-CHAR" "STREAM-UNREAD-CHAR" "STREAM-READ-CHAR-NO-HANG"
           "STREAM-PEEK-CHAR" "STREAM-LISTEN" "STREAM-READ-LINE" "STREAM-CLEAR-INPUT"
           "STREAM-WRITE-CHAR" "STREAM-LINE-COLUMN" "STREAM-START-LINE-P"
           "STREAM-WRITE-STRING" "STREAM-TERPRI" "STREAM-FRESH-LINE"
           "STREAM-FINISH-OUTPUT" "STREAM-FORCE-OUTPUT" "STREAM-CLEAR-OUTPUT"
           "STREAM-ADVANCE-TO-COLUMN" "STREAM-READ-BYTE" "STREAM-WRITE-BYTE"))

(defpackage "TRIVIAL-GRAY-STREAMS"
  (:use "COMMON-LISP")
  (:import-from "IMPL-SPECIFIC-GRAY"
                "STREAM-READ-CHAR" "STREAM-UNREAD-CHAR" "STREAM-READ-CHAR-NO-HANG"
                "STREAM-PEEK-CHAR" "STREAM-LISTEN" "STREAM-READ-LINE" "STREAM-CLEAR-INPUT"
                "STREAM-WRITE-CHAR" "STREAM-LINE-COLUMN" "STREAM-START-LINE-P"
                "STREAM-WRITE-STRING" "STREAM-TERPRI" "STREAM-FRESH-LINE"
                "STREAM-FINISH-OUTPUT" "STREAM-FORCE-OUTPUT" "STREAM-CLEAR-OUTPUT"
                "STREAM-ADVANCE-TO-COLUMN" "STREAM-READ-BYTE" "STREAM-WRITE-BYTE")
  (:export "FUNDAMENTAL-STREAM" "FUNDAMENTAL-INPUT-STREAM" "FUNDAMENTAL-OUTPUT-STREAM"
           "FUNDAMENTAL-CHARACTER-STREAM" "FUNDAMENTAL-BINARY-STREAM"
           "FUNDAMENTAL-CHARACTER-INPUT-STREAM" "FUNDAMENTAL-CHARACTER-OUTPUT-STREAM"
           "FUNDAMENTAL-BINARY-INPUT-STREAM" "FUNDAMENTAL-BINARY-OUTPUT-STREAM"
           "STREAM-READ-CHAR" "STREAM-UNREAD-CHAR" "STREAM-READ-CHAR-NO-HANG"
           "STREAM-PEEK-CHAR" "STREAM-LISTEN" "STREAM-READ-LINE" "STREAM-CLEAR-INPUT"
           "STREAM-WRITE-CHAR" "STREAM-LINE-COLUMN" "STREAM-START-LINE-P"
           "STREAM-WRITE-STRING" "STREAM-TERPRI" "STREAM-FRESH-LINE"
           "STREAM-FINISH-OUTPUT" "STREAM-FORCE-OUTPUT" "STREAM-CLEAR-OUTPUT"
           "STREAM-ADVANCE-TO-COLUMN" "STREAM-READ-BYTE" "STREAM-WRITE-BYTE"
           "STREAM-READ-SEQUENCE" "STREAM-WRITE-SEQUENCE" "STREAM-FILE-POSITION"
           "TRIVIAL-GRAY-STREAM-MIXIN"))

(in-package "TRIVIAL-GRAY-STREAMS")

(defclass fundamental-stream (impl-specific-gray:fundamental-stream) ())
(defclass fundamental-input-stream
    (fundamental-stream impl-specific-gray:fundamental-input-stream) ())
(defclass fundamental-output-stream
    (fundamental-stream impl-specific-gray:fundamental-output-stream) ())
(defclass fundamental-character-stream
    (fundamental-stream impl-specific-gray:fundamental-character-stream) ())
(defclass fundamental-binary-stream
    (fundamental-stream impl-specific-gray:fundamental-binary-stream) ())
(defclass fundamental-character-input-stream
    (fundamental-input-stream fundamental-character-stream
     impl-specific-gray:fundamental-character-input-stream) ())
(defclass fundamental-character-output-stream
    (fundamental-output-stream fundamental-character-stream
     impl-specific-gray:fundamental-character-output-stream) ())
(defclass fundamental-binary-input-stream
    (fundamental-input-stream fundamental-binary-stream
     impl-specific-gray:fundamental-binary-input-stream) ())
(defclass fundamental-binary-output-stream
    (fundamental-output-stream fundamental-binary-stream
     impl-specific-gray:fundamental-binary-output-stream) ())

;;; The portable sequence and position protocol.

(defgeneric stream-read-sequence (stream sequence start end &key &allow-other-keys))
(defgeneric stream-write-sequence (stream sequence start end &key &allow-other-keys))
(defgeneric stream-file-position (stream))
(defgeneric (setf stream-file-position) (newval stream))

;; No method of a subclass: MPROF-GRAY's default does the work.
(defmethod stream-read-sequence ((stream fundamental-input-stream) sequence start end &key)
  (declare (ignore sequence start end))
  'fallback)
(defmethod stream-write-sequence ((stream fundamental-output-stream) sequence start end &key)
  (declare (ignore sequence start end))
  'fallback)

(defmethod stream-terpri ((stream fundamental-output-stream))
  (write-char #\Newline stream))

;; On T, not only on this package's streams: flexi-streams asks any stream.
(defmethod stream-file-position ((stream t))
  nil)
(defmethod (setf stream-file-position) (newval (stream t))
  (declare (ignore newval))
  nil)

;;; The bridges from MPROF-GRAY's generic functions, which the CL functions call.

(defmethod mprof-gray:stream-read-sequence ((stream fundamental-input-stream) sequence &optional start end)
  (let ((result (stream-read-sequence stream sequence (or start 0) (or end (length sequence)))))
    (if (eq result 'fallback) (call-next-method) result)))

(defmethod mprof-gray:stream-write-sequence ((stream fundamental-output-stream) sequence &optional start end)
  (let ((result (stream-write-sequence stream sequence (or start 0) (or end (length sequence)))))
    (if (eq result 'fallback) (call-next-method) result)))

(defmethod mprof-gray:stream-file-position ((stream fundamental-stream) &optional position)
  (if position
      (setf (stream-file-position stream) position)
      (stream-file-position stream)))

(defmethod mprof-gray:stream-line-length ((stream fundamental-stream))
  80)

;; Deprecated: the library's old mixin, now a class with no behaviour.
(defclass trivial-gray-stream-mixin () ())

