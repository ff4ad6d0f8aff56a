#!/usr/bin/env bash
# Time the sequence library's fast paths against its general paths.
# Usage: bench/sequences/run.sh [path/to/mprof-lisp]  (default: release build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/../../target}/release/mprof-lisp}
if [ $# -eq 0 ] && [ ! -x "$bin" ]; then
  (cd "$here/../.." && cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp)
fi
"$bin" "$here/bench.lisp"
