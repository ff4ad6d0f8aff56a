#!/usr/bin/env bash
# Benchmarks mprof-lisp against CLISP's compiled code on the programs in this
# folder: each program is compiled by CLISP first (`clisp -c`, outside the
# timing), then the `.fas` is timed, whole process, beside `mprof-lisp FILE`.
# The two must print the same thing (whitespace aside).
#
# Usage: bench/lisp/clisp.sh [N] [PROGRAM.lisp ...]
#   N            repetitions per program and implementation, alternating (default 5)
#   MPROF_LISP   the mprof-lisp binary (default $CARGO_TARGET_DIR/release/mprof-lisp,
#                else target/release/mprof-lisp, built when missing)
#   CLISP        the CLISP binary (default: clisp; Debian package `clisp`)
#
# For each program it prints the median wall time, the median CPU time
# (user + system: stable on a loaded machine, where wall time is not), the
# median peak resident set size, the ratios ours/CLISP, and the geometric mean
# of each ratio column. Ratios below 1.0 mean mprof-lisp is faster/smaller.
# Runs alternate (ours, CLISP, ours, ...) so a change in the machine's load
# falls on both.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-5}
if [ $# -gt 0 ]; then shift; fi
ours=${MPROF_LISP:-${CARGO_TARGET_DIR:-$root/target}/release/mprof-lisp}
clisp=${CLISP:-clisp}
timer=/usr/bin/time

if [ -z "${MPROF_LISP:-}" ] && [ ! -x "$ours" ]; then
    (cd "$root" && cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp)
fi
if [ ! -x "$ours" ]; then
    echo "clisp.sh: no mprof-lisp binary at $ours (cargo build --release -p mprof-lisp-cli, or set MPROF_LISP)" >&2
    exit 2
fi
command -v "$clisp" >/dev/null || { echo "clisp.sh: CLISP not found (apt-get install clisp, or set CLISP)" >&2; exit 2; }
[ -x "$timer" ] || { echo "clisp.sh: $timer not found (apt-get install time)" >&2; exit 2; }

if [ $# -gt 0 ]; then programs=("$@"); else programs=("$here"/*.lisp); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of the numbers on standard input
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# sample NAME CMD...: one timed run, its "wall user sys rss" appended to $tmp/NAME.samples
sample() {
    local name=$1; shift
    "$timer" -f "%e %U %S %M" -o "$tmp/$name.time" "$@" > /dev/null 2>&1 || true
    tail -n 1 "$tmp/$name.time" >> "$tmp/$name.samples"
}

# medians NAME: writes the wall, cpu and rss medians to $tmp/NAME.{wall,cpu,rss}
medians() {
    local name=$1
    awk '{ print $1 }' "$tmp/$name.samples" | median > "$tmp/$name.wall"
    awk '{ print $2 + $3 }' "$tmp/$name.samples" | median > "$tmp/$name.cpu"
    awk '{ print $4 }' "$tmp/$name.samples" | median > "$tmp/$name.rss"
}

printf '%-12s %9s %9s %7s %9s %9s %7s %9s %9s %7s  %s\n' \
    program "wall us" "wall clisp" ratio "cpu us" "cpu clisp" ratio "rss us" "rss clisp" ratio output
rows="$tmp/rows"
: > "$rows"
for prog in "${programs[@]}"; do
    name=$(basename "$prog" .lisp)
    fas="$tmp/$name.fas"
    if ! "$clisp" -q -norc -c "$prog" -o "$fas" > "$tmp/$name.compile" 2>&1 || [ ! -f "$fas" ]; then
        echo "clisp.sh: CLISP could not compile $prog:" >&2
        cat "$tmp/$name.compile" >&2
        continue
    fi
    ours_out=$("$ours" "$prog" 2>&1) || true
    clisp_out=$("$clisp" -q -norc "$fas" 2>&1) || true
    if [ "$(echo $ours_out)" = "$(echo $clisp_out)" ]; then
        same=same
    else
        same=DIFFERS
        echo "$name: mprof-lisp printed: $(echo "$ours_out" | head -c 300)" >&2
        echo "$name: CLISP printed:      $(echo "$clisp_out" | head -c 300)" >&2
    fi
    : > "$tmp/$name.ours.samples"
    : > "$tmp/$name.clisp.samples"
    for _ in $(seq "$n"); do
        sample "$name.ours" "$ours" "$prog"
        sample "$name.clisp" "$clisp" -q -norc "$fas"
    done
    medians "$name.ours"
    medians "$name.clisp"
    ow=$(cat "$tmp/$name.ours.wall"); cw=$(cat "$tmp/$name.clisp.wall")
    oc=$(cat "$tmp/$name.ours.cpu"); cc=$(cat "$tmp/$name.clisp.cpu")
    orss=$(cat "$tmp/$name.ours.rss"); crss=$(cat "$tmp/$name.clisp.rss")
    awk -v p="$name" -v ow="$ow" -v cw="$cw" -v oc="$oc" -v cc="$cc" -v om="$orss" -v cm="$crss" -v s="$same" '
        function ratio(a, b) { return b > 0 ? a / b : 0 }
        BEGIN {
            printf "%-12s %8.2fs %8.2fs %7.2f %8.2fs %8.2fs %7.2f %7.1fMB %7.1fMB %7.2f  %s\n",
                p, ow, cw, ratio(ow, cw), oc, cc, ratio(oc, cc), om / 1024, cm / 1024, ratio(om, cm), s
        }'
    echo "$ow $cw $oc $cc $orss $crss" >> "$rows"
done
awk '
    function lg(a, b) { return (a > 0 && b > 0) ? log(a / b) : 0 }
    { w += lg($1, $2); c += lg($3, $4); m += lg($5, $6); k++ }
    END {
        if (k) printf "%-12s %9s %9s %7.2f %9s %9s %7.2f %9s %9s %7.2f\n",
            "geomean", "", "", exp(w / k), "", "", exp(c / k), "", "", exp(m / k)
    }' "$rows"
echo "($n runs each, alternating; medians; mprof-lisp: $ours; $("$clisp" --version | head -n 1))"
