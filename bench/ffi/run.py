#!/usr/bin/env python3
"""Overhead of libmprof against bare runs and heaptrack, on bench.c's workloads.

Usage: python3 bench/ffi/run.py [--runs N] [--quick] [--no-heaptrack] [--builds fp,nofp]

Builds libmprof and the mprof binary (release, in $CARGO_TARGET_DIR or
target/), compiles bench.c twice without sibling calls: with frame pointers
(`fp`) and without (`nofp`, as distributions build), then runs each workload
bare, under LD_PRELOAD=libmprof.so (the default settings: CFI unwinding, full
stacks, the leak check at exit) and under heaptrack (Debian's `heaptrack`, if
installed), alternating so each repetition is a paired comparison. It prints
median CPU times (user + system of the whole process tree, heaptrack's
interpreter included), the median of the paired slowdown ratios, libmprof's
added time as a fraction of heaptrack's (`mprof/ht`, the issue's target: at
most 0.5), peak RSS, profile file sizes, and whether the leak libmprof reports
on the leaking path equals the leak the workload's own generator printed.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = [
    # id, arguments, function whose leak-table rows carry the workload's leak
    ("W widget", ["widget", "2000000", "2"], "make_red_widget"),
    ("D deep", ["deep", "800000"], "leaf"),
    ("M mt x4", ["mt", "1000000", "1", "4"], "make_red_widget"),
]
QUICK = [
    ("W widget", ["widget", "200000", "1"], "make_red_widget"),
    ("D deep", ["deep", "80000"], "leaf"),
    ("M mt x4", ["mt", "100000", "1", "4"], "make_red_widget"),
]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def timed(cmd, env=None, cwd=None):
    """(CPU seconds of the process tree, peak RSS KiB, stdout) of one run. No wrapper
    such as /usr/bin/time: it would be preloaded too."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out.read().decode()


def leak_on_path(mprof, profile, function):
    """Blocks never freed on leak-table rows whose path ends in `function`'s subtree."""
    report = subprocess.run([mprof, "report", profile], capture_output=True, text=True, check=True).stdout
    total = 0
    in_table = False
    for line in report.splitlines():
        if line.startswith("Memory leak table"):
            in_table = True
            continue
        if in_table and " table" in line:
            break  # the next table (memory at peak, leak classes, bins...)
        if in_table and function in line:
            total += int(line.split()[0])
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10x smaller workloads")
    ap.add_argument("--no-heaptrack", action="store_true")
    ap.add_argument("--builds", default="fp,nofp", help="fp (frame pointers), nofp, or both")
    args = ap.parse_args()

    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    sh(["cargo", "build", "--release", "-q", "-p", "mprof-ffi", "-p", "mprof-cli"], cwd=ROOT)
    lib = os.path.join(target, "release", "libmprof.so")
    mprof = os.path.join(target, "release", "mprof")
    heaptrack = None if args.no_heaptrack else shutil.which("heaptrack")
    work = tempfile.mkdtemp(prefix="mprof-bench-")
    flags = {"fp": ["-fno-omit-frame-pointer"], "nofp": ["-fomit-frame-pointer"]}
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MPROF_") and k != "LD_PRELOAD"}

    rows = []
    for build in args.builds.split(","):
        exe = os.path.join(work, f"bench-{build}")
        sh(["gcc", "-O2", "-g", "-fno-optimize-sibling-calls", "-pthread"] + flags[build] +
           [os.path.join(HERE, "bench.c"), "-o", exe])
        for name, wargs, leak_fn in (QUICK if args.quick else WORKLOADS):
            bare, prof, ht = [], [], []
            for r in range(args.runs):
                t, rss, out = timed([exe] + wargs, env=base_env)
                bare.append((t, rss))
                expected = int(re.search(r"expected leak (\d+) blocks", out).group(1))
                profile = os.path.join(work, f"mprof-{r}.out")
                env = dict(base_env, LD_PRELOAD=lib, MPROF_OUT=profile)
                t, rss, _ = timed([exe] + wargs, env=env)
                prof.append((t, rss, os.path.getsize(profile), leak_on_path(mprof, profile, leak_fn)))
                if heaptrack:
                    hdir = os.path.join(work, f"ht{r}")
                    os.makedirs(hdir, exist_ok=True)
                    t, rss, _ = timed([heaptrack, "-o", os.path.join(hdir, "ht"), exe] + wargs, env=base_env, cwd=hdir)
                    size = sum(os.path.getsize(os.path.join(hdir, f)) for f in os.listdir(hdir))
                    ht.append((t, rss, size))
                    shutil.rmtree(hdir, ignore_errors=True)
            b = statistics.median(x[0] for x in bare)
            p = statistics.median(x[0] for x in prof)
            row = {
                "name": f"{name} {build}", "bare": b, "mprof": p,
                "mprof_ratio": statistics.median(x[0] / y[0] for x, y in zip(prof, bare)),
                "rss": (max(x[1] for x in bare), max(x[1] for x in prof)),
                "size": max(x[2] for x in prof), "leak": (prof[-1][3], expected),
            }
            if ht:
                row["ht"] = statistics.median(x[0] for x in ht)
                row["ht_ratio"] = statistics.median(x[0] / y[0] for x, y in zip(ht, bare))
                row["ht_rss"] = max(x[1] for x in ht)
                row["ht_size"] = max(x[2] for x in ht)
            rows.append(row)

    print(f"\nworkloads: bench.c, {args.runs} paired runs each, medians of CPU time; machine: {os.cpu_count()} cores")
    hdr = f"{'workload':15} {'bare s':>7} {'mprof s':>8} {'ratio':>6}"
    if heaptrack:
        hdr += f" {'heaptrack s':>11} {'ratio':>6} {'mprof/ht':>8}"
    hdr += f" {'leak mprof/expected':>22} {'file mprof':>10}"
    if heaptrack:
        hdr += f" {'file ht':>9}"
    hdr += f" {'peak MiB bare/mprof' + ('/ht' if heaptrack else ''):>24}"
    print(hdr)
    for r in rows:
        line = f"{r['name']:15} {r['bare']:7.2f} {r['mprof']:8.2f} {r['mprof_ratio']:6.2f}"
        if "ht" in r:
            line += f" {r['ht']:11.2f} {r['ht_ratio']:6.2f} {(r['mprof_ratio'] - 1) / max(r['ht_ratio'] - 1, 1e-9):8.2f}"
        ok = "exact" if r["leak"][0] == r["leak"][1] else "DIFFERS"
        line += f" {r['leak'][0]:>9}/{r['leak'][1]:<9} {ok:>2} {r['size'] / 1024:8.1f}KB"
        if "ht" in r:
            line += f" {r['ht_size'] / 1e6:7.1f}MB"
        rss = f"{r['rss'][0] / 1024:.0f}/{r['rss'][1] / 1024:.0f}"
        if "ht" in r:
            rss += f"/{r['ht_rss'] / 1024:.0f}"
        line += f" {rss:>24}"
        print(line)
    print("mprof/ht = libmprof's added time as a fraction of heaptrack's (target: at most 0.5)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
