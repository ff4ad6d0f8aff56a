#!/usr/bin/env bash
# Regenerate the expected output (.out) of Lisp test programs with SBCL, with
# doubles as the default float format and the pretty printer off, as the
# interpreter prints. Usage: lisp-tests/sbcl-expected.sh FILE.lisp...
# (Needs Debian's sbcl; CI does not run this: the .out files are committed.)
set -euo pipefail
for f in "$@"; do
  sbcl --noinform --control-stack-size 200MB --non-interactive --no-sysinit --no-userinit \
    --eval '(setf *read-default-float-format* (quote double-float) *print-pretty* nil)' \
    --load "$f" > "${f%.lisp}.out" 2>/dev/null
done
