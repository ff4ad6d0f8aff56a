#!/usr/bin/env python3
"""libmprof on real programs from Debian, beside heaptrack.

Usage: python3 bench/ffi/real.py [--runs N]

Programs (installed from the distribution, no frame pointers):
  python  /usr/bin/python3 with PYTHONMALLOC=malloc, building, dumping and
          parsing a JSON document of 200 000 small objects;
  git     /usr/bin/git log -p over 300 commits of this repository.
Each runs bare, under LD_PRELOAD=libmprof.so (default unwinding, MPROF_UNWIND=auto,
and the bare frame-pointer walk, MPROF_UNWIND=fp) and under heaptrack, interleaved
so every repetition is a paired comparison. Reported per program and mode: the
median CPU time (user + system of the whole process tree: heaptrack's
interpreter included) and its ratio to the bare run, the mean frames per
allocation (folded stacks weighted by allocation count: `mprof export --format
folded --value allocs`, `heaptrack_print -F --flamegraph-cost-type allocations`;
both count inlined functions as frames, mprof folds direct self-recursion) and
the profile file's size.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = ("import json\n"
      "d = [{'id': i, 'name': str(i) * 3, 'tags': [i, i + 1]} for i in range(200000)]\n"
      "s = json.dumps(d)\n"
      "assert len(json.loads(s)) == 200000\n")


def programs():
    # A fixed starting commit keeps the git workload the same from run to run.
    base = subprocess.run(["git", "-C", ROOT, "rev-list", "--max-count=1", "b66bc50"],
                          capture_output=True, text=True).stdout.strip() or "HEAD"
    return [
        ("python", ["/usr/bin/python3", "-c", PY], {"PYTHONMALLOC": "malloc"}),
        ("git", ["/usr/bin/git", "-C", ROOT, "log", "-p", "-n", "300", base], {}),
    ]


def cpu_run(cmd, env, cwd):
    """CPU seconds (user + system) of cmd and everything it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr.decode(errors='replace')}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def mean_depth(folded):
    """Mean frames per allocation below the C runtime's start-up frames: heaptrack shows
    `_start`, `__libc_start_main_impl` and `__libc_start_call_main` above main (and
    heaptrack_print sometimes labels them `call_init`, `../csu/libc-start.c (...)`...),
    mprof leaves them out of its paths, so every entry up to the last one naming
    `libc_start_call_main` is not counted. heaptrack_print ends each stack with `;`."""
    frames = count = 0
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        names = [f for f in stack.rstrip(";").split(";") if f]
        last = max((i for i, f in enumerate(names) if "libc_start_call_main" in f), default=-1)
        frames += (len(names) - last - 1) * int(n)
        count += int(n)
    return frames / count if count else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "mprof-ffi", "-p", "mprof-cli"],
                   cwd=ROOT, check=True)
    lib = os.path.join(target, "release", "libmprof.so")
    mprof = os.path.join(target, "release", "mprof")
    heaptrack = shutil.which("heaptrack")
    work = tempfile.mkdtemp(prefix="mprof-real-")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MPROF_") and k != "LD_PRELOAD"}

    print(f"{'program':8} {'mode':10} {'cpu s':>7} {'ratio':>6} {'frames/alloc':>13} {'file':>10}")
    for name, cmd, extra in programs():
        env = dict(base_env, **extra)
        modes = [("bare", None), ("mprof", "auto"), ("mprof fp", "fp")]
        if heaptrack:
            modes.append(("heaptrack", None))
        times = {m: [] for m, _ in modes}
        files = {}
        for i in range(args.runs):
            for mode, unwind in modes:
                if mode == "bare":
                    times[mode].append(cpu_run(cmd, env, work))
                elif mode == "heaptrack":
                    out = os.path.join(work, f"{name}.heaptrack")
                    for f in os.listdir(work):
                        if f.startswith(f"{name}.heaptrack"):
                            os.remove(os.path.join(work, f))
                    times[mode].append(cpu_run([heaptrack, "-o", out] + cmd, env, work))
                    files[mode] = [os.path.join(work, f) for f in os.listdir(work)
                                   if f.startswith(f"{name}.heaptrack")][0]
                else:
                    out = os.path.join(work, f"{name}.{unwind}.mprof")
                    e = dict(env, LD_PRELOAD=lib, MPROF_OUT=out, MPROF_UNWIND=unwind,
                             MPROF_CHILDREN="ignore")
                    times[mode].append(cpu_run(cmd, e, work))
                    files[mode] = out
        bare = statistics.median(times["bare"])
        for mode, _ in modes:
            t = statistics.median(times[mode])
            depth = size = ""
            if mode in files:
                size = f"{os.path.getsize(files[mode]) / 1024:.0f} KiB"
                if mode == "heaptrack":
                    stacks = os.path.join(work, "stacks.txt")
                    subprocess.run(["heaptrack_print", files[mode], "-F", stacks,
                                    "--flamegraph-cost-type", "allocations"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                    with open(stacks) as f:
                        depth = f"{mean_depth(f.read()):.1f}"
                else:
                    folded = subprocess.run([mprof, "export", "--format", "folded", "--value", "allocs",
                                             files[mode]], capture_output=True, text=True, check=True).stdout
                    depth = f"{mean_depth(folded):.1f}"
            print(f"{name:8} {mode:10} {t:7.2f} {t / bare:5.2f}x {depth:>13} {size:>10}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
