#!/usr/bin/env bash
# Compile-time scaling (issue 12), measured side by side (not a timed test):
# a generated program defines one function whose body holds N `when` forms
# (N macro calls, each expanding to IF) and calls it once; it runs under
# mprof-lisp and under SBCL (`--script`, which compiles each top-level form),
# REPS times in alternation, for N = 500, 2,000 and 8,000. Reported: medians
# of user+system CPU seconds, the time per `when` after subtracting the run
# of an empty program (start-up: mprof-lisp compiles its prelude), and the
# ratio of that per-form time at N to that at 500, which stays near 1 when
# compilation is linear (it was ~4x per doubling when every expansion
# restarted the whole top-level form).
# Then the same for D macro calls nested in one another (D nested `when`s),
# D = 500, 2,000 and 8,000.
# Usage: bench/compile/run.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps=${1:-3}
# SBCL needs minutes for the largest function: one run each unless asked.
sbcl_reps=${SBCL_REPS:-1}
target=${BENCH_TARGET_DIR:-target}
cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp --target-dir "$target"
bin="$target/release/mprof-lisp"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# CPU seconds (user+system) of one run, or "failed" when it exits non-zero
# (SBCL gives up on the largest function: heap exhaustion in its compiler).
cpu() {
  python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (u.ru_utime + u.ru_stime) if r.returncode == 0 else "failed")' "$@"
}
median() { sort -g | awk '/failed/ {f=1} {a[NR]=$1} END {if (f) print "failed"; else print a[int((NR+1)/2)]}'; }
gen() { # N file
  {
    echo "(defvar *hits* 0)"
    echo "(defun many-whens (x)"
    for i in $(seq "$1"); do echo "  (when (= x $i) (setq *hits* (+ *hits* $i)))"; done
    echo "  *hits*)"
    echo "(print (many-whens 7))"
  } > "$2"
}
echo '(print 7)' > "$out/empty.lisp"
have_sbcl=$(command -v sbcl || true)
base_m=(); base_s=()
for _ in $(seq "$reps"); do
  base_m+=("$(cpu "$bin" "$out/empty.lisp")")
  if [ -n "$have_sbcl" ]; then base_s+=("$(cpu sbcl --script "$out/empty.lisp")"); fi
done
bm=$(printf "%s\n" "${base_m[@]}" | median)
bs=$( [ -n "$have_sbcl" ] && printf "%s\n" "${base_s[@]}" | median || echo 0)
printf "start-up: mprof-lisp %ss, sbcl %ss\n" "$bm" "$bs"
printf "%6s %10s %10s %14s %14s %10s\n" N mprof-lisp sbcl "us/when mprof" "us/when sbcl" "mprof vs N=500"
first=""
for n in 500 2000 8000 32000; do
  gen "$n" "$out/w$n.lisp"
  m=(); s=()
  for i in $(seq "$reps"); do
    m+=("$(cpu "$bin" "$out/w$n.lisp")")
    # SBCL already fails at 8,000; 32,000 is for mprof-lisp's scaling only.
    if [ -n "$have_sbcl" ] && [ "$i" -le "$sbcl_reps" ] && [ "$n" -le 8000 ]; then s+=("$(cpu sbcl --script "$out/w$n.lisp")"); fi
  done
  mm=$(printf "%s\n" "${m[@]}" | median)
  ms=$( [ ${#s[@]} -gt 0 ] && printf "%s\n" "${s[@]}" | median || echo "-")
  pm=$(awk -v t="$mm" -v b="$bm" -v n="$n" 'BEGIN{x=(t-b)/n*1e6; if (x<0) x=0; printf "%.1f", x}')
  ps=$(awk -v t="$ms" -v b="$bs" -v n="$n" 'BEGIN{if (t=="failed" || t=="-") {print "-"; exit} x=(t-b)/n*1e6; if (x<0) x=0; printf "%.1f", x}')
  [ -z "$first" ] && first=$pm
  rel=$(awk -v a="$pm" -v b="$first" 'BEGIN{ if (b>0) printf "%.2f", a/b; else print "-"}')
  printf "%6s %10s %10s %14s %14s %10s\n" "$n" "$mm" "$ms" "$pm" "$ps" "$rel"
done

# Macro calls nested inside macro calls' expansions: D nested `when`s. Each
# expansion is searched for the calls inside it in its call's scope (it used
# to take one pass over the whole form per level: quadratic in D).
echo
printf "%6s %10s %10s %14s %14s\n" depth mprof-lisp sbcl "us/level mprof" "us/level sbcl"
for d in 500 2000 8000; do
  python3 -c "import sys; d=int(sys.argv[1]); open(sys.argv[2],'w').write('(defun nested (x) ' + '(when (> x 0) '*d + 'x' + ')'*d + ')\n(print (nested 7))\n')" "$d" "$out/n$d.lisp"
  m=(); s=()
  for i in $(seq "$reps"); do
    m+=("$(cpu "$bin" "$out/n$d.lisp")")
    if [ -n "$have_sbcl" ] && [ "$i" -le "$sbcl_reps" ]; then s+=("$(cpu sbcl --control-stack-size 200MB --script "$out/n$d.lisp")"); fi
  done
  mm=$(printf "%s\n" "${m[@]}" | median)
  ms=$( [ ${#s[@]} -gt 0 ] && printf "%s\n" "${s[@]}" | median || echo "-")
  pm=$(awk -v t="$mm" -v b="$bm" -v n="$d" 'BEGIN{x=(t-b)/n*1e6; if (x<0) x=0; printf "%.1f", x}')
  ps=$(awk -v t="$ms" -v b="$bs" -v n="$d" 'BEGIN{if (t=="failed" || t=="-") {print "-"; exit} x=(t-b)/n*1e6; if (x<0) x=0; printf "%.1f", x}')
  printf "%6s %10s %10s %14s %14s\n" "$d" "$mm" "$ms" "$pm" "$ps"
done
