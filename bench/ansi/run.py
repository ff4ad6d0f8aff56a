#!/usr/bin/env python3
"""Run chapters of the ANSI Common Lisp test suite on SBCL and mprof-lisp.

The suite (github.com/pfdietz/ansi-test) is never committed here: it is
found in $ANSI_TEST_DIR (default bench/.cache/ansi-test, git-ignored) and
cloned there when absent.  For each chapter the driver

  1. cuts the suite's support files and the chapter's test files (listed by
     CHAPTER/load.lsp) into top-level chunks (lispforms.py) and writes them
     to a job file;
  2. runs harness.lisp on the job in a fresh process per implementation,
     watching the @@ lines it prints: a test that prints no verdict within
     --test-timeout seconds, or whose process dies, is recorded as
     TIMEOUT/CRASH and the process is restarted past it;
  3. writes RESULTS/<impl>-<chapter>.json (name -> [status, reason]).

`run.py report` prints the comparison table from those files and writes
the per-test failure list of mprof-lisp.

Usage:
  run.py run [--impl sbcl,mprof] [--chapters cons,numbers,...]
  run.py report
"""

import argparse
import json
import os
import re
import resource
import select
import subprocess
import sys
import time

HERE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE_DIR)
import lispforms  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE_DIR))
import paths  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CHAPTERS = ["cons", "sequences", "strings", "characters", "hash-tables",
            "iteration", "data-and-control-flow", "numbers", "objects", "arrays",
            "symbols", "packages", "reader", "streams", "structures", "conditions", "misc",
            "printer"]
SUITE_URL = "https://github.com/pfdietz/ansi-test"

# Loaded before every chapter, in the order the suite's gclload1.lsp uses.
BASE_FILES = ["auxiliary/ansi-aux-macros.lsp", "universe.lsp",
              "auxiliary/random-aux.lsp", "auxiliary/ansi-aux.lsp",
              "cl-symbol-names.lsp", "notes.lsp"]

# Definitions the harness provides itself (see harness.lisp).
REPLACED = re.compile(
    r"\(\s*def(un|macro)\s+(signals-error|signals-error-always|"
    r"signals-type-error|printable-p)\s", re.I)


def suite_dir():
    return paths.fetched_suite("ANSI_TEST_DIR", "ansi-test", SUITE_URL, "cons")


def results_dir():
    d = os.environ.get("ANSI_RESULTS_DIR") or paths.cache_dir("ansi-results")
    os.makedirs(d, exist_ok=True)
    return d


def impl_command(impl, script):
    if impl == "sbcl":
        return ["sbcl", "--dynamic-space-size", "4096", "--control-stack-size", "16",
                "--noinform", "--non-interactive", "--no-sysinit", "--no-userinit",
                "--load", script]
    return [paths.mprof_lisp(), script]


def chapter_files(suite, chapter):
    """(aux files, test files) named by CHAPTER/load.lsp, in load order."""
    text = open(os.path.join(suite, chapter, "load.lsp"), encoding="utf-8").read()
    text = re.sub(r"(?m)^\s*;[^\n]*", "", text)
    aux = ["auxiliary/" + m for m in re.findall(r'compile-and-load\s+"ANSI-TESTS:AUX;([^"]+)"', text)]
    # Older chapters say (load "f.lsp"), newer ones (load-here "f.lsp").
    tests = [f"{chapter}/{m}" for m in re.findall(r'\(load(?:-here)?\s+"([^"]+)"\)', text)]
    # A nested load list (printer/format/load.lsp) names its files from the chapter's folder.
    expanded = []
    for t in tests:
        if t.endswith("/load.lsp"):
            inner = open(os.path.join(suite, t), encoding="utf-8").read()
            inner = re.sub(r"(?m)^\s*;[^\n]*", "", inner)
            expanded += [f"{chapter}/{m}" for m in re.findall(r'\(load(?:-here)?\s+"([^"]+)"\)', inner)]
        else:
            expanded.append(t)
    return aux, expanded


def write_job(suite, chapter, path):
    aux, tests = chapter_files(suite, chapter)
    n_chunks = 0
    with open(path, "w", encoding="utf-8") as out:
        for rel in BASE_FILES + aux + tests:
            text = open(os.path.join(suite, rel), encoding="utf-8", errors="replace").read()
            for line, chunk in lispforms.split_forms(text):
                if REPLACED.match(chunk):
                    continue
                name = lispforms.deftest_name(chunk)
                kind = lispforms.lisp_string(name) if name else ":form"
                out.write(f"(:chunk {lispforms.lisp_string(rel)} {line} {kind} "
                          f"{lispforms.lisp_string(chunk)})\n")
                n_chunks += 1
    return n_chunks


def limit_memory():
    gib = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (10 * gib, 10 * gib))


def run_once(impl, job, skip, skip_chunks, workdir, test_timeout, load_timeout, log):
    """One process run.

    Returns (results, loaderrs, finished, running, chunk, returncode):
    RUNNING is the test and CHUNK the (number, place) of the top-level form
    that was in progress when the process ended or was killed."""
    script = os.path.join(workdir, f"{impl}-runner.lisp")
    skipfile_items = " ".join(lispforms.lisp_string(s) for s in sorted(skip))
    with open(script, "w", encoding="utf-8") as f:
        f.write(f"(load {lispforms.lisp_string(os.path.join(HERE, 'harness.lisp'))})\n")
        f.write(f"(ansi-harness::run-job {lispforms.lisp_string(job)} '({skipfile_items}) "
                f"'({' '.join(str(c) for c in sorted(skip_chunks))}))\n")
    results, loaderrs = {}, []
    running = None
    chunk = None
    finished = False
    proc = subprocess.Popen(impl_command(impl, script), stdout=subprocess.PIPE,
                            stderr=log, stdin=subprocess.DEVNULL, preexec_fn=limit_memory)
    buf = b""
    deadline = time.time() + test_timeout
    try:
        while True:
            remaining = deadline - time.time()
            if remaining <= 0:
                break
            ready, _, _ = select.select([proc.stdout], [], [], remaining)
            if not ready:
                break
            data = os.read(proc.stdout.fileno(), 65536)
            if not data:
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                m = re.search(r"@@(RUN|PASS|FAIL|SKIP|LOADERR|LOADED|DONE|CHUNK) ?(.*)", line)
                if not m:
                    continue
                tag, rest = m.group(1), m.group(2)
                if tag == "CHUNK":
                    num, _, place = rest.partition(" ")
                    chunk = (int(num), place)
                    deadline = time.time() + load_timeout
                elif tag == "RUN":
                    running = rest.strip()
                    deadline = time.time() + test_timeout
                elif tag in ("PASS", "SKIP"):
                    results[rest.strip()] = [tag, ""]
                    running = None
                elif tag == "FAIL":
                    name, _, reason = rest.partition(" :: ")
                    results.setdefault(name.strip(), ["FAIL", reason])
                    if results[name.strip()][0] != "FAIL":
                        results[name.strip()] = ["FAIL", reason]
                    running = None
                elif tag == "LOADERR":
                    loaderrs.append(rest)
                elif tag == "LOADED":
                    chunk = None
                    deadline = time.time() + test_timeout
                elif tag == "DONE":
                    finished = True
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return results, loaderrs, finished, running, chunk, proc.returncode


def run_chapter(impl, chapter, suite, args):
    rdir = results_dir()
    workdir = os.path.join(rdir, "work")
    os.makedirs(workdir, exist_ok=True)
    job = os.path.join(workdir, f"{chapter}.job")
    write_job(suite, chapter, job)
    results, loaderrs = {}, []
    skip = set()
    skip_chunks = set()
    restarts = 0
    t0 = time.time()
    with open(os.path.join(workdir, f"{impl}-{chapter}.stderr"), "wb") as log:
        while True:
            r, le, finished, running, chunk, rc = run_once(
                impl, job, skip, skip_chunks, workdir, args.test_timeout, args.load_timeout, log)
            for k, v in r.items():
                if k not in results or results[k][0] == "FAIL" and v[0] != "FAIL":
                    results[k] = v
            for e in le:
                if e not in loaderrs:
                    loaderrs.append(e)
            if finished:
                break
            status = "TIMEOUT" if rc is None or rc < 0 else "CRASH"
            if chunk is not None and restarts < args.max_restarts:
                # A top-level form of the suite hung or killed the process.
                loaderrs.append(f"{chunk[1]} :: {status} while loading (rc={rc})")
                print(f"  {impl} {chapter}: {status} loading {chunk[1]}, restarting", file=sys.stderr)
                skip_chunks.add(chunk[0])
                restarts += 1
                continue
            if running is None or restarts >= args.max_restarts:
                results["<harness>"] = ["FAIL", f"process ended without @@DONE (rc={rc}, running={running})"]
                break
            results[running] = ["FAIL", f"{status} (rc={rc})"]
            print(f"  {impl} {chapter}: {status} in {running}, restarting", file=sys.stderr)
            skip |= set(k for k in results)
            restarts += 1
    out = {"impl": impl, "chapter": chapter, "seconds": round(time.time() - t0, 1),
           "restarts": restarts, "results": results, "loaderrs": loaderrs}
    with open(os.path.join(rdir, f"{impl}-{chapter}.json"), "w") as f:
        json.dump(out, f, indent=0)
    npass = sum(1 for v in results.values() if v[0] == "PASS")
    print(f"{impl:6} {chapter:22} pass {npass:5} / {len(results):5}  "
          f"({out['seconds']} s, {restarts} restarts, {len(loaderrs)} load errors)")


def norm(name):
    """Test names as printed by either Lisp: SBCL escapes potential numbers
    (|1+.1|), mprof-lisp may not."""
    return name.replace("|", "")


def load_results(impl, chapter, rdir=None):
    path = os.path.join(rdir or results_dir(), f"{impl}-{chapter}.json")
    if not os.path.exists(path):
        return None
    data = json.load(open(path))
    data["results"] = {norm(k): v for k, v in data["results"].items()}
    return data


def report(args):
    rows = []
    fail_lines = []
    tot = [0, 0, 0]
    print(f"| chapter | tests | SBCL pass | mprof-lisp pass | mprof-lisp % of tests | mprof-lisp / SBCL |")
    print(f"|---|---:|---:|---:|---:|---:|")
    for ch in args.chapters.split(","):
        s = load_results("sbcl", ch)
        m = load_results("mprof", ch)
        if not s or not m:
            print(f"| {ch} | (missing results) | | | | |")
            continue
        sr, mr = s["results"], m["results"]
        skipped = {k for k, v in list(sr.items()) + list(mr.items()) if v[0] == "SKIP"}
        names = (set(sr) | set(mr)) - skipped - {"<harness>"}
        sp = sum(1 for k in names if sr.get(k, ["MISSING"])[0] == "PASS")
        mp = sum(1 for k in names if mr.get(k, ["MISSING"])[0] == "PASS")
        tot[0] += len(names); tot[1] += sp; tot[2] += mp
        print(f"| {ch} | {len(names)} | {sp} | {mp} | {100*mp/len(names):.1f} | {100*mp/max(sp,1):.1f} |")
        for k in sorted(names):
            mv = mr.get(k, ["MISSING", "test not defined (its defining form failed to load)"])
            if mv[0] != "PASS":
                sv = sr.get(k, ["MISSING", ""])[0]
                fail_lines.append(f"{ch}\t{k}\tsbcl={sv}\t{mv[1]}")
        for e in m["loaderrs"]:
            fail_lines.append(f"{ch}\t<load>\t\t{e}")
    print(f"| total | {tot[0]} | {tot[1]} | {tot[2]} | {100*tot[2]/max(tot[0],1):.1f} | {100*tot[2]/max(tot[1],1):.1f} |")
    path = os.path.join(results_dir(), "mprof-failures.tsv")
    with open(path, "w") as f:
        f.write("\n".join(fail_lines) + "\n")
    print(f"\nmprof-lisp failures (one per line): {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["run", "report", "job"])
    ap.add_argument("--impl", default="sbcl,mprof")
    ap.add_argument("--chapters", default=",".join(CHAPTERS))
    ap.add_argument("--test-timeout", type=float, default=20.0)
    ap.add_argument("--load-timeout", type=float, default=60.0,
                    help="seconds allowed for one top-level form of a file")
    ap.add_argument("--max-restarts", type=int, default=40)
    args = ap.parse_args()
    if args.command == "report":
        report(args)
        return
    suite = suite_dir()
    for ch in args.chapters.split(","):
        if args.command == "job":
            path = os.path.join(results_dir(), "work", f"{ch}.job")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            print(ch, write_job(suite, ch, path), "chunks ->", path)
            continue
        for impl in args.impl.split(","):
            run_chapter(impl, ch, suite, args)


if __name__ == "__main__":
    main()
