#!/usr/bin/env bash
# run_each.sh REPO OUTDIR [LIST]: every test file of REPO (or those in LIST,
# one path a line) run alone with plain pytest, one process per file, one at
# a time, the way ste's generic runner runs them. OUTDIR/<file>.out holds
# the file's exit code (first line) and the sorted ids of its non-passing
# cases ("FAILED x", "ERROR y"): a file's *outcome*. Timeout per file:
# $TIMEOUT s (default 300), recorded as exit code 124.
set -uo pipefail
repo=$(cd "$1" && pwd); out=$2; list=${3:-}
mkdir -p "$out"
cd "$repo"
if [ -n "$list" ]; then files=$(cat "$list"); else
  files=$(find networkx -path '*/tests/test_*.py' | LC_ALL=C sort); fi
for f in $files; do
  key=$(echo "$f" | tr / _)
  timeout "${TIMEOUT:-300}" /usr/bin/python3 -m pytest -q -p no:cacheprovider -p no:randomly -rfE "$f" > "$out/$key.log" 2>&1
  rc=$?
  { echo "rc $rc"; grep -E '^(FAILED|ERROR) ' "$out/$key.log" | sed 's/ - .*//' | LC_ALL=C sort; } > "$out/$key.out"
done
exit 0
