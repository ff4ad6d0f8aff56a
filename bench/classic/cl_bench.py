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

Each benchmark runs in its own process per implementation under a
wall-clock limit: the process does what cl-bench's ASDF system would
(loads package.lisp and sets CL-BENCH::*MISC-DIR*), loads the benchmark's file (reporting
@@LOAD ok, or the error that stopped the load), runs the setup function if
any, then calls the benchmark function once with its standard output
captured, and prints what was printed and the result (PRIN1ed with
*PRINT-PRETTY* NIL) between @@OUTPUT/@@RESULT markers. A benchmark counts
as "same" when both implementations finish it with the same output and the
same printed result (addresses in #<...> masked).

Usage: cl_bench.py [--only richards,crc40] [--timeout S] [--impl sbcl,mprof] [--details]
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
SCRIPT = """(setf *print-pretty* nil)
(load {package_file})
(defparameter cl-bench::*misc-dir* (pathname {misc_dir}))
(format t "~&@@LOAD ~a~%"
        (handler-case (progn (load {file}) "ok")
          (error (c) (substitute #\\space #\\newline (format nil "error: ~a" c)))))
(finish-output)
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


def run(impl, d, bench, timeout, workdir):
    name, _group, package, function, setup, file = bench
    script = os.path.join(workdir, f"{impl}-{name.replace('/', '_')}.lisp")
    with open(script, "w") as f:
        f.write(SCRIPT.format(package_file=lisp_string(os.path.join(d, "package.lisp")),
                              misc_dir=lisp_string(os.path.join(d, "misc") + "/"),
                              file=lisp_string(os.path.join(d, "files", file)), package=lisp_string(package),
                              setup=lisp_string(setup) if setup else "nil", function=lisp_string(function)))
    if impl == "sbcl":
        cmd = ["sbcl", "--noinform", "--non-interactive", "--no-sysinit", "--no-userinit", "--load", script]
    else:
        cmd = [paths.mprof_lisp(), script]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=workdir, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode("utf-8", "replace")
        load = re.search(r"^@@LOAD (.*)$", text, re.M)
        return {"load": load.group(1) if load else "(no output)", "status": f"timeout (>{timeout:.0f} s)",
                "wall": time.time() - t0}
    text = p.stdout.decode("utf-8", "replace")
    load = re.search(r"^@@LOAD (.*)$", text, re.M)
    res = {"load": load.group(1) if load else "(no output)", "wall": time.time() - t0}
    error = re.search(r"^@@ERROR (.*)$", text, re.M)
    body = re.search(r"^@@OUTPUT\n(.*?)^@@RESULT\n(.*?)^@@END$", text, re.M | re.S)
    if body:
        res["output"], res["result"] = body.group(1), body.group(2).strip()
    if error:
        res["status"] = "error: " + error.group(1)[:160]
    elif body:
        res["status"] = "ok"
    else:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        res["status"] = "ended early: " + (err[0][:160] if err else f"exit {p.returncode}")
    return res


def masked(text):
    """Printed text with what differs between Lisps masked: unreadable objects
    (#<STANDARD-METHOD ...>) keep only their type, and gensym counters go."""
    text = re.sub(r"#<([^\s>]+)[^>]*>", r"#<\1 ...>", text or "")
    return re.sub(r"#:([^\s()]*?)\d+\b", r"#:\1#", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="benchmark names or file names, comma-separated")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--impl", default="sbcl,mprof")
    ap.add_argument("--details", action="store_true", help="print both results when they differ")
    args = ap.parse_args()
    d = bench_dir()
    workdir = os.environ.get("CL_BENCH_WORK_DIR") or paths.cache_dir("cl-bench-run")
    only = set(args.only.split(",")) if args.only else None
    impls = args.impl.split(",")
    print("| file | benchmark | SBCL | mprof-lisp loads | mprof-lisp status | s (SBCL / mprof-lisp) | same output and result as SBCL |")
    print("|---|---|---|---|---|---:|---|")
    same = total = 0
    for bench in benchmarks(d):
        name, file = bench[0], bench[5]
        if only and name not in only and file not in only and (file or "").removesuffix(".lisp") not in only:
            continue
        if file is None:
            print(f"| ? | {name} | no file defines package {bench[2]} | | | | |")
            continue
        res = {impl: run(impl, d, bench, args.timeout, workdir) for impl in impls}
        s, m = res.get("sbcl"), res.get("mprof")
        verdict = ""
        if s and m:
            ok = (s["status"] == "ok" and m["status"] == "ok"
                  and masked(s.get("output")) == masked(m.get("output"))
                  and masked(s.get("result")) == masked(m.get("result")))
            if s["status"] == "ok":
                total += 1
                same += ok
            verdict = "yes" if ok else ("no" if s["status"] == "ok" else "(SBCL fails)")
        walls = " / ".join(f"{res[i]['wall']:.1f}" for i in impls)
        print(f"| {file} | {name} | {s['status'] if s else ''} | {m['load'] if m else ''} "
              f"| {m['status'] if m else ''} | {walls} | {verdict} |", flush=True)
        if args.details and s and m and verdict == "no":
            for key in ("output", "result"):
                if masked(s.get(key)) != masked(m.get(key)):
                    print(f"    {key}: SBCL {s.get(key, '')[:300]!r}\n    {key}: mprof {m.get(key, '')[:300]!r}")
    if "sbcl" in impls and "mprof" in impls:
        print(f"\nsame output and result as SBCL: {same} of the {total} benchmarks SBCL finishes")


if __name__ == "__main__":
    main()
