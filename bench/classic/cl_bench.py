#!/usr/bin/env python3
"""Run the programs of cl-bench beyond its Gabriel file (arrays, bignum,
boehm-gc, clos, crc40, deflate, hash, math, misc, ratios, richards) on SBCL
and mprof-lisp, unmodified, and compare what each benchmark prints and
returns.

cl-bench (github.com/clasp-developers/cl-bench) is never committed here: it
is found in $CL_BENCH_DIR (default bench/.cache/cl-bench, git-ignored) and
cloned there when absent (bench/gabriel uses the same checkout for
files/gabriel.lisp). The benchmarks, their setup functions and their files
are read from cl-bench's tests.lisp (every DEFBENCH outside the :gabriel
group) and from the DEFPACKAGE of each file under files/.

The benchmarks of one file run in one process per implementation, in the
order of tests.lisp (cl-bench runs them all in one image, and the CLOS ones
use the classes and methods the earlier ones define), under a wall-clock
limit per file. The process does what cl-bench's ASDF system would (loads
package.lisp and sets CL-BENCH::*MISC-DIR*), loads the file (printing @@LOAD
ok, or the error that stopped the load), then for each benchmark runs its
setup function if any and calls it once with its standard output captured,
and prints what was printed and the result (PRIN1ed with *PRINT-PRETTY*
NIL) between @@OUTPUT/@@RESULT markers. A benchmark counts as "same" when
both implementations finish it with the same output and the same printed
result (unreadable #<...> objects compared by type only).

Usage: cl_bench.py [--only richards,crc40] [--timeout S-per-file] [--impl sbcl,mprof] [--details]
"""

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import paths  # noqa: E402

SUITE_URL = "https://github.com/clasp-developers/cl-bench"


def bench_dir():
    return paths.fetched_suite("CL_BENCH_DIR", "cl-bench", SUITE_URL, os.path.join("files", "gabriel.lisp"))


def package_files(d):
    """Package name (upper case) -> the file under files/ that defines it."""
    out = {}
    files = os.path.join(d, "files")
    for name in sorted(os.listdir(files)):
        if not name.endswith(".lisp"):
            continue
        text = open(os.path.join(files, name), encoding="utf-8", errors="replace").read()
        for m in re.finditer(r"\(defpackage\s+[:#]*\"?([\w.+-]+)", text, re.I):
            out.setdefault(m.group(1).upper(), name)
    return out


def benchmarks(d):
    """(name, group, package, function, setup or None, file) of every DEFBENCH
    outside :gabriel, in the order of tests.lisp."""
    text = open(os.path.join(d, "tests.lisp"), encoding="utf-8").read()
    files = package_files(d)
    out = []
    for m in re.finditer(r"\(defbench\s+(\S+)(.*?)(?=\(defbench|\Z)", text, re.S):
        name, body = m.group(1), m.group(2)
        group = re.search(r":group\s+:(\S+)", body)
        fn = re.search(r":function\s+'([\w.+-]+)::?([^\s)]+)", body)
        if not group or not fn or group.group(1) == "gabriel":
            continue
        setup = re.search(r":setup\s+'[\w.+-]+::?([^\s)]+)", body)
        package = fn.group(1).upper()
        out.append((name, group.group(1), package, fn.group(2).upper(),
                    setup.group(1).upper() if setup else None, files.get(package)))
    return out


def lisp_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# What cl-bench's ASDF system does before the files: package.lisp, and the one
# variable of cl-bench.lisp the files use (cl-bench.lisp itself needs ASDF).
SCRIPT_HEAD = """(setf *print-pretty* nil)
(load {package_file})
(defparameter cl-bench::*misc-dir* (pathname {misc_dir}))
(format t "~&@@LOAD ~a~%"
        (handler-case (progn (load {file}) "ok")
          (error (c) (substitute #\\space #\\newline (format nil "error: ~a" c)))))
(finish-output)
"""

SCRIPT_BENCH = """(format t "~&@@BENCH {name}~%")
(let* ((package (find-package {package}))
       (setup {setup})
       (out (make-string-output-stream))
       (result nil))
  (handler-case
      (let ((*standard-output* out))
        (when setup (funcall (find-symbol setup package)))
        (setq result (funcall (find-symbol {function} package))))
    (error (c)
      (format t "~&@@ERROR ~a~%" (substitute #\\space #\\newline (princ-to-string c)))))
  (format t "~&@@OUTPUT~%~a~&@@RESULT~%~a~&@@END~%"
          (get-output-stream-string out)
          (handler-case (prin1-to-string result)
            (error (c) (format nil "#<unprintable: ~a>" (type-of c)))))
  (finish-output))
"""


def run(impl, d, file, benches, timeout, workdir):
    """Run the benchmarks of one file in order in one process, as cl-bench runs
    them in one image (the CLOS ones use the classes and methods that the
    earlier ones define). -> (load status, {name: result})."""
    script = os.path.join(workdir, f"{impl}-{file.replace('.lisp', '')}.lisp")
    with open(script, "w") as f:
        f.write(SCRIPT_HEAD.format(package_file=lisp_string(os.path.join(d, "package.lisp")),
                                   misc_dir=lisp_string(os.path.join(d, "misc") + "/"),
                                   file=lisp_string(os.path.join(d, "files", file))))
        for name, _group, package, function, setup, _file in benches:
            f.write(SCRIPT_BENCH.format(name=name, package=lisp_string(package),
                                        setup=lisp_string(setup) if setup else "nil",
                                        function=lisp_string(function)))
    if impl == "sbcl":
        cmd = ["sbcl", "--noinform", "--non-interactive", "--no-sysinit", "--no-userinit", "--load", script]
    else:
        cmd = [paths.mprof_lisp(), script]
    t0 = time.time()
    status_if_missing = "not reached"
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=workdir, stdin=subprocess.DEVNULL)
        text = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        ended = "ended early: " + (err[0][:160] if err else f"exit {p.returncode}")
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode("utf-8", "replace")
        ended = status_if_missing = f"timeout (file >{timeout:.0f} s)"
    wall = time.time() - t0
    load = re.search(r"^@@LOAD (.*)$", text, re.M)
    results = {}
    parts = re.split(r"^@@BENCH (\S+)\n", text, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        res = {}
        error = re.search(r"^@@ERROR (.*)$", body, re.M)
        m = re.search(r"^@@OUTPUT\n(.*?)^@@RESULT\n(.*?)^@@END$", body, re.M | re.S)
        if m:
            res["output"], res["result"] = m.group(1), m.group(2).strip()
        res["status"] = "error: " + error.group(1)[:160] if error else ("ok" if m else ended)
        results[name] = res
    for name, *_ in benches:
        results.setdefault(name, {"status": status_if_missing})
    return (load.group(1) if load else "(no output)"), results, wall


def masked(text):
    """Printed text with what differs between Lisps masked: unreadable objects
    (#<STANDARD-METHOD ...>) keep only their type, and gensym counters go."""
    text = re.sub(r"#<([^\s>]+)[^>]*>", r"#<\1 ...>", text or "")
    return re.sub(r"#:([^\s()]*?)\d+\b", r"#:\1#", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="file names (richards or richards.lisp), comma-separated")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per file and implementation")
    ap.add_argument("--impl", default="sbcl,mprof")
    ap.add_argument("--details", action="store_true", help="print both results when they differ")
    args = ap.parse_args()
    d = bench_dir()
    workdir = os.environ.get("CL_BENCH_WORK_DIR") or paths.cache_dir("cl-bench-run")
    only = {o.removesuffix(".lisp") for o in args.only.split(",")} if args.only else None
    impls = args.impl.split(",")
    by_file = {}
    for bench in benchmarks(d):
        by_file.setdefault(bench[5], []).append(bench)
    print("| file | loads (SBCL / mprof-lisp) | s (SBCL / mprof-lisp) | benchmark | SBCL | mprof-lisp | same output and result as SBCL |")
    print("|---|---|---:|---|---|---|---|")
    same = total = 0
    for file, benches in by_file.items():
        if file is None:
            print(f"| ? | | | {', '.join(b[0] for b in benches)} | no file defines the package | | |")
            continue
        if only and file.removesuffix(".lisp") not in only:
            continue
        runs = {impl: run(impl, d, file, benches, args.timeout, workdir) for impl in impls}
        loads = " / ".join(runs[i][0] for i in impls)
        walls = " / ".join(f"{runs[i][2]:.1f}" for i in impls)
        for k, (name, *_rest) in enumerate(benches):
            s = runs["sbcl"][1][name] if "sbcl" in runs else None
            m = runs["mprof"][1][name] if "mprof" in runs else None
            verdict = ""
            if s and m:
                ok = (s["status"] == "ok" and m["status"] == "ok"
                      and masked(s.get("output")) == masked(m.get("output"))
                      and masked(s.get("result")) == masked(m.get("result")))
                if s["status"] == "ok":
                    total += 1
                    same += ok
                verdict = "yes" if ok else ("no" if s["status"] == "ok" else "(SBCL fails)")
            head = f"| {file} | {loads} | {walls} " if k == 0 else "| | | "
            print(f"{head}| {name} | {s['status'] if s else ''} | {m['status'] if m else ''} | {verdict} |",
                  flush=True)
            if args.details and s and m and verdict == "no":
                for key in ("output", "result"):
                    if masked(s.get(key)) != masked(m.get(key)):
                        print(f"    {key}: SBCL {s.get(key, '')[:300]!r}\n    {key}: mprof {m.get(key, '')[:300]!r}")
    if "sbcl" in impls and "mprof" in impls:
        print(f"\nsame output and result as SBCL: {same} of the {total} benchmarks SBCL finishes")


if __name__ == "__main__":
    main()
