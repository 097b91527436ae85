#!/usr/bin/python3
"""Normalises `ste index dump --json` / `ste select --format json` output
for golden.sh: the temporary directories become <repo> and <ext>, commit
ids <commit>; paths outside the repository that are not under <ext>
(interpreters, shared libraries: they differ between machines) are
dropped from index keys, changes and reasons (the selected tests stay). Prints indented, key-sorted JSON.

usage: normalise.py index|select REPO EXT < json
"""
import json
import re
import sys


def main():
    what, repo, ext = sys.argv[1], sys.argv[2], sys.argv[3]
    text = sys.stdin.read()
    if not text.strip():
        print("(no output)")
        return
    # `ste index dump --json` prints a JSON object per test, a line each.
    docs = [json.loads(line) for line in text.splitlines() if line.strip()]

    def fix(value):
        if isinstance(value, str):
            value = value.replace(repo, "<repo>").replace(ext, "<ext>")
            return re.sub(r"\b[0-9a-f]{40}\b", "<commit>", value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            # A test's recorded wall time differs from run to run: only
            # that it is there is compared.
            return {k: "<seconds>" if k == "seconds" and isinstance(v, (int, float)) else fix(v)
                    for k, v in value.items()}
        return value

    def external(path):
        return isinstance(path, str) and path.startswith("/") and not path.startswith(ext)

    def prune(value):
        """Drops list items naming a machine-specific absolute path."""
        if isinstance(value, list):
            return [prune(v) for v in value
                    if not (isinstance(v, dict) and external(v.get("path")))
                    and not external(v)]
        if isinstance(value, dict):
            return {k: prune(v) for k, v in value.items()}
        return value

    for doc in docs:
        # A machine's own directories (/tmp) change under other processes:
        # when they are all that changed, it reads as nothing changed.
        changed = doc.get("changed") if isinstance(doc, dict) else None
        if (changed and all(external(c.get("path")) for c in changed)
                and doc.get("reason") == "no test depends on what changed"):
            doc["reason"] = "nothing changed since the baseline"
        doc = prune(doc)
        print(json.dumps(fix(doc), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
