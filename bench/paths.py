"""Where the bench scripts find things when no variable is set: everything
inside the repository, so a fresh clone runs them as they are.

- ROOT: the repository.
- CACHE: bench/.cache (git-ignored), where fetched peer suites (ansi-test,
  cl-bench) are cloned and their results and scratch files are kept.
- mprof_lisp(): $MPROF_LISP, else target/release/mprof-lisp (under
  $CARGO_TARGET_DIR when set), built with cargo when it is not there yet.
"""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "bench", ".cache")


def cache_dir(name):
    """A folder of the git-ignored cache (created)."""
    d = os.path.join(CACHE, name)
    os.makedirs(d, exist_ok=True)
    return d


def fetched_suite(env_var, name, url, probe):
    """The checkout of a peer suite: $env_var, else bench/.cache/NAME, cloned from
    URL when PROBE (a path inside the checkout) is missing."""
    d = os.environ.get(env_var) or os.path.join(CACHE, name)
    if not os.path.exists(os.path.join(d, probe)):
        os.makedirs(CACHE, exist_ok=True)
        print(f"{name} not found in {d}; cloning {url} (set {env_var} to use another checkout)")
        r = subprocess.run(["git", "clone", "--depth", "1", url, d])
        if r.returncode != 0:
            raise SystemExit(f"cannot clone {url}: clone it by hand into {d}, or set {env_var}")
    return d


def mprof_lisp():
    """The mprof-lisp binary to measure (a release build)."""
    exe = os.environ.get("MPROF_LISP")
    if exe:
        return exe
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    exe = os.path.join(target, "release", "mprof-lisp")
    if not os.path.exists(exe):
        print("building mprof-lisp (release) ...")
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "mprof-lisp-cli", "--bin", "mprof-lisp"],
                       cwd=ROOT, check=True)
    return exe
