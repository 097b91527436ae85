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


def modules(command, script, blobs):
    """The module fingerprint of each blob (None: it does not parse)."""
    data = b"".join(b"%d\n" % len(b) + b for b in blobs)
    out = subprocess.run(command + [script], input=data, capture_output=True, check=True).stdout
    result = []
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith("file "):
            result.append(None)
        elif line.startswith("module "):
            result[-1] = line.split()[1]
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
    after = modules(command, os.path.join(STE, rel), blobs)

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
