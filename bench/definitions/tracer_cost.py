#!/usr/bin/python3
"""The definition tracker's cost on call-heavy Python tests (issue 24, item 5).

    bench/definitions/tracer_cost.py BUILD_DIR [--files 20] [--calls 1000000]
        [--modules 8] [--rounds 3] [--kind generic|pytest] [--work DIR]

Generates a suite in a git repository (under --work, default a new
/tmp/ste-tracer-XXXXXX): an eager package `pkg` (`pkg/__init__.py` imports
its --modules modules; each has a few dozen small functions and a class)
and --files test files, each making about --calls Python function calls
into it (a loop over small functions, methods, a generator, a recursion),
checked by an assertion. Then, --rounds times, interleaved, one job at a
time, the same runner command each time (`/usr/bin/python3 -m pytest -q -p
no:cacheprovider {test}` per file, or kind = "pytest"):

  plain     every test file run by that command, without ste;
  file      `ste record`, granularity = "file";
  def-fast  `ste record`, granularity = "definition" (Debian's 3.11: the
            _ste_tracer warm-up counters);
  def-hook  the same with STE_DEFS_TRACER=frame-hook (the _ste_tracer
            frame evaluation hook, the fast tracer before);
  def-prof  the same with STE_DEFS_TRACER=profile (the _lsprof fallback).

It prints each run's wall and CPU (user+sys of the tree), the medians, and
the ratios of the medians to plain's, measured in the same run. Not a test:
the machine is shared (bench/README.md).
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"


def module_source(m, functions):
    lines = ['"""Module %d of the eager package."""' % m, "", "SCALE = %d" % (m + 1), ""]
    for f in range(functions):
        lines += ["", "def f%d(x):" % f, "    return x + %d" % (f % 7), ""]
    lines += [
        "",
        "class Acc:",
        "    def __init__(self):",
        "        self.total = 0",
        "",
        "    def add(self, x):",
        "        self.total += x",
        "        return self.total",
        "",
        "",
        "def fib(n):",
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)",
        "",
        "",
        "def gen(n):",
        "    for i in range(n):",
        "        yield f0(i)",
        "",
        "",
        "def work(calls):",
        '    """About `calls` Python calls."""',
        "    acc = Acc()",
        "    fs = [%s]" % ", ".join("f%d" % f for f in range(functions)),
        "    rounds = calls // (len(fs) + 2) // 2",
        "    for i in range(rounds):",
        "        for f in fs:",
        "            acc.add(f(i) & 1)",
        "    total = sum(gen(rounds))",
        "    return acc.total + total + fib(18)",  # fib(18): 8,361 calls
        "",
    ]
    return "\n".join(lines)


def generate(root, files, calls, modules):
    os.makedirs(os.path.join(root, "pkg"))
    os.makedirs(os.path.join(root, "tests"))
    functions = 24
    for m in range(modules):
        with open(os.path.join(root, "pkg", "mod%d.py" % m), "w") as out:
            out.write(module_source(m, functions))
    with open(os.path.join(root, "pkg", "__init__.py"), "w") as out:
        out.write("".join("from . import mod%d\n" % m for m in range(modules)))
    for t in range(files):
        m = t % modules
        with open(os.path.join(root, "tests", "test_%03d.py" % t), "w") as out:
            out.write(
                "import pkg\n\n\ndef test_work():\n"
                "    assert pkg.mod%d.work(%d) > 0\n" % (m, calls)
            )
    with open(os.path.join(root, ".gitignore"), "w") as out:
        out.write(".ste/\n__pycache__/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "suite")
    # Bytecode once, for every run alike.
    subprocess.run([PY, "-m", "compileall", "-q", "pkg", "tests"], cwd=root, check=True)


def git(root, *args):
    subprocess.run(
        ["git", "-c", "user.email=b@example.com", "-c", "user.name=b", "-C", root] + list(args), check=True
    )


def configure(root, granularity, kind):
    runner = (
        'kind = "pytest"\ncommand = "%s -m pytest -q -p no:cacheprovider -p ste_pytest {tests}"\n' % PY
        if kind == "pytest"
        else 'command = "%s -m pytest -q -p no:cacheprovider {test}"\n' % PY
    )
    with open(os.path.join(root, "ste.toml"), "w") as out:
        out.write(
            '[tests]\ninclude = ["tests/test_*.py"]\n[runner]\n%sjobs = 1\n'
            '[inventory]\nignore = ["**/__pycache__/**"]\n[selection]\ngranularity = "%s"\n' % (runner, granularity)
        )
    git(root, "add", "ste.toml")
    git(root, "commit", "-q", "-m", "ste.toml " + granularity)


def timed(argv, cwd, env=None):
    """(wall s, CPU s of the children) of running argv."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(argv), done.returncode, done.stdout[-3000:]))
    return wall, cpu, done.stdout


def plain(root, kind):
    tests = sorted(os.listdir(os.path.join(root, "tests")))
    tests = ["tests/" + t for t in tests if t.startswith("test_") and t.endswith(".py")]
    if kind == "pytest":
        return timed([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + tests, root)
    script = "set -e\n" + "".join("%s -m pytest -q -p no:cacheprovider %s\n" % (PY, t) for t in tests)
    return timed(["sh", "-c", script], root)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--calls", type=int, default=1000000)
    ap.add_argument("--modules", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kind", default="generic", choices=("generic", "pytest"))
    ap.add_argument("--work")
    ap.add_argument("--only", default="plain,file,def-fast,def-hook,def-prof")
    a = ap.parse_args()
    ste = os.path.join(os.path.abspath(a.build), "ste")
    work = a.work or tempfile.mkdtemp(prefix="ste-tracer-")
    print("suite: %d test files, ~%d calls each, %d modules, kind %s; in %s" % (a.files, a.calls, a.modules, a.kind, work))
    repos = {}
    for name, granularity in (("plain", None), ("file", "file"), ("def", "definition")):
        root = os.path.join(work, name)
        if not os.path.isdir(root):
            generate(root, a.files, a.calls, a.modules)
            if granularity:
                configure(root, granularity, a.kind)
        repos[name] = root
    env_fast = dict(os.environ, STE_DEFS_TRACER="")
    env_prof = dict(os.environ, STE_DEFS_TRACER="profile")
    env_hook = dict(os.environ, STE_DEFS_TRACER="frame-hook")
    runs = {
        "plain": lambda: plain(repos["plain"], a.kind),
        "file": lambda: timed([ste, "record", "--progress", "none"], repos["file"], env_fast),
        "def-fast": lambda: timed([ste, "record", "--progress", "none"], repos["def"], env_fast),
        "def-hook": lambda: timed([ste, "record", "--progress", "none"], repos["def"], env_hook),
        "def-prof": lambda: timed([ste, "record", "--progress", "none"], repos["def"], env_prof),
    }
    names = a.only.split(",")
    figures = {n: [] for n in names}
    for r in range(a.rounds):
        for n in names:
            wall, cpu, out = runs[n]()
            figures[n].append((wall, cpu))
            slow = [l for l in out.splitlines() if "slower fallback tracer" in l]
            print("round %d %-8s wall %7.2f s  cpu %7.2f s%s" % (r + 1, n, wall, cpu, ("  | " + slow[0]) if slow else ""))
            sys.stdout.flush()
    print()
    print("| run | wall (median) | CPU (median) | wall / plain | CPU / plain |")
    print("|---|---|---|---|---|")
    base = figures.get("plain")
    pw = statistics.median(w for w, _ in base) if base else None
    pc = statistics.median(c for _, c in base) if base else None
    for n in names:
        w = statistics.median(x for x, _ in figures[n])
        c = statistics.median(x for _, x in figures[n])
        print(
            "| %s | %.2f s | %.2f s | %s | %s |"
            % (n, w, c, "%.2f" % (w / pw) if pw else "-", "%.2f" % (c / pc) if pc else "-")
        )


if __name__ == "__main__":
    main()
