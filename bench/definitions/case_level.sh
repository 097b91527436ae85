#!/bin/bash
# Test cases against file level on one change (bench/README, "Test cases on
# a real suite"), in a recorded checkout with tests.unit = "case":
#   bench/definitions/case_level.sh NAME FILE FROM TO
# Replaces FROM by TO in FILE, selects (json and the runner line), runs the
# runner line (the cases) and then the same files whole, prints the counts
# and both wall times, and restores FILE. STE: the ste binary (default
# ste). RUNNER: pytest (default; PYTHONPATH_ADD is put before PYTHONPATH
# for the runs, default src, for a src layout) or minitest (ste's forking
# runner, $STE_INTEGRATIONS/ruby/ste_forking_runner.rb, with -- --seed 1:
# the order the record ran in).
set -euo pipefail
name=$1 file=$2 from=$3 to=$4
ste=${STE:-ste}
work=$(mktemp -d)
trap 'cp "$work/orig" "$file"; rm -rf "$work"' EXIT
cp "$file" "$work/orig"
/usr/bin/python3 - "$file" "$from" "$to" <<'PY'
import sys
path, a, b = sys.argv[1:]
text = open(path).read()
if a not in text:
    sys.exit("case_level.sh: %r is not in %s" % (a, path))
open(path, "w").write(text.replace(a, b, 1))
PY
"$ste" select --format json > "$work/sel.json" 2> "$work/sel.err"
"$ste" select --format runner > "$work/args" 2> /dev/null
counts=$(/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); t = d["tests"]
print(sum(len(x.get("cases", [])) for x in t), "cases,", sum(1 for x in t if not x.get("cases")), "files whole, of",
      len(t), "files; mode", d["mode"])' "$work/sel.json")
mapfile -t files < <(/usr/bin/python3 -c 'import json, sys
for t in json.load(open(sys.argv[1]))["tests"]: print(t["test"])' "$work/sel.json")
if [ "${RUNNER:-pytest}" = minitest ]; then
  run=(ruby "$STE_INTEGRATIONS/ruby/ste_forking_runner.rb" --framework minitest)
  after=(-- --seed 1)
else
  export PYTHONPATH="${PYTHONPATH_ADD:-src}${PYTHONPATH:+:$PYTHONPATH}"
  run=(/usr/bin/python3 -m pytest -q -p no:cacheprovider --continue-on-collection-errors)
  after=()
fi
t0=$(date +%s.%N)
eval "${run[*]} $(cat "$work/args") ${after[*]}" > "$work/cases.log" 2>&1 || true
t1=$(date +%s.%N)
"${run[@]}" "${files[@]}" "${after[@]}" > "$work/files.log" 2>&1 || true
t2=$(date +%s.%N)
echo "$name: $counts | case run $(echo "$t1 - $t0" | bc) s [$(tail -1 "$work/cases.log")]" \
     "| file run $(echo "$t2 - $t1" | bc) s [$(tail -1 "$work/files.log")]"
