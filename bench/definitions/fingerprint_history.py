#!/usr/bin/python3
"""How often a real history's edits change a file's module-level fingerprint.

For the last N first-parent, non-merge commits of a git repository, every
modified file with the given extension is fingerprinted before and after
the commit by two versions of a fingerprinter (integrations/<lang>/
ste_fingerprint.*, same protocol): the one at OLD_REV of this repository
and the working tree's. A module change selects every test that loaded
the file; a change the new one confines to units (and the old did not) is
a selection the fix saves. Nothing of the repository is executed.

  bench/definitions/fingerprint_history.py REPO N [--lang ruby|python] [--old REV]

Prints the counts and each file the two disagree on.
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STE = os.path.dirname(os.path.dirname(HERE))
LANGS = {"ruby": (".rb", "integrations/ruby/ste_fingerprint.rb", ["ruby", "--disable=all"]),
         "python": (".py", "integrations/python/ste_fingerprint.py", ["/usr/bin/python3", "-I", "-S", "-B"])}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=False).stdout


def answers(command, script, blobs):
    """The fingerprinter's answer for each blob: {"module", "full",
    "imports": [(level, module, attr)], "binds": set} (module None: it does
    not parse)."""
    data = b"".join(b"%d\n" % len(b) + b for b in blobs)
    out = subprocess.run(command + [script], input=data, capture_output=True, check=True).stdout
    result = []
    for line in out.decode("utf-8", "replace").splitlines():
        f = line.split()
        if line.startswith("file "):
            result.append({"module": None, "full": None, "imports": [], "binds": set()})
        elif f and f[0] in ("module", "full"):
            result[-1][f[0]] = f[1]
        elif f and f[0] == "import":
            result[-1]["imports"].append((int(f[3]), f[4], f[5]))
        elif f and f[0] == "binds":
            result[-1]["binds"] = set(f[1:])
    return result


def imported_file(init, level, module, exists):
    """The file `from <level><module> import` names in a package's
    __init__.py, as ste's ImportedFile finds it (definitions.h), or None."""
    if os.path.basename(init) != "__init__.py":
        return None
    base = os.path.dirname(init)
    parts = module.split(".")
    if level == 0:
        if not base or parts[0] != os.path.basename(base) or len(parts) < 2:
            return None
        parts = parts[1:]
    else:
        for _ in range(level - 1):
            if not base:
                return None
            base = os.path.dirname(base)
    rel = "/".join([base] + parts) if base else "/".join(parts)
    if exists(rel + "/__init__.py"):
        return rel + "/__init__.py"
    return rel + ".py" if exists(rel + ".py") else None


def modules(command, script, blobs, names=None, commits=None, repo=None):
    """The module view of each blob: `full` where the answer has imports
    that only bind names and ste would not leave them out (not a package's
    __init__.py, or one import names no file of the commit's tree binding
    the name: ImportsHold), else `module`. `names`, `commits`: each blob's
    path and tree (to resolve its imports); without them, `module`."""
    got = answers(command, script, blobs)
    if names is None:
        return [a["module"] for a in got]
    cache = {}

    def binds_of(commit, path):
        key = (commit, path)
        if key not in cache:
            blob = git(repo, "show", "%s:%s" % (commit, path))
            cache[key] = answers(command, script, [blob])[0]["binds"] if blob else None
        return cache[key]

    result = []
    for a, name, commit in zip(got, names, commits):
        if a["module"] is None or not a["imports"] or a["full"] is None:
            result.append(a["module"])
            continue
        listing = set(git(repo, "ls-tree", "-r", "--name-only", commit).decode().split("\n")) if commit not in cache \
            else cache[commit]
        cache[commit] = listing
        hold = True
        for level, module, attr in a["imports"]:
            target = imported_file(name, level, module, lambda p: p in listing)
            binds = binds_of(commit, target) if target else None
            if binds is None or attr not in binds:
                hold = False
                break
        result.append(a["module"] if hold else a["full"])
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("commits", type=int)
    ap.add_argument("--lang", default="ruby", choices=sorted(LANGS))
    ap.add_argument("--old", default="7335bb1", help="this repository's revision of the old fingerprinter")
    a = ap.parse_args()
    ext, rel, command = LANGS[a.lang]
    old_text = git(STE, "show", "%s:%s" % (a.old, rel))
    if not old_text:
        sys.exit("no %s at %s" % (rel, a.old))
    commits = git(a.repo, "rev-list", "--first-parent", "--no-merges", "-n", str(a.commits), "HEAD").decode().split()
    pairs = []
    for c in commits:
        for name in git(a.repo, "diff", "--name-only", "--diff-filter=M", c + "^", c, "--", "*" + ext).decode().split():
            pairs.append((c, name, git(a.repo, "show", "%s^:%s" % (c, name)), git(a.repo, "show", "%s:%s" % (c, name))))
    blobs = [x for p in pairs for x in (p[2], p[3])]
    # The old script beside the files of its folder at that revision (the
    # Ruby one requires ste_consts.rb beside it).
    with tempfile.TemporaryDirectory() as old:
        folder = os.path.dirname(rel)
        archive = subprocess.run(["git", "-C", STE, "archive", a.old, folder], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
        before = modules(command, os.path.join(old, rel), blobs)
    names = [p[1] for p in pairs for _ in (0, 1)]
    trees = [x for p in pairs for x in (p[0] + "^", p[0])]
    after = modules(command, os.path.join(STE, rel), blobs, names, trees, a.repo)

    def changed(fps, i):
        a_, b_ = fps[2 * i], fps[2 * i + 1]
        return None if a_ is None or b_ is None else a_ != b_

    old_mod = new_mod = unparsed = 0
    for i, (c, name, _, _) in enumerate(pairs):
        o, n = changed(before, i), changed(after, i)
        if o is None or n is None:
            unparsed += 1
            continue
        old_mod += o
        new_mod += n
        if o != n:
            print("  %s %s: module changed %s -> %s" % (c[:10], name, o, n))
    print("%d commits, %d modified %s files (%d unparseable); module-level change: old %d, new %d"
          % (len(commits), len(pairs), ext, unparsed, old_mod, new_mod))


if __name__ == "__main__":
    main()
