#!/usr/bin/env bash
# Profiler overhead, measured side by side (not a timed test):
#  - funnel cost: the normal build (profiling off) against a build whose
#    alloc_object has no hook check at all (feature no-profiling-hook);
#  - profiling overhead: `mprof-lisp --profile` against a plain run.
# Each program runs REPS times in alternation; the medians of user+system CPU
# time are compared (CPU time is less disturbed by a loaded machine than wall
# time). Then bench/profile/memory.sh reports peak memory beside ECL's and
# SBCL's (MEMORY_REPS runs each, default 3; MEMORY_REPS=0 skips it).
# INSTRUCTIONS=1 adds exact instruction counts of both runs (valgrind's cachegrind).
# Usage: bench/profile/run.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps=${1:-5}
target=${BENCH_TARGET_DIR:-target}
cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp --target-dir "$target"
cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp --features no-profiling-hook --target-dir "$target/baseline"
plain="$target/release/mprof-lisp"
base="$target/baseline/release/mprof-lisp"
cpu() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1+$2}'; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-14s %9s %9s %9s %10s %10s\n" program baseline plain profiled funnel profiled/plain
gf=0; gp=0; n=0
for f in bench/profile/*.lisp; do
  b=(); p=(); q=()
  for _ in $(seq "$reps"); do
    b+=("$(cpu "$base" "$f")")
    p+=("$(cpu "$plain" "$f")")
    q+=("$(cpu "$plain" --profile --profile-out /tmp/mprof-bench.out --report /dev/null "$f")")
  done
  mb=$(printf "%s\n" "${b[@]}" | median); mp=$(printf "%s\n" "${p[@]}" | median); mq=$(printf "%s\n" "${q[@]}" | median)
  rf=$(awk -v a="$mp" -v b="$mb" 'BEGIN{printf "%.3f", a/b}')
  rp=$(awk -v a="$mq" -v b="$mp" 'BEGIN{printf "%.3f", a/b}')
  printf "%-14s %9s %9s %9s %10s %10s\n" "$(basename "$f" .lisp)" "$mb" "$mp" "$mq" "$rf" "$rp"
  gf=$(awk -v g="$gf" -v r="$rf" 'BEGIN{print g+log(r)}'); gp=$(awk -v g="$gp" -v r="$rp" 'BEGIN{print g+log(r)}'); n=$((n+1))
done
awk -v gf="$gf" -v gp="$gp" -v n="$n" 'BEGIN{printf "geometric mean: funnel cost %.3f, profiling overhead %.3f\n", exp(gf/n), exp(gp/n)}'
# Instruction counts (INSTRUCTIONS=1; needs valgrind): exact where CPU time on a
# loaded machine is not, so a change to the recording paths can be judged by them.
# The baseline and plain runs of each program go side by side, one per core,
# then the profiled run.
if [ "${INSTRUCTIONS:-0}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "run.sh: INSTRUCTIONS=1 needs valgrind" >&2; exit 2; }
  echo
  printf "%-14s %14s %14s %14s %8s %14s\n" program "baseline instr" "plain instr" "profiled instr" funnel profiled/plain
  instr() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null | awk '/I *refs:/ {gsub(",", "", $NF); print $NF}'; }
  for f in bench/profile/*.lisp; do
    name=$(basename "$f" .lisp)
    instr "$base" "$f" > "/tmp/mprof-bench-$name.baseline" &
    instr "$plain" "$f" > "/tmp/mprof-bench-$name.plain"
    wait
    instr "$plain" --profile --profile-out "/tmp/mprof-bench-$name.out" --report /dev/null "$f" > "/tmp/mprof-bench-$name.profiled"
    a=$(cat "/tmp/mprof-bench-$name.baseline"); b=$(cat "/tmp/mprof-bench-$name.plain"); c=$(cat "/tmp/mprof-bench-$name.profiled")
    printf "%-14s %14s %14s %14s %8s %14s\n" "$name" "$a" "$b" "$c" \
      "$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", b/a}')" "$(awk -v b="$b" -v c="$c" 'BEGIN{printf "%.3f", c/b}')"
  done
fi
mem_reps=${MEMORY_REPS:-3}
if [ "$mem_reps" -gt 0 ]; then
  echo
  bash bench/profile/memory.sh "$mem_reps"
fi
