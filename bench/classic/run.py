#!/usr/bin/env python3
"""Run the examples of Norvig's "Paradigms of AI Programming" on SBCL and
mprof-lisp, chapter by chapter, and compare them example by example.

PAIP's code (github.com/norvig/paip-lisp) is never committed here: it is
found in $PAIP_DIR (default bench/.cache/paip-lisp, git-ignored) and cloned
there when absent. Its files are loaded unmodified: harness.lisp loads
lisp/auxfns.lisp, REQUIRES "examples" (which defines every chapter's examples
with the book's own DEFEXAMPLES) and runs one chapter's examples in order,
each under HANDLER-CASE so that one error does not end the chapter, printing
per example whether the tutor's NEARLY-EQUAL accepts the result and the
result itself. SBCL runs twice: an example whose result it prints differently
in its two runs (RANDOM, with a fresh random state per run) or unreadably
(#<FUNCTION ...>) counts as the same when both implementations pass it.

Each chapter runs in its own process per implementation under a wall-clock
limit. Reported per chapter: whether the files loaded, how many examples
SBCL passes, and of those how many mprof-lisp passes with the same printed
result.

Usage: run.py [--only 1,2,3] [--timeout S] [--details] [--shim FILE]
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import paths  # noqa: E402

SUITE_URL = "https://github.com/norvig/paip-lisp"
HERE = os.path.dirname(os.path.abspath(__file__))


def paip_dir():
    return paths.fetched_suite("PAIP_DIR", "paip-lisp", SUITE_URL, os.path.join("lisp", "examples.lisp"))


def chapters(d):
    """(number, title) of every DEFEXAMPLES in examples.lisp."""
    text = open(os.path.join(d, "lisp", "examples.lisp"), encoding="utf-8", errors="replace").read()
    return [(int(m.group(1)), m.group(2)) for m in re.finditer(r'\(defexamples\s+(\d+)\s+"([^"]*)"', text)]


def gensyms(text):
    """The printed result with gensym counters masked (#:?X102 -> #:?X#): each
    Lisp numbers its gensyms from its own counter."""
    return re.sub(r"#:([^\s()]*?)\d+\b", r"#:\1#", text)


def lisp_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def run(impl, d, chapter, timeout, workdir, shim=None):
    script = os.path.join(workdir, f"{impl}-chapter-{chapter}.lisp")
    with open(script, "w") as f:
        if shim and impl != "sbcl":
            f.write(f"(load {lisp_string(os.path.abspath(shim))})\n")
        f.write(f"(defvar *paip-dir* {lisp_string(os.path.join(d, 'lisp') + '/')})\n"
                f"(defvar *chapter* {chapter})\n"
                f"(load {lisp_string(os.path.join(HERE, 'harness.lisp'))})\n")
    if impl == "sbcl":
        cmd = ["sbcl", "--noinform", "--non-interactive", "--no-sysinit", "--no-userinit", "--load", script]
    else:
        cmd = [paths.mprof_lisp(), script]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=workdir, stdin=subprocess.DEVNULL)
        out, status = p.stdout, "ok"
    except subprocess.TimeoutExpired as e:
        out, status = e.stdout or b"", f"timeout (>{timeout:.0f} s)"
    text = out.decode("utf-8", "replace")
    load = re.search(r"^@@LOAD (.*)$", text, re.M)
    examples = {int(m.group(1)): (m.group(2), m.group(3))
                for m in re.finditer(r"^@@EX (\d+) (\w+) ?(.*)$", text, re.M)}
    if status == "ok" and "@@END" not in text:
        status = "ended early"
    return {"load": load.group(1) if load else "(no output)", "examples": examples, "status": status}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="chapter numbers, comma-separated")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per chapter and implementation")
    ap.add_argument("--details", action="store_true", help="list the examples whose results differ")
    ap.add_argument("--shim", default=None,
                    help="a Lisp file mprof-lisp loads first (e.g. shim-defmethod.lisp)")
    args = ap.parse_args()
    d = paip_dir()
    workdir = os.environ.get("PAIP_WORK_DIR") or paths.cache_dir("paip-run")
    only = {int(x) for x in args.only.split(",") if x}
    total = {"n": 0, "sbcl": 0, "same": 0}
    details = []
    print("| chapter | examples | SBCL passes | mprof-lisp loads | mprof-lisp run | mprof-lisp passes with SBCL's result |")
    print("|---|---:|---:|---|---|---:|")
    for number, title in chapters(d):
        if only and number not in only:
            continue
        s = run("sbcl", d, number, args.timeout, workdir)
        s2 = run("sbcl", d, number, args.timeout, workdir)
        m = run("mprof", d, number, args.timeout, workdir, args.shim)
        n = len(s["examples"])
        passed = [i for i, (st, _) in s["examples"].items() if st == "pass"]

        def same_as_sbcl(i):
            ours, theirs = m["examples"].get(i), s["examples"][i]
            if ours == theirs or (ours and ours[0] == theirs[0] and gensyms(ours[1]) == gensyms(theirs[1])):
                return True
            if not ours or ours[0] != "pass":
                return False
            # Results SBCL itself prints differently from run to run (RANDOM in
            # chapter 2) or unreadably (#<FUNCTION ...>) are compared by status.
            varies = s2["examples"].get(i) != theirs
            unreadable = theirs[1].startswith("#<") and ours[1].startswith("#<")
            return varies or unreadable

        same = [i for i in passed if same_as_sbcl(i)]
        for i in passed:
            if i not in same:
                got = m["examples"].get(i, ("missing", ""))
                details.append(f"{number}.{i}: SBCL {s['examples'][i][1][:70]!r} / mprof-lisp {got[0]} {got[1][:90]!r}")
        total["n"] += n
        total["sbcl"] += len(passed)
        total["same"] += len(same)
        load = "yes" if m["load"] == "ok" else "NO: " + m["load"][:80]
        print(f"| {number}. {title} | {n} | {len(passed)} | {load} | {m['status']} | {len(same)} |", flush=True)
    print(f"| all | {total['n']} | {total['sbcl']} | | | {total['same']} |")
    if args.details:
        print()
        for line in details:
            print("- " + line)


if __name__ == "__main__":
    main()
