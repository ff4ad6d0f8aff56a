#!/usr/bin/env python3
"""Real Lisp libraries, loaded unmodified through ASDF and tested with their own
suites, in mprof-lisp (its own ASDF) beside SBCL (the real ASDF, Debian's cl-asdf).

The sources are the ones Debian's cl-* packages install under
/usr/share/common-lisp/source/ (`apt-get install sbcl cl-alexandria cl-ppcre
cl-split-sequence cl-fiveam cl-iterate cl-rt cl-anaphora cl-parse-number cl-yason
cl-who cl-flexi-streams cl-trivial-gray-streams`); nothing is copied or changed.

Usage: bench/libraries/run.py [--mprof BIN] [--only NAME,...] [--markdown]
  --mprof      the mprof-lisp binary (default target/release/mprof-lisp, built when missing)
  --only       run these libraries only
  --markdown   print the table as Markdown (for RESULTS.md and README)

For each library: `(require :asdf) (asdf:load-system :x) (asdf:test-system :x)` in
each implementation, from a fresh process, with the output parsed by the test
framework's own summary (RT: "N out of M total tests failed" or "No tests failed";
FiveAM: "Did N checks. Pass: P"; cl-ppcre and flexi-streams: failing test numbers;
parse-number: its lists of unexpected failures; the trivial-gray-streams suite: its
failed tests). A library whose suite Debian does not ship is only loaded.
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SOURCE = "/usr/share/common-lisp/source"

# (library, system to load, test system or None, parser of its suite's output)
LIBRARIES = [
    ("alexandria", "alexandria", "alexandria", "rt"),
    ("rt", "rt", None, None),
    ("anaphora", "anaphora", "anaphora", "rt"),
    ("iterate", "iterate", "iterate", "rt"),
    ("parse-number", "parse-number", "parse-number", "parse-number"),
    ("split-sequence", "split-sequence", "split-sequence", "fiveam"),
    ("fiveam", "fiveam", "fiveam", "fiveam"),
    ("trivial-gray-streams", "trivial-gray-streams", "trivial-gray-streams-test", "tgs"),
    ("flexi-streams", "flexi-streams", "flexi-streams-test", "flexi"),
    ("cl-ppcre", "cl-ppcre", "cl-ppcre", "ppcre"),
    ("yason", "yason", None, None),
    ("cl-who", "cl-who", None, None),
]


def run(cmd, stdin_text="", timeout=1800):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, input=stdin_text, capture_output=True, text=True, timeout=timeout, errors="replace")
        out, code = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        out, code = out + "\n;; TIMEOUT", -1
    return out, code, time.monotonic() - start


# The trivial-gray-streams suite defines no test operation: its RUN-TESTS returns
# the results, which FAILED-TEST-NAMES reads.
TGS_REPORT = ('(let ((r (uiop:symbol-call :trivial-gray-streams-test :run-tests))) '
              '(format t "~&~d tests, failed: ~s~%" (length r) '
              '(uiop:symbol-call :trivial-gray-streams-test :failed-test-names r)))')


def forms(system, test):
    fs = ['(require :asdf)', f'(asdf:load-system "{system}")', '(format t "~&;; LOADED~%")']
    if test == "trivial-gray-streams-test":
        fs += [f'(asdf:load-system "{test}")', TGS_REPORT, '(format t "~&;; TESTED~%")']
    elif test:
        fs.append(f'(asdf:test-system "{test}")')
        fs.append('(format t "~&;; TESTED~%")')
    return fs


def run_sbcl(system, test):
    cmd = ["sbcl", "--noinform", "--non-interactive", "--no-sysinit", "--no-userinit"]
    for f in forms(system, test):
        cmd += ["--eval", f]
    # RT's self-test asks for a scratch file name; give it one.
    return run(cmd, "/tmp/mprof-libraries-rt-scratch\n")


def run_mprof(binary, system, test):
    cmd = [binary]
    for f in forms(system, test):
        cmd += ["-e", f]
    return run(cmd, "/tmp/mprof-libraries-rt-scratch\n")


def parse(kind, out):
    """(passed, total) as the suite reports them, or None if it printed no summary."""
    if kind == "rt":
        runs = re.findall(r"Doing (\d+) pending tests of (\d+) tests total", out)
        if not runs:
            return None
        total = sum(int(t) for _, t in runs)
        failed = sum(int(n) for n in re.findall(r"(\d+) out of \d+ total tests failed", out))
        return total - failed, total
    if kind == "fiveam":
        did = re.findall(r"Did (\d+) checks?", out)
        passed = re.findall(r"Pass: (\d+)", out)
        if not did:
            return None
        return sum(map(int, passed)), sum(map(int, did))
    if kind == "parse-number":
        if ";; TESTED" not in out:
            return None
        failures = 0
        for label in ("Unexpected failures", "Unexpected non-invalid numbers"):
            m = re.search(label + r": (.*?)\.\s*$", out, re.M | re.S)
            if m:
                failures += len([x for x in m.group(1).split(",") if x.strip()])
        return 29 + 11 - failures, 29 + 11  # 29 valid and 11 invalid strings in tests.lisp
    if kind in ("ppcre", "flexi"):
        if ";; TESTED" not in out and "tests passed" not in out and "tests failed" not in out:
            return None
        failed = len(re.findall(r"^\s*\d+:\s*$|^\s*\d+:\s+\S", out, re.M))
        return (None, failed)
    if kind == "tgs":
        m = re.search(r"(\d+) tests?, failed: (.*)", out)
        if not m:
            return None
        total = int(m.group(1))
        failed = len(re.findall(r'"[^"]+"', m.group(2)))
        return total - failed, total
    return None


def describe(kind, out, code):
    if ";; LOADED" not in out:
        err = [l for l in out.splitlines() if "error" in l.lower()]
        return "does not load" + (f": {err[0].strip()[:90]}" if err else "")
    if kind is None:
        return "loads"
    r = parse(kind, out)
    if r is None:
        err = [l for l in out.splitlines() if "error" in l.lower()]
        return "suite did not finish" + (f": {err[-1].strip()[:90]}" if err else "")
    passed, total = r
    if passed is None:
        return "all tests passed" if total == 0 else f"{total} failed"
    return f"{passed}/{total}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mprof", default=os.path.join(ROOT, "target", "release", "mprof-lisp"))
    ap.add_argument("--only")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if not os.path.isdir(SOURCE):
        sys.exit(f"run.py: {SOURCE} is missing: apt-get install the cl-* packages (see the docstring)")
    if not os.path.exists(args.mprof):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "mprof-lisp-cli"], cwd=ROOT, check=True)
    only = set(args.only.split(",")) if args.only else None
    rows = []
    for name, system, test, kind in LIBRARIES:
        if only and name not in only:
            continue
        sbcl, scode, st = run_sbcl(system, test)
        ours, ocode, ot = run_mprof(args.mprof, system, test)
        row = (name, describe(kind, sbcl, scode), describe(kind, ours, ocode), st, ot)
        rows.append(row)
        if not args.markdown:
            print(f"{name:22} SBCL: {row[1]:40} mprof-lisp: {row[2]:40} ({st:.1f} s, {ot:.1f} s)", flush=True)
    if args.markdown:
        print("| library | SBCL 2.2.9, its ASDF | mprof-lisp, its ASDF | seconds (SBCL, mprof-lisp) |")
        print("|---|---|---|---|")
        for name, s, o, st, ot in rows:
            print(f"| {name} | {s} | {o} | {st:.1f}, {ot:.1f} |")


if __name__ == "__main__":
    main()
