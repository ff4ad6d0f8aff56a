#!/usr/bin/env bash
# Benchmarks mprof-lisp against a peer Common Lisp on the programs in this
# folder (portable Common Lisp; each prints a result, and the two
# implementations must print the same thing, whitespace aside).
#
# Usage: bench/lisp/run.sh [N] [PROGRAM.lisp ...]
#   N            repetitions per program and implementation, alternating (default 5)
#   PEER         ecl (default): ECL's bytecode interpreter, `ecl --norc --shell FILE`;
#                clisp: CLISP's compiled code: each program is compiled by
#                `clisp -c` first (outside the timing), then the `.fas` is timed
#   MPROF_LISP   the mprof-lisp binary (default $CARGO_TARGET_DIR/release/mprof-lisp,
#                else target/release/mprof-lisp, built when missing)
#   ECL, CLISP   the peer's binary (default: ecl, clisp; Debian packages of those names)
#
# For each program it prints the median wall time, the median CPU time
# (user + system: stable on a loaded machine, where wall time is not), the
# median peak resident set size, the ratios ours/peer, and the geometric mean
# of each ratio column. Ratios below 1.0 mean mprof-lisp is faster/smaller.
# Runs alternate (ours, peer, ours, ...) so a change in the machine's load
# falls on both.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-5}
if [ $# -gt 0 ]; then shift; fi
ours=${MPROF_LISP:-${CARGO_TARGET_DIR:-$root/target}/release/mprof-lisp}
peer=${PEER:-ecl}
timer=/usr/bin/time
case "$peer" in
    ecl) peer_bin=${ECL:-ecl} ;;
    clisp) peer_bin=${CLISP:-clisp} ;;
    *) echo "run.sh: PEER must be ecl or clisp, not '$peer'" >&2; exit 2 ;;
esac

if [ -z "${MPROF_LISP:-}" ] && [ ! -x "$ours" ]; then
    (cd "$root" && cargo build --release -q -p mprof-lisp-cli --bin mprof-lisp)
fi
if [ ! -x "$ours" ]; then
    echo "run.sh: no mprof-lisp binary at $ours (cargo build --release -p mprof-lisp-cli, or set MPROF_LISP)" >&2
    exit 2
fi
command -v "$peer_bin" >/dev/null || { echo "run.sh: $peer not found (apt-get install $peer, or set ${peer^^})" >&2; exit 2; }
[ -x "$timer" ] || { echo "run.sh: $timer not found (apt-get install time)" >&2; exit 2; }

if [ $# -gt 0 ]; then programs=("$@"); else programs=("$here"/*.lisp); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# peer_command PROGRAM NAME: sets the array `peer_cmd` to the command that runs
# PROGRAM in the peer; for CLISP, compiles it first. Fails when compiling fails.
peer_command() {
    local prog=$1 name=$2
    case "$peer" in
        ecl) peer_cmd=("$peer_bin" --norc --shell "$prog") ;;
        clisp)
            local fas="$tmp/$name.fas"
            if ! "$peer_bin" -q -norc -c "$prog" -o "$fas" > "$tmp/$name.compile" 2>&1 || [ ! -f "$fas" ]; then
                echo "run.sh: CLISP could not compile $prog:" >&2
                cat "$tmp/$name.compile" >&2
                return 1
            fi
            peer_cmd=("$peer_bin" -q -norc "$fas") ;;
    esac
}

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
    program "wall us" "wall $peer" ratio "cpu us" "cpu $peer" ratio "rss us" "rss $peer" ratio output
rows="$tmp/rows"
: > "$rows"
for prog in "${programs[@]}"; do
    name=$(basename "$prog" .lisp)
    peer_command "$prog" "$name" || continue
    ours_out=$("$ours" "$prog" 2>&1) || true
    peer_out=$("${peer_cmd[@]}" 2>&1) || true
    if [ "$(echo "$ours_out" | tr -s ' \n' ' ')" = "$(echo "$peer_out" | tr -s ' \n' ' ')" ]; then
        same=same
    else
        same=DIFFERS
        echo "$name: mprof-lisp printed: $(echo "$ours_out" | head -c 300)" >&2
        echo "$name: $peer printed: $(echo "$peer_out" | head -c 300)" >&2
    fi
    : > "$tmp/$name.ours.samples"
    : > "$tmp/$name.peer.samples"
    for _ in $(seq "$n"); do
        sample "$name.ours" "$ours" "$prog"
        sample "$name.peer" "${peer_cmd[@]}"
    done
    medians "$name.ours"
    medians "$name.peer"
    ow=$(cat "$tmp/$name.ours.wall"); pw=$(cat "$tmp/$name.peer.wall")
    oc=$(cat "$tmp/$name.ours.cpu"); pc=$(cat "$tmp/$name.peer.cpu")
    orss=$(cat "$tmp/$name.ours.rss"); prss=$(cat "$tmp/$name.peer.rss")
    awk -v p="$name" -v ow="$ow" -v pw="$pw" -v oc="$oc" -v pc="$pc" -v om="$orss" -v pm="$prss" -v s="$same" '
        function ratio(a, b) { return b > 0 ? a / b : 0 }
        BEGIN {
            printf "%-12s %8.2fs %8.2fs %7.2f %8.2fs %8.2fs %7.2f %7.1fMB %7.1fMB %7.2f  %s\n",
                p, ow, pw, ratio(ow, pw), oc, pc, ratio(oc, pc), om / 1024, pm / 1024, ratio(om, pm), s
        }'
    echo "$ow $pw $oc $pc $orss $prss" >> "$rows"
done
awk '
    function lg(a, b) { return (a > 0 && b > 0) ? log(a / b) : 0 }
    { w += lg($1, $2); c += lg($3, $4); m += lg($5, $6); k++ }
    END {
        if (k) printf "%-12s %9s %9s %7.2f %9s %9s %7.2f %9s %9s %7.2f\n",
            "geomean", "", "", exp(w / k), "", "", exp(c / k), "", "", exp(m / k)
    }' "$rows"
echo "($n runs each, alternating; medians; mprof-lisp: $ours; $("$peer_bin" --version | head -n 1))"
