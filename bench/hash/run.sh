#!/usr/bin/env bash
# Hash table, array and stream workloads: mprof-lisp's time over SBCL's for
# each (a ratio, so less dependent on the machine than absolute times).
# SBCL's clock is coarse (a few milliseconds), so no ratio is given when its
# time is under 20 ms. Usage: bench/hash/run.sh [path/to/mprof-lisp]
# (default: the release build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/../../target}/release/mprof-lisp}
if [ $# -eq 0 ] && [ ! -x "$bin" ]; then
  (cd "$here/../.." && cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp)
fi
ours=$("$bin" "$here/bench.lisp")
theirs=$(sbcl --noinform --non-interactive --no-sysinit --no-userinit --load "$here/bench.lisp" 2>/dev/null)
printf "%-24s %12s %12s %8s\n" workload mprof-us sbcl-us ratio
join <(echo "$ours" | sort) <(echo "$theirs" | sort) |
  awk '{ if ($3 >= 20000) printf "%-24s %12d %12d %8.1f\n", $1, $2, $3, $2 / $3;
         else printf "%-24s %12d %12d %8s\n", $1, $2, $3, "n/a" }'
