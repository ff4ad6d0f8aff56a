#!/usr/bin/env bash
# Execution-profile overhead, measured side by side (not a timed test): each
# program of bench/lisp runs plain, with --count (a counter per function entry,
# branch and body form) and with --time (a clock read per call and return that
# changes context), REPS times in alternation; the medians of user+system CPU
# time are compared. The target is a slowdown of at most 1.5x for each.
# Usage: bench/exec/run.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps=${1:-5}
target=${BENCH_TARGET_DIR:-target}
cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp --target-dir "$target"
bin="$target/release/mprof-lisp"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cpu() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1+$2}'; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-12s %8s %8s %8s %12s %12s\n" program plain count time count/plain time/plain
gc=0; gt=0; n=0
for f in bench/lisp/*.lisp; do
  p=(); c=(); t=()
  for _ in $(seq "$reps"); do
    p+=("$(cpu "$bin" "$f")")
    c+=("$(cpu "$bin" --count --summary-only --report /dev/null --profile-out "$out/c.mprof" "$f")")
    t+=("$(cpu "$bin" --time --report /dev/null --profile-out "$out/t.mprof" "$f")")
  done
  mp=$(printf "%s\n" "${p[@]}" | median); mc=$(printf "%s\n" "${c[@]}" | median); mt=$(printf "%s\n" "${t[@]}" | median)
  rc=$(awk -v a="$mc" -v b="$mp" 'BEGIN{printf "%.3f", a/b}')
  rt=$(awk -v a="$mt" -v b="$mp" 'BEGIN{printf "%.3f", a/b}')
  printf "%-12s %8s %8s %8s %12s %12s\n" "$(basename "$f" .lisp)" "$mp" "$mc" "$mt" "$rc" "$rt"
  gc=$(awk -v g="$gc" -v r="$rc" 'BEGIN{print g+log(r)}'); gt=$(awk -v g="$gt" -v r="$rt" 'BEGIN{print g+log(r)}'); n=$((n+1))
done
awk -v gc="$gc" -v gt="$gt" -v n="$n" 'BEGIN{printf "geometric mean: --count %.3f, --time %.3f\n", exp(gc/n), exp(gt/n)}'
