#!/usr/bin/env bash
# Exact instruction counts of two mprof-lisp binaries side by side (valgrind's
# cachegrind: the same count for the same binary and input whatever else the
# machine is doing), for changes whose effect on speed is smaller than the
# noise of CPU times on a shared machine.
#
# Usage: bench/lisp/instructions.sh BASE NEW
#   BASE, NEW   two mprof-lisp binaries (e.g. a release build of the commit
#               before a change, and of the change)
# For each program of bench/lisp (run plainly) and of bench/profile (run with
# --profile, the profiler's hot paths), prints both counts and NEW/BASE, then
# the geometric mean of the ratios. Both binaries must print the same output.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base=${1:?usage: instructions.sh BASE NEW}
new=${2:?usage: instructions.sh BASE NEW}
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() { # binary, output file, args...
    local bin=$1 out=$2; shift 2
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/cg" "$bin" "$@" >"$out" 2>"$tmp/err" \
        || { cat "$tmp/err" >&2; return 1; }
    grep -E '^summary:' "$tmp/cg" | awk '{print $2}'
}

printf "%-28s %16s %16s %8s\n" program base new new/base
sum=0; n=0
run() { # label, args...
    local label=$1; shift
    local b c
    b=$(count "$base" "$tmp/base.out" "$@")
    c=$(count "$new" "$tmp/new.out" "$@")
    if ! cmp -s "$tmp/base.out" "$tmp/new.out"; then
        echo "instructions.sh: $label prints differently under the two binaries" >&2
        exit 1
    fi
    local r
    r=$(awk -v b="$b" -v c="$c" 'BEGIN {printf "%.4f", c / b}')
    printf "%-28s %16s %16s %8s\n" "$label" "$b" "$c" "$r"
    sum=$(awk -v s="$sum" -v r="$r" 'BEGIN {print s + log(r)}')
    n=$((n + 1))
}
for f in "$here"/*.lisp; do
    run "lisp/$(basename "$f")" "$f"
done
for f in "$root"/bench/profile/*.lisp; do
    run "profile/$(basename "$f") --profile" --profile --profile-out "$tmp/p.out" --report /dev/null "$f"
done
awk -v s="$sum" -v n="$n" 'BEGIN {printf "geometric mean of new/base over %d runs: %.4f\n", n, exp(s / n)}'
