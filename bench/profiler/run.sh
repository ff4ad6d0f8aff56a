#!/usr/bin/env bash
# Reduction and display speed of the mprof engine.
#
# Builds a profile of 1,000,000 allocations over 10,000 distinct call paths (52,808
# tree nodes, 400 functions forming one large recursion cycle), then times writing and
# reading the file, reducing it, and printing all tables, and compares with the
# reduction-and-display times of the mprof paper (10.3-36.8 s for 31k-306k allocations).
# Also reports the monitor's cost per recorded allocation.
#
# Usage: bench/profiler/run.sh   (from anywhere; uses CARGO_TARGET_DIR if set)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p mprof-cli --bench reduce
