#!/usr/bin/env python3
"""Run the Gabriel benchmarks of cl-bench on SBCL and mprof-lisp.

cl-bench (github.com/clasp-developers/cl-bench) is never committed here: it
is found in $CL_BENCH_DIR (default bench/.cache/cl-bench, git-ignored) and cloned there when
absent.  files/gabriel.lisp is loaded unmodified; the list of benchmarks
(name, function, number of runs) is read from the :gabriel group of
cl-bench's tests.lisp.

Each benchmark runs in its own process per implementation, under a
wall-clock limit: the process loads gabriel.lisp, calls the benchmark
function RUNS times, and prints on its standard output
    @@OUTPUT <what the benchmark printed, as a Lisp string>
    @@RESULT <the value of the last call, PRIN1ed>
    @@SECONDS <wall seconds of the RUNS calls>
The driver compares output and result with SBCL's and prints a table.

Usage: run.py [--runs N | --cl-bench-runs | --scale F] [--only tak,boyer] [--timeout S] [--shim FILE]
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


def benchmarks(d):
    """(name, function symbol name, runs) of every :gabriel defbench."""
    text = open(os.path.join(d, "tests.lisp"), encoding="utf-8").read()
    out = []
    for m in re.finditer(r"\(defbench\s+(\S+)(.*?)(?=\(defbench|\Z)", text, re.S):
        name, body = m.group(1), m.group(2)
        if ":gabriel" not in body:
            continue
        fn = re.search(r":function\s+'cl-bench\.gabriel::?(\S+)", body)
        runs = re.search(r":runs\s+(\d+)", body)
        if fn:
            out.append((name, fn.group(1).rstrip(")").upper(), int(runs.group(1)) if runs else 1))
    return out


def lisp_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


SCRIPT = """{shim}
(load {gabriel})
(let* ((fn (symbol-function (find-symbol {fname} "CL-BENCH.GABRIEL")))
       (out (make-string-output-stream))
       (result nil)
       (start (get-internal-real-time)))
  (let ((*standard-output* out))
    (dotimes (i {runs}) (setq result (funcall fn))))
  (let ((seconds (/ (- (get-internal-real-time) start)
                    (float internal-time-units-per-second 1d0))))
    (format t "~&@@OUTPUT ~s~%" (get-output-stream-string out))
    (format t "@@RESULT ~a~%"
            (handler-case (let ((text (let ((*print-pretty* nil)) (prin1-to-string result))))
                            (if (> (length text) 300)
                                (format nil "~a... (~d chars)" (subseq text 0 300) (length text))
                                text))
              (error (c) (format nil "#<unprintable: ~a>" (type-of c)))))
    (format t "@@SECONDS ~,3f~%" seconds)
    (finish-output)))
"""


FPRINT_FILE = "/tmp/fprint.tst"  # gabriel.lisp's +fread-temporary-pathname+


def run(impl, d, fname, runs, timeout, workdir, shim=None):
    script = os.path.join(workdir, f"{impl}-{fname.replace('/', '_')}.lisp")
    with open(script, "w") as f:
        f.write(SCRIPT.format(shim=f"(load {lisp_string(os.path.abspath(shim))})" if shim and impl != "sbcl" else "",
                              gabriel=lisp_string(os.path.join(d, "files", "gabriel.lisp")),
                              fname=lisp_string(fname), runs=runs))
    if impl == "sbcl":
        cmd = ["sbcl", "--noinform", "--non-interactive", "--no-sysinit", "--no-userinit",
               "--load", script]
    else:
        cmd = [paths.mprof_lisp(), script]
    if os.path.exists(FPRINT_FILE):
        os.remove(FPRINT_FILE)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=workdir)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout (>{timeout:.0f} s)", "wall": time.time() - t0}
    out = p.stdout.decode("utf-8", "replace")
    res = {"wall": time.time() - t0}
    if os.path.exists(FPRINT_FILE):
        # FPRINT's output goes to this file: compare its text too.
        res["file"] = open(FPRINT_FILE, encoding="utf-8", errors="replace").read()
    for key in ("OUTPUT", "RESULT", "SECONDS"):
        m = re.search(rf"@@{key} (.*)", out)
        if m:
            res[key.lower()] = m.group(1)
    if "seconds" not in res:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        first = next((l for l in err if "error" in l.lower()), err[0] if err else f"exit {p.returncode}")
        res["status"] = "error: " + first[:160]
    else:
        res["status"] = "ok"
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1, help="calls per benchmark (default 1)")
    ap.add_argument("--cl-bench-runs", action="store_true", help="use cl-bench's :runs counts")
    ap.add_argument("--scale", type=float, default=None,
                    help="calls = cl-bench's :runs times SCALE (at least 1)")
    ap.add_argument("--sbcl-scale", type=float, default=None,
                    help="a different SCALE for SBCL (times are compared per call)")
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--impl", default="sbcl,mprof")
    ap.add_argument("--shim", default=None,
                    help="a Lisp file mprof-lisp loads before gabriel.lisp (e.g. shim-setf-get.lisp)")
    args = ap.parse_args()
    d = bench_dir()
    workdir = os.environ.get("GABRIEL_WORK_DIR") or paths.cache_dir("gabriel-run")
    os.makedirs(workdir, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    impls = args.impl.split(",")
    print("| benchmark | SBCL calls | mprof-lisp calls | SBCL ms/call | mprof-lisp ms/call | ratio | mprof-lisp status | same output, result and file as SBCL |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for name, fname, runs in benchmarks(d):
        if only and name not in only:
            continue
        n = runs if args.cl_bench_runs else args.runs
        if args.scale is not None:
            n = max(1, round(runs * args.scale))
        ns = max(1, round(runs * args.sbcl_scale)) if args.sbcl_scale is not None else n
        calls = {"sbcl": ns, "mprof": n}
        r = {impl: run(impl, d, fname, calls[impl], args.timeout, workdir, args.shim) for impl in impls}
        s, m = r.get("sbcl", {}), r.get("mprof", {})
        same = ""
        if s.get("status") == "ok" and m.get("status") == "ok":
            keys = ("output", "result", "file")
            if all(s.get(k) == m.get(k) for k in keys):
                same = "yes"
            else:
                k = next(k for k in keys if s.get(k) != m.get(k))
                same = f"NO ({k} differs: sbcl {str(s.get(k))[:50]!r} / ours {str(m.get(k))[:50]!r})"
        sper = float(s["seconds"]) / ns * 1000 if s.get("seconds") else None
        mper = float(m["seconds"]) / n * 1000 if m.get("seconds") else None
        ratio = (f"{mper / sper:.1f}" if mper / sper < 10 else f"{mper / sper:.0f}") \
            if sper and mper and sper > 0 else ""
        fmt = lambda x: f"{x:.2f}" if x is not None else ""
        print(f"| {name} | {ns} | {n} | {fmt(sper) or s.get('status', '')} | {fmt(mper)} | {ratio} | "
              f"{m.get('status', '')} | {same} |", flush=True)


if __name__ == "__main__":
    main()
