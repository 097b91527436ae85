#!/usr/bin/python3
"""How many of a real history's changed units only moved (issue 24, the move rule).

For the last N first-parent, non-merge commits of a git repository, every
modified file with the given extension is fingerprinted before and after
the commit by the working tree's fingerprinter (integrations/<lang>/
ste_fingerprint.*), which prints for each unit its `unit` fingerprint (its
text, no position) and its `at` fingerprint (text and position). For each
unit present on both sides (by name):
  - `at` changed: the old rule (a unit's fingerprint had its position)
    selected the tests that ran it;
  - `unit` changed: the new rule selects them; a unit whose `at` alone
    changed (a pure move) now selects only the tests that ran it and read
    line numbers.
Counted apart for files whose module-level code did not change (there the
unit selections are the whole selection; a module change selects every
test that loaded the file anyway). Nothing of the repository is executed.

  bench/definitions/move_history.py REPO N [--lang ruby|python]
"""
import argparse
import os
import subprocess
import sys

from fingerprint_history import LANGS, STE, git  # the languages and the git helper


def fingerprints(command, script, blobs):
    """Per blob: None (does not parse) or (module, {name: (unit, at)})."""
    data = b"".join(b"%d\n" % len(b) + b for b in blobs)
    flag = "-c" if "python" in command[0] else "-e"  # the script as an argument
    out = subprocess.run(command + [flag, script], input=data, capture_output=True, check=True).stdout
    result, last = [], None
    for line in out.decode("utf-8", "replace").splitlines():
        f = line.split(" ")
        if f[0] == "file":
            result.append(None)
        elif f[0] == "module":
            result[-1] = (f[1], {})
        elif f[0] == "unit":
            last = f[4]
            result[-1][1][last] = [f[1], f[1]]
        elif f[0] == "at":
            result[-1][1][last][1] = f[1]
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("commits", type=int)
    ap.add_argument("--lang", default="ruby", choices=sorted(LANGS))
    a = ap.parse_args()
    ext, rel, command = LANGS[a.lang]
    with open(os.path.join(STE, rel)) as f:
        # `at` lines whether or not ste reads them yet (EMIT_AT).
        script = f.read().replace("EMIT_AT = false", "EMIT_AT = true")
    commits = git(a.repo, "rev-list", "--first-parent", "--no-merges", "-n", str(a.commits), "HEAD").decode().split()
    pairs = []
    for c in commits:
        for name in git(a.repo, "diff", "--name-only", "--diff-filter=M", c + "^", c, "--", "*" + ext).decode().split():
            pairs.append((c, name, git(a.repo, "show", "%s^:%s" % (c, name)), git(a.repo, "show", "%s:%s" % (c, name))))
    fps = fingerprints(command, script, [x for p in pairs for x in (p[2], p[3])])
    # [all files, files whose module did not change]: units compared,
    # `at` changed (old rule), `unit` changed (new rule), pure moves.
    counts = {"all": [0, 0, 0, 0], "module unchanged": [0, 0, 0, 0]}
    unparsed = module_changed = 0
    moves = []
    for i, (c, name, _, _) in enumerate(pairs):
        before, after = fps[2 * i], fps[2 * i + 1]
        if before is None or after is None:
            unparsed += 1
            continue
        same_module = before[0] == after[0]
        module_changed += not same_module
        for unit, (u0, at0) in before[1].items():
            if unit not in after[1]:
                continue
            u1, at1 = after[1][unit]
            row = (1, at0 != at1, u0 != u1, at0 != at1 and u0 == u1)
            for key in ["all"] + (["module unchanged"] if same_module else []):
                counts[key] = [x + y for x, y in zip(counts[key], row)]
            if row[3] and same_module:
                moves.append("%s %s %s" % (c[:10], name, unit))
    print("%d commits, %d modified %s files (%d unparseable, %d with a module-level change)"
          % (len(commits), len(pairs), ext, unparsed, module_changed))
    for key, (n, old, new, pure) in counts.items():
        print("%-17s units compared %d; changed: old rule (with positions) %d, new rule (text) %d; pure moves %d"
              % (key + ":", n, old, new, pure))
    if "-v" in sys.argv:
        print("\n".join(moves))


if __name__ == "__main__":
    main()
