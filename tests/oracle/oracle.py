#!/usr/bin/python3
"""The safety oracle: ste select never misses a test whose outcome changed.

On a copy of examples/polyglot (a fresh git repository with a recorded
baseline), apply each of a fixed list of one-line mutations, one at a time:

  1. `ste select --format json`: the tests ste says the change can affect;
  2. the ground truth: run EVERY test file with the repo's runner command,
     without ste, and compare pass/fail with the unmutated run;
  3. every test whose outcome differs must be in the selection (mode all
     selects every test, mode none selects nothing);
  4. revert the mutation (git checkout, remove added files).

Mutations are a few hand-written ones that exercise each kind of
dependency (a new fixture matched by a glob, a module created where a
try/except import looked for it, the config chosen by an environment
variable, the C source compiled by a shell test, docs, CI config) plus
one-line edits of sources and fixtures drawn with a fixed seed: change a
constant, flip a comparison, delete a line.

Exit 0 if nothing was missed and the run was not vacuous; 1 otherwise.
Usage: oracle.py --ste BUILD/ste --example examples/polyglot [--seed N]
       [--random N] [--keep] [--granularity file|definition]

With --granularity definition the baseline is recorded at definition level
(a changed Python function selects the tests that ran it): the same
mutations, the same ground truth, the same verdict.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

DEFAULT_SEED = 20240601
DEFAULT_RANDOM_MUTATIONS = 28
TEST_TIMEOUT_S = 60

# Files the seeded line mutations may touch: the product's sources, its
# configs and its fixtures (never the tests themselves, whose own content
# is trivially a dependency).
MUTABLE_FILES = [
    "src/money.py", "src/pricing.py", "src/report.py", "src/records.py",
    "src/slowjson.py", "src/units.py", "bin/receipt.py", "bin/slugify.sh",
    "csrc/ean13.c", "config/default.ini", "config/eu.ini",
    "fixtures/cases/*.json", "fixtures/slugs/*.txt", "fixtures/orders/*",
]

# Non-vacuity. "Select every test" would pass the safety check trivially,
# and so would a set of mutations that never changes any outcome. So the
# run must contain enough mutations that break (or fix) some test, and
# enough that ste answers with a real subset, smaller than all.
MIN_OUTCOME_CHANGES = 8
MIN_NARROW_SUBSETS = 5
MIN_MUTATIONS = 30


class Mutation:
    """One change to the tree. `apply(repo)` makes it; `added` lists files
    it creates (removed on revert); edits are reverted with git."""

    def __init__(self, name, apply, added=()):
        self.name = name
        self.apply = apply
        self.added = list(added)


def edit_line(path, lineno, new_text):
    """Replaces line `lineno` (1-based) of `path`; new_text None deletes it."""
    def apply(repo):
        full = os.path.join(repo, path)
        with open(full) as f:
            lines = f.read().split("\n")
        if new_text is None:
            del lines[lineno - 1]
        else:
            lines[lineno - 1] = new_text
        with open(full, "w") as f:
            f.write("\n".join(lines))
    return apply


def replace_once(path, old, new):
    def apply(repo):
        full = os.path.join(repo, path)
        with open(full) as f:
            text = f.read()
        if old not in text:
            raise RuntimeError(f"mutation target {old!r} not in {path}")
        with open(full, "w") as f:
            f.write(text.replace(old, new, 1))
    return apply


def write_file(path, text):
    def apply(repo):
        full = os.path.join(repo, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return apply


def append_line(path, text):
    def apply(repo):
        with open(os.path.join(repo, path), "a") as f:
            f.write(text + "\n")
    return apply


def remove_file(path):
    def apply(repo):
        os.remove(os.path.join(repo, path))
    return apply


def hand_written_mutations():
    """One or more per kind of dependency the example demonstrates."""
    return [
        Mutation("add fixtures/cases/wrong.json (bad total)",
                 write_file("fixtures/cases/wrong.json",
                            '{"name": "wrong", "lines": [[100, 1]], "total": 999}\n'),
                 added=["fixtures/cases/wrong.json"]),
        Mutation("add fixtures/cases/right.json (good total)",
                 write_file("fixtures/cases/right.json",
                            '{"name": "right", "lines": [[100, 1]], "total": 108}\n'),
                 added=["fixtures/cases/right.json"]),
        Mutation("delete fixtures/cases/empty_order.json",
                 remove_file("fixtures/cases/empty_order.json")),
        Mutation("mkdir fixtures/cases/dir.json (the glob matches it)",
                 lambda repo: os.mkdir(os.path.join(repo, "fixtures/cases/dir.json")),
                 added=["fixtures/cases/dir.json"]),
        Mutation("delete src/units.py",
                 remove_file("src/units.py")),
        Mutation("add fixtures/slugs/more.txt (bad slug)",
                 write_file("fixtures/slugs/more.txt", "A  B|a--b\n"),
                 added=["fixtures/slugs/more.txt"]),
        Mutation("create src/fastjson_local.py (try/except import)",
                 write_file("src/fastjson_local.py",
                            'import json\nNAME = "fastjson_local"\n'
                            'dumps, loads = json.dumps, json.loads\n'),
                 added=["src/fastjson_local.py"]),
        Mutation("create tests/fastjson_local.py (shadows, script dir)",
                 write_file("tests/fastjson_local.py",
                            'raise ImportError("not this one either")\n'),
                 added=["tests/fastjson_local.py"]),
        Mutation("config/eu.ini: tax_percent 20 -> 19 (env-chosen config)",
                 replace_once("config/eu.ini", "tax_percent = 20", "tax_percent = 19")),
        Mutation("config/default.ini: a comment",
                 append_line("config/default.ini", "# reviewed")),
        Mutation("csrc/ean13.c: weight 3 -> 7",
                 replace_once("csrc/ean13.c", "3 * d", "7 * d")),
        Mutation("csrc/ean13.c: a comment",
                 append_line("csrc/ean13.c", "/* end */")),
        Mutation("docs/guide.md: a line (skip_all)",
                 append_line("docs/guide.md", "Questions: ask the shop.")),
        Mutation("README.md: a line (skip_all)",
                 append_line("README.md", "One more note.")),
        Mutation(".ci/pipeline.yml: a comment (run_all)",
                 append_line(".ci/pipeline.yml", "# retry: 2")),
    ]


COMPARISON_FLIPS = [
    ("<=", ">"), (">=", "<"), ("==", "!="), ("!=", "=="),
    (" < ", " >= "), (" > ", " <= "), ("-gt", "-le"), ("-lt", "-ge"),
    ("-eq", "-ne"), ("-ne", "-eq"),
]


def line_mutation_candidates(repo):
    """Every (operator, file, line, label, new text or None to delete) where
    the operator changes the line."""
    files = sorted({p for pattern in MUTABLE_FILES
                    for p in glob.glob(pattern, root_dir=repo)})
    candidates = []
    for path in files:
        with open(os.path.join(repo, path)) as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            candidates.append(("delete", path, n, "delete line", None))
            number = re.search(r"(?<![\w.])\d+(?![\w.])", line)
            if number:
                bumped = str(int(number.group()) + 1)
                candidates.append(("constant", path, n,
                                   f"{number.group()} -> {bumped}",
                                   line[:number.start()] + bumped + line[number.end():]))
            if line.lstrip().startswith("#include"):
                continue
            for old, flipped in COMPARISON_FLIPS:
                if old in line:
                    candidates.append(("flip", path, n,
                                       f"'{old.strip()}' -> '{flipped.strip()}'",
                                       line.replace(old, flipped, 1)))
                    break
    return candidates


def seeded_mutations(repo, seed, count):
    """`count` line mutations drawn with `seed`. Each draw picks an operator
    first (deletion applies to every line and would crowd out the rarer
    constant changes and comparison flips), then one of its lines."""
    rng = random.Random(seed)
    by_operator = {}
    for c in line_mutation_candidates(repo):
        by_operator.setdefault(c[0], []).append(c)
    picked = []
    for _ in range(count):
        operators = sorted(op for op, pool in by_operator.items() if pool)
        if not operators:
            break
        pool = by_operator[rng.choice(operators)]
        picked.append(pool.pop(rng.randrange(len(pool))))
    picked.sort(key=lambda c: (c[1], c[2]))
    return [Mutation(f"{path}:{n}: {label}", edit_line(path, n, new))
            for _, path, n, label, new in picked]


class Repo:
    def __init__(self, path, ste, config):
        self.path = path
        self.ste = ste
        self.command = config["runner"]["command"]
        self.tests = sorted({t for pattern in config["tests"]["include"]
                             for t in glob.glob(pattern, root_dir=path,
                                                recursive=True)})

    def run(self, argv, check=True, **kw):
        return subprocess.run(argv, cwd=self.path, check=check, text=True,
                              capture_output=True, **kw)

    def run_test(self, test):
        command = self.command.replace("{test}", shlex.quote(test))
        try:
            r = subprocess.run(["/bin/sh", "-c", command], cwd=self.path,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL,
                               timeout=TEST_TIMEOUT_S)
            return "pass" if r.returncode == 0 else "fail"
        except subprocess.TimeoutExpired:
            return "timeout"

    def outcomes(self):
        """pass/fail of every test file: the ground truth, without ste."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            return dict(zip(self.tests, pool.map(self.run_test, self.tests)))

    def select(self):
        """(mode, selected tests, reason) from ste select --format json."""
        r = self.run([self.ste, "select", "--format", "json"], check=False)
        if r.returncode == 3:  # documented: the tree could not be read, run all
            return "all", set(self.tests), "exit 3: " + r.stderr.strip()
        if r.returncode != 0:
            raise RuntimeError(f"ste select exited {r.returncode}: {r.stderr}")
        out = json.loads(r.stdout)
        mode = out["mode"]
        listed = {t["test"] for t in out["tests"]}
        unknown = listed - set(self.tests)
        if unknown:
            raise RuntimeError(f"ste selected tests that do not exist: {unknown}")
        if mode == "all":
            return mode, set(self.tests), out["reason"]
        if mode == "none":
            return mode, set(), out["reason"]
        if mode != "subset":
            raise RuntimeError(f"unknown mode {mode!r}")
        return mode, listed, out["reason"]

    def revert(self, mutation):
        for path in mutation.added:
            full = os.path.join(self.path, path)
            if os.path.isdir(full):
                os.rmdir(full)
            elif os.path.exists(full):
                os.remove(full)
        self.run(["git", "checkout", "--", "."])
        status = self.run(["git", "status", "--porcelain"]).stdout
        if status.strip():
            raise RuntimeError(f"revert of {mutation.name!r} left changes:\n{status}")


def make_repo(example, work, ste, granularity):
    repo = os.path.join(work, "polyglot")
    shutil.copytree(example, repo, ignore=shutil.ignore_patterns(
        ".ste", "build", "__pycache__"))
    if granularity != "file":
        # [selection] granularity (docs/concepts.md, "Definitions"), set in
        # the example's own [selection] table.
        path = os.path.join(repo, "ste.toml")
        with open(path) as f:
            text = f.read()
        if "\n[selection]\n" not in text:
            raise RuntimeError("the example's ste.toml has no [selection] table")
        text = text.replace("\n[selection]\n", f'\n[selection]\ngranularity = "{granularity}"\n', 1)
        with open(path, "w") as f:
            f.write(text)
    os.environ.update(GIT_AUTHOR_NAME="oracle", GIT_AUTHOR_EMAIL="o@example.com",
                      GIT_COMMITTER_NAME="oracle", GIT_COMMITTER_EMAIL="o@example.com")
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-qm", "polyglot example"]):
        subprocess.run(argv, cwd=repo, check=True)
    # Outputs of ste and of the tests: not changes for `git status`.
    with open(os.path.join(repo, ".git", "info", "exclude"), "a") as f:
        f.write(".ste/\nbuild/\n__pycache__/\n")
    with open(os.path.join(repo, "ste.toml"), "rb") as f:
        config = tomllib.load(f)
    return Repo(repo, ste, config)


def main():
    try:
        return run_oracle()
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"FAIL: the oracle could not run: {e}")
        return 1


def run_oracle():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ste", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--random", type=int, default=DEFAULT_RANDOM_MUTATIONS,
                    help="how many seeded line mutations")
    ap.add_argument("--keep", action="store_true", help="keep the temp repo")
    ap.add_argument("--granularity", choices=["file", "definition"], default="file",
                    help="[selection] granularity of the recorded baseline")
    args = ap.parse_args()
    ste = os.path.abspath(args.ste)
    started = time.monotonic()

    work = tempfile.mkdtemp(prefix="ste-oracle-")
    try:
        repo = make_repo(os.path.abspath(args.example), work, ste, args.granularity)
        record = repo.run([ste, "record", "--progress", "none"], check=False)
        # The tests' own output passes through; keep ste's summary lines.
        log = record.stdout + record.stderr
        print("\n".join(l for l in log.splitlines() if l.startswith("ste record:")))
        if record.returncode != 0 or " 0 failed, 0 errors" not in log:
            print(f"FAIL: ste record did not record a clean baseline "
                  f"(exit {record.returncode}):\n{log}")
            return 1
        everything = repo.run([ste, "select", "--all", "--format", "json"])
        ste_tests = {t["test"] for t in json.loads(everything.stdout)["tests"]}
        if ste_tests != set(repo.tests):
            print(f"FAIL: ste's tests {sorted(ste_tests)} are not the "
                  f"ste.toml globs' {repo.tests}")
            return 1
        baseline = repo.outcomes()
        if any(o != "pass" for o in baseline.values()):
            print(f"FAIL: the unmutated example does not pass: {baseline}")
            return 1

        mutations = (hand_written_mutations()
                     + seeded_mutations(repo.path, args.seed, args.random))
        total = len(repo.tests)
        rows, missed_any = [], []
        print(f"{len(mutations)} mutations (seed {args.seed}), {total} tests\n")
        header = f"{'mutation':<58} {'outcome changed':<32} {'mode':<6} {'sel':>7}"
        print(header)
        print("-" * len(header))
        for m in mutations:
            m.apply(repo.path)
            try:
                mode, selected, reason = repo.select()
                now = repo.outcomes()
            finally:
                repo.revert(m)
            changed = sorted(t for t in repo.tests if now[t] != baseline[t])
            missed = [t for t in changed if t not in selected]
            rows.append((m, changed, mode, len(selected)))
            short = ", ".join(os.path.basename(t) for t in changed) or "-"
            print(f"{m.name[:58]:<58} {short[:32]:<32} {mode:<6} "
                  f"{len(selected):>3}/{total:<3}")
            if missed:
                missed_any.append((m, missed, mode, reason))
                print(f"  MISSED {missed}: mode {mode}: {reason}")

        n = len(rows)
        with_changes = sum(1 for _, c, _, _ in rows if c)
        narrow = sum(1 for _, _, mode, k in rows if mode == "subset" and k < total)
        modes = {mode: sum(1 for _, _, m2, _ in rows if m2 == mode)
                 for mode in ("subset", "none", "all")}
        mean_fraction = sum(k for _, _, _, k in rows) / (n * total)
        print()
        print(f"mutations: {n}; with an outcome change: {with_changes}; "
              f"tests whose outcome changed: {sum(len(c) for _, c, _, _ in rows)}")
        print(f"modes: subset {modes['subset']} (narrower than all: {narrow}), "
              f"none {modes['none']}, all {modes['all']}")
        print(f"mean selected fraction: {mean_fraction:.2f} "
              f"(running everything: 1.00); missed: {len(missed_any)}")
        print(f"time: {time.monotonic() - started:.1f}s")

        failures = []
        for m, missed, mode, reason in missed_any:
            failures.append(f"{m.name}: ste select (mode {mode}: {reason}) "
                            f"missed {missed}, whose outcome changed")
        if n < MIN_MUTATIONS:
            failures.append(f"only {n} mutations, want >= {MIN_MUTATIONS}")
        if with_changes < MIN_OUTCOME_CHANGES:
            failures.append(f"vacuous: only {with_changes} mutations changed an "
                            f"outcome, want >= {MIN_OUTCOME_CHANGES}")
        if narrow < MIN_NARROW_SUBSETS:
            failures.append(f"vacuous: only {narrow} selections were narrower "
                            f"than all, want >= {MIN_NARROW_SUBSETS}")
        if failures:
            print("\nFAIL:\n  " + "\n  ".join(failures))
            return 1
        print("\nOK: every test whose outcome changed was selected.")
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
