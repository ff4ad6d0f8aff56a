#!/usr/bin/env bash
# Peak memory beside ECL and SBCL (issue 14's object-size goal): each program
# of bench/profile/memory runs REPS times per implementation, alternating; the
# median peak RSS (GNU time's %M) minus the median of the empty program's is
# what the program's data costs. mprof-lisp runs as built by default, with
# --profile, and built with the feature wide-conses (16-byte cons fields, the
# layout before compact conses became the default).
# Not a timed test. Usage: bench/profile/memory.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps=${1:-3}
for tool in ecl sbcl; do
  command -v "$tool" >/dev/null || { echo "memory.sh: $tool is not installed (apt-get install ecl sbcl)" >&2; exit 2; }
done
target=${BENCH_TARGET_DIR:-target}
cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp --target-dir "$target"
cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp --features wide-conses --target-dir "$target/wide"
mprof="$target/release/mprof-lisp"
wide="$target/wide/release/mprof-lisp"
peak() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run_impl() { # impl file
  case "$1" in
    mprof) peak "$mprof" "$2" ;;
    mprof-profiled) peak "$mprof" --profile --profile-out /tmp/mprof-memory-bench.out --report /dev/null "$2" ;;
    mprof-wide) peak "$wide" "$2" ;;
    ecl) peak ecl --norc --shell "$2" ;;
    sbcl) peak sbcl --dynamic-space-size 8GB --script "$2" ;;
  esac
}
impls=(ecl sbcl mprof mprof-profiled mprof-wide)
declare -A base
for i in "${impls[@]}"; do
  v=(); for _ in $(seq "$reps"); do v+=("$(run_impl "$i" bench/profile/memory/empty.lisp)"); done
  base[$i]=$(printf "%s\n" "${v[@]}" | median)
done
printf "%-12s %-16s %12s %12s %10s\n" program impl "peak KiB" "over empty" "/ ECL"
for f in bench/profile/memory/*.lisp; do
  name=$(basename "$f" .lisp); [ "$name" = empty ] && continue
  declare -A over=()
  for _ in $(seq "$reps"); do for i in "${impls[@]}"; do echo "$i $(run_impl "$i" "$f")"; done; done > /tmp/mprof-memory-bench.txt
  for i in "${impls[@]}"; do
    m=$(awk -v i="$i" '$1==i {print $2}' /tmp/mprof-memory-bench.txt | median)
    over[$i]=$((m - ${base[$i]}))
    printf "%-12s %-16s %12s %12s" "$name" "$i" "$m" "${over[$i]}"
    if [ -n "${over[ecl]:-}" ]; then awk -v a="${over[$i]}" -v b="${over[ecl]}" 'BEGIN{printf " %10.2f\n", a/b}'; else echo; fi
  done
done
