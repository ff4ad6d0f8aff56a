#!/usr/bin/env python3
"""What libmprof adds to a program that makes one allocation: wall time and peak RSS.

Usage: python3 bench/ffi/startup.py [--runs N]

Builds libmprof (release), compiles a C program whose main mallocs 10 bytes and
returns, and runs it bare and under LD_PRELOAD=libmprof.so (default settings: the
leak check at exit, the profile written to a temporary directory), alternating, N
times each. Prints the median wall time, CPU time and peak RSS of each and the
differences. Wall time is measured around the process's whole life (exec, the
library's start-up, the final dump at exit); peak RSS comes from `/usr/bin/time -f %M`
on an `exec` of the program (a forked Python's own RSS would otherwise count).
Whether libc6-dbg is installed is printed: it is what made the old in-process
symbolization at exit expensive.
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "mprof-ffi"], cwd=ROOT, check=True)
    lib = os.path.join(target, "release", "libmprof.so")
    work = tempfile.mkdtemp(prefix="mprof-startup-")
    src = os.path.join(work, "one.c")
    with open(src, "w") as f:
        f.write("#include <stdlib.h>\nint main(void) { void *p = malloc(10); return p == 0; }\n")
    exe = os.path.join(work, "one")
    subprocess.run(["gcc", "-O2", "-g", src, "-o", exe], check=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("MPROF_") and k != "LD_PRELOAD"}
    envs = {"bare": base, "mprof": dict(base, LD_PRELOAD=lib, MPROF_OUT=os.path.join(work, "one.out"))}
    res = {k: [] for k in envs}
    for _ in range(args.runs):
        for name, env in envs.items():
            t0 = time.monotonic()
            p = subprocess.Popen([exe], env=env)
            _, _, usage = os.wait4(p.pid, 0)
            wall = time.monotonic() - t0
            out = subprocess.run(["/usr/bin/time", "-f", "RSS %M", "sh", "-c", f"exec {exe}"],
                                 env=env, capture_output=True, text=True)
            rss = int(re.search(r"RSS (\d+)", out.stderr).group(1))
            res[name].append((wall, usage.ru_utime + usage.ru_stime, rss))
    dbg = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", "libc6-dbg"], capture_output=True, text=True)
    print(f"libc6-dbg: {dbg.stdout.strip() or 'not installed'}; {args.runs} alternating runs, medians")
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in res.items()}
    for k, (wall, cpu, rss) in med.items():
        print(f"{k:6} wall {wall * 1000:6.1f} ms  cpu {cpu * 1000:6.1f} ms  peak RSS {rss / 1024:6.1f} MB")
    (w0, c0, r0), (w1, c1, r1) = med["bare"], med["mprof"]
    print(f"added: wall {(w1 - w0) * 1000:+.1f} ms, cpu {(c1 - c0) * 1000:+.1f} ms, peak RSS {(r1 - r0) / 1024:+.1f} MB"
          " (targets: at most +20 ms and +10 MB)")


if __name__ == "__main__":
    main()
