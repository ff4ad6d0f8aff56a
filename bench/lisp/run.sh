#!/usr/bin/env bash
# Benchmarks mprof-lisp against ECL's bytecode interpreter on the programs in
# this folder (portable Common Lisp; each prints a result, and the two
# implementations must print the same thing).
#
# Usage: bench/lisp/run.sh [N] [PROGRAM.lisp ...]
#   N            repetitions per program and implementation (default 5)
#   MPROF_LISP   the mprof-lisp binary (default $CARGO_TARGET_DIR/release/mprof-lisp,
#                else target/release/mprof-lisp, built when missing)
#   ECL          the ECL binary (default: ecl), run as `ecl --norc --shell FILE`,
#                which loads the file with ECL's bytecode compiler
#
# For each program it prints the median wall time, the median CPU time
# (user + system: stable on a loaded machine, where wall time is not), the
# median peak resident set size, the ratios ours/ECL, and the geometric mean
# of each ratio column. Ratios below 1.0 mean mprof-lisp is faster/smaller.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-5}
if [ $# -gt 0 ]; then shift; fi
ours=${MPROF_LISP:-${CARGO_TARGET_DIR:-$root/target}/release/mprof-lisp}
ecl=${ECL:-ecl}
timer=/usr/bin/time

if [ -z "${MPROF_LISP:-}" ] && [ ! -x "$ours" ]; then
    (cd "$root" && cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp)
fi
if [ ! -x "$ours" ]; then
    echo "run.sh: no mprof-lisp binary at $ours (cargo build --release -p mprof-lisp-cli, or set MPROF_LISP)" >&2
    exit 2
fi
command -v "$ecl" >/dev/null || { echo "run.sh: ECL not found (apt-get install ecl, or set ECL)" >&2; exit 2; }
[ -x "$timer" ] || { echo "run.sh: $timer not found (apt-get install time)" >&2; exit 2; }

if [ $# -gt 0 ]; then programs=("$@"); else programs=("$here"/*.lisp); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of the numbers on standard input
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME CMD...: runs N times; writes wall, cpu and rss medians to $tmp/NAME.{wall,cpu,rss}
measure() {
    local name=$1; shift
    : > "$tmp/$name.samples"
    for _ in $(seq "$n"); do
        "$timer" -f "%e %U %S %M" -o "$tmp/$name.time" "$@" > /dev/null 2>&1 || true
        tail -n 1 "$tmp/$name.time" >> "$tmp/$name.samples"
    done
    awk '{ print $1 }' "$tmp/$name.samples" | median > "$tmp/$name.wall"
    awk '{ print $2 + $3 }' "$tmp/$name.samples" | median > "$tmp/$name.cpu"
    awk '{ print $4 }' "$tmp/$name.samples" | median > "$tmp/$name.rss"
}

printf '%-12s %9s %9s %7s %9s %9s %7s %9s %9s %7s  %s\n' \
    program "wall us" "wall ecl" ratio "cpu us" "cpu ecl" ratio "rss us" "rss ecl" ratio output
rows="$tmp/rows"
: > "$rows"
for prog in "${programs[@]}"; do
    name=$(basename "$prog" .lisp)
    ours_out=$("$ours" "$prog" 2>&1) || true
    ecl_out=$("$ecl" --norc --shell "$prog" 2>&1) || true
    if [ "$(echo "$ours_out" | tr -s ' \n' ' ')" = "$(echo "$ecl_out" | tr -s ' \n' ' ')" ]; then
        same=same
    else
        same=DIFFERS
        echo "$name: mprof-lisp printed: $(echo "$ours_out" | head -c 300)" >&2
        echo "$name: ECL printed:        $(echo "$ecl_out" | head -c 300)" >&2
    fi
    measure "$name.ours" "$ours" "$prog"
    measure "$name.ecl" "$ecl" --norc --shell "$prog"
    ow=$(cat "$tmp/$name.ours.wall"); ew=$(cat "$tmp/$name.ecl.wall")
    oc=$(cat "$tmp/$name.ours.cpu"); ec=$(cat "$tmp/$name.ecl.cpu")
    orss=$(cat "$tmp/$name.ours.rss"); erss=$(cat "$tmp/$name.ecl.rss")
    awk -v p="$name" -v ow="$ow" -v ew="$ew" -v oc="$oc" -v ec="$ec" -v om="$orss" -v em="$erss" -v s="$same" '
        function ratio(a, b) { return b > 0 ? a / b : 0 }
        BEGIN {
            printf "%-12s %8.2fs %8.2fs %7.2f %8.2fs %8.2fs %7.2f %7.1fMB %7.1fMB %7.2f  %s\n",
                p, ow, ew, ratio(ow, ew), oc, ec, ratio(oc, ec), om / 1024, em / 1024, ratio(om, em), s
        }'
    echo "$ow $ew $oc $ec $orss $erss" >> "$rows"
done
awk '
    function lg(a, b) { return (a > 0 && b > 0) ? log(a / b) : 0 }
    { w += lg($1, $2); c += lg($3, $4); m += lg($5, $6); k++ }
    END {
        if (k) printf "%-12s %9s %9s %7.2f %9s %9s %7.2f %9s %9s %7.2f\n",
            "geomean", "", "", exp(w / k), "", "", exp(c / k), "", "", exp(m / k)
    }' "$rows"
echo "($n runs each; medians; mprof-lisp: $ours; $("$ecl" --version | head -n 1))"
