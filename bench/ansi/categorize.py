#!/usr/bin/env python3
"""Group mprof-lisp's ANSI test failures by cause, most impactful first.

Reads the RESULTS/<impl>-<chapter>.json files written by run.py and only
counts tests SBCL passes (a test SBCL fails says nothing about us).  The
cause is inferred from the failure text the harness recorded:

  reader feature       the test text could not be read (#C, #*, #., #P ...)
  missing operator     undefined function of the CL package
  missing setf place   (SETF X) undefined for a CL accessor X
  missing variable     unbound variable of the CL package
  missing type         unknown type specifier in TYPEP/COERCE/...
  unsupported feature  an explicit "not supported" error (displaced arrays,
                       LOOP BEING clauses ...)
  aux dependency       a helper of the suite's auxiliary files is missing
                       because its definition failed to load here
  no error signalled   SIGNALS-ERROR expected a condition, none came
  error type mismatch  a condition of another type came
  type-error datum     the TYPE-ERROR's datum is of its own expected type
  unexpected error     the test form signalled where SBCL returns values
  wrong result         values differ from the expected ones
  hang / crash         no verdict within the time limit, or the process died

Usage: categorize.py [--chapters a,b] [--top N]   (markdown on stdout)
"""

import argparse
import collections
import json
import os
import re

# bench/.cache, where run.py keeps the suite and the results (see bench/paths.py).
CACHE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".cache")

CHAPTERS = ["cons", "sequences", "strings", "characters", "hash-tables",
            "iteration", "data-and-control-flow", "numbers", "arrays"]


def cl_symbols():
    """Names of the 978 COMMON-LISP symbols, from the suite's own list."""
    suite = os.environ.get("ANSI_TEST_DIR") or os.path.join(CACHE, "ansi-test")
    try:
        text = open(os.path.join(suite, "cl-symbol-names.lsp"), encoding="utf-8").read()
    except FileNotFoundError:
        return None
    return set(n.upper() for n in re.findall(r"#:(\S+)", text))


CL = cl_symbols()


def is_cl(name):
    name = name.split("::")[-1].split(":")[-1]
    return CL is None or name in CL


def op_of(name):
    return name.split(".")[0]


def classify(name, reason):
    """(category, key) for one failing test."""
    r = reason or ""
    op = op_of(name)
    if r.startswith("READ"):
        m = re.search(r"READER-ERROR: [\d:]+ ?(.*)", r)
        msg = m.group(1) if m else r[5:80]
        return "reader feature", re.sub(r"\d+:\d+: ", "", msg)[:70]
    if r.startswith("test not defined"):
        return "aux dependency", "test's defining form failed to load"
    if r.startswith("DEFINE"):
        return "define-time error", r[7:90]
    if r.startswith("TIMEOUT") or r.startswith("CRASH"):
        return "hang / crash", f"{r.split()[0]} in {op}"
    m = re.search(r"The function \(SETF (\S+?)\) is undefined", r)
    if m:
        place = m.group(1)
        if is_cl(place):
            return "missing setf place", place
        return "setf of a user-defined place", f"{op} ((setf {place}) via macro/expander)"
    m = re.search(r"The function (\S+) is undefined", r)
    if m:
        fn = m.group(1)
        if not is_cl(fn):
            return "aux dependency", f"helper {fn} undefined"
        return "missing operator", fn
    if ":WRONG-ERROR UNDEFINED-FUNCTION" in r:
        return "missing operator", f"{op} (error test)"
    m = re.search(r"The variable (\S+) is unbound", r)
    if m:
        v = m.group(1)
        if v.startswith("#:") or (not is_cl(v) and not v[0] in "*+"):
            # A local variable of the test itself: the binding form is wrong.
            return "wrong result", f"{op} (local variable {'gensym' if v.startswith('#:') else v} unbound)"
        if not is_cl(v):
            return "aux dependency", f"variable {v} unbound"
        return "missing variable", v
    m = re.search(r"unknown type specifier: (.*)", r)
    if m:
        return "missing type", m.group(1)[:60]
    m = re.search(r"LOOP: unsupported BEING iteration [#:]*([A-Z-]+?)S?$", r)
    if m:
        return "unsupported feature", f"LOOP BEING THE {m.group(1)}S (package iteration)"
    m = re.search(r"([A-Z-]+: [^:]*not supported[^:]*)", r) or re.search(r"([^:]*not supported[^:]*)", r)
    if m:
        return "unsupported feature", m.group(1).strip()[:70]
    if ":NO-ERROR" in r:
        return "no error signalled", op
    m = re.search(r":WRONG-ERROR (\S+)", r)
    if m:
        return "error type mismatch", f"{op} signals {m.group(1).rstrip(')')}"
    if ":DATUM-IS-OF-EXPECTED-TYPE" in r or ":IS-TYPEP" in r:
        return "type-error datum", op
    m = re.match(r"ERROR (\S+): (.*)", r)
    if m:
        msg = re.sub(r"\s+", " ", m.group(2))
        msg = re.sub(r"The value .*? is not of type", "The value X is not of type", msg)
        return "unexpected error", f"{m.group(1)}: {msg[:70]}"
    if r.startswith("VALUES"):
        return "wrong result", op
    return "other", r[:70]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chapters", default=",".join(CHAPTERS))
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    rdir = os.environ.get("ANSI_RESULTS_DIR") or os.path.join(CACHE, "ansi-results")
    cats = collections.Counter()
    keys = collections.defaultdict(collections.Counter)
    examples = {}
    loaderrs = collections.Counter()
    for ch in args.chapters.split(","):
        try:
            s = json.load(open(os.path.join(rdir, f"sbcl-{ch}.json")))["results"]
            m = json.load(open(os.path.join(rdir, f"mprof-{ch}.json")))
            s = {k.replace("|", ""): v for k, v in s.items()}
            m["results"] = {k.replace("|", ""): v for k, v in m["results"].items()}
        except FileNotFoundError:
            continue
        for e in m["loaderrs"]:
            loaderrs[re.sub(r"^\S+ :: ", "", e)[:110]] += 1
        mr = m["results"]
        for name, (status, _) in s.items():
            if status != "PASS":
                continue
            mstatus, reason = mr.get(name, ["MISSING", "test not defined (its defining form failed to load)"])
            if mstatus in ("PASS", "SKIP"):
                continue
            cat, key = classify(name, reason)
            cats[cat] += 1
            keys[cat][key] += 1
            examples.setdefault((cat, key), f"{ch}/{name}: {reason[:140]}")
    total = sum(cats.values())
    print(f"## mprof-lisp failures on tests SBCL passes: {total}\n")
    print("| cause | tests |")
    print("|---|---:|")
    for cat, n in cats.most_common():
        print(f"| {cat} | {n} |")
    for cat, n in cats.most_common():
        print(f"\n### {cat} ({n})\n")
        for key, k in keys[cat].most_common(args.top):
            print(f"- {k:4d}  {key}   e.g. {examples[(cat, key)]}")
        rest = len(keys[cat]) - args.top
        if rest > 0:
            print(f"- ... {rest} more keys")
    print("\n### suite support forms that failed to load (per chapter run)\n")
    for e, k in loaderrs.most_common(40):
        print(f"- {k}x {e}")


if __name__ == "__main__":
    main()
