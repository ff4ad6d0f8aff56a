#!/usr/bin/env bash
# Printing throughput of an mprof-lisp binary against a baseline binary, run
# side by side (alternating), as the median CPU time (user + system) of N
# runs of bench.lisp each, with standard output sent to /dev/null.
#
# Usage: bench/printer/run.sh BASELINE_BINARY [OURS_BINARY] [N]
#   OURS_BINARY defaults to target/release/mprof-lisp, N to 7.
# Prints each binary's median CPU seconds and the ratio ours/baseline
# (below 1.0: ours is faster). Both must print the same result.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base=${1:?usage: run.sh BASELINE_BINARY [OURS_BINARY] [N]}
ours=${2:-${CARGO_TARGET_DIR:-$root/target}/release/mprof-lisp}
n=${3:-7}
if [ $# -lt 2 ] && [ ! -x "$ours" ]; then
  (cd "$root" && cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp)
fi
timer=/usr/bin/time
[ -x "$timer" ] || { echo "run.sh: $timer not found (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for i in $(seq "$n"); do
    for which in base ours; do
        bin=$base; [ "$which" = ours ] && bin=$ours
        "$timer" -f '%U %S' -o "$tmp/t" "$bin" "$here/bench.lisp" > "$tmp/$which.out"
        awk '{ print $1 + $2 }' "$tmp/t" >> "$tmp/$which.cpu"
    done
done
head -2 "$tmp/base.out" > "$tmp/base.head"; head -2 "$tmp/ours.out" > "$tmp/ours.head"
cmp -s "$tmp/base.head" "$tmp/ours.head" || { echo "run.sh: the binaries print different results" >&2; exit 1; }
b=$(median < "$tmp/base.cpu"); o=$(median < "$tmp/ours.cpu")
printf 'baseline %.3f s  ours %.3f s  ratio %.2f  (median CPU of %d alternating runs)\n' "$b" "$o" "$(echo "$o / $b" | bc -l)" "$n"
