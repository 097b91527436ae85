#!/usr/bin/env bash
# gt_mutants.sh MUTANTS_JSON SELDIR GTDIR TESTS_TXT CLONE ID... : the ground
# truth of each mutant in CLONE (a plain checkout, no ste): the test files
# NOT selected at definition level (SELDIR/<id>.nx-def.json) first, then the
# selected ones when there are at most 10 of them (whether the mutant
# changed any outcome at all), each alone (ground_truth.py), then the
# mutant is undone.
set -euo pipefail
mutants=$1; sel=$2; gt=$3; tests=$4; clone=$5; shift 5
here=$(cd "$(dirname "$0")" && pwd)
for id in "$@"; do
  file=$(/usr/bin/python3 -c 'import json,sys; print(next(m["file"] for m in json.load(open(sys.argv[1])) if m["id"]==sys.argv[2]))' "$mutants" "$id")
  /usr/bin/python3 - "$sel/$id.nx-def.json" "$tests" "$gt/$id.list" <<'PY'
import json, sys
sel = [t["test"] for t in json.load(open(sys.argv[1]))["tests"]]
alltests = [l.strip() for l in open(sys.argv[2]) if l.strip()]
rest = [t for t in alltests if t not in set(sel)]
open(sys.argv[3], "w").write("".join(t + "\n" for t in rest + (sel if len(sel) <= 10 else [])))
PY
  /usr/bin/python3 "$here/mutants.py" apply "$clone" "$mutants" "$id"
  /usr/bin/time -f '%e %U %S' -o "$gt/$id.time" /usr/bin/python3 "$here/ground_truth.py" "$clone" "$gt/$id" "$gt/$id.list" > "$gt/$id.stdout" 2>&1 || true
  git -C "$clone" checkout -q -- "$file"
  echo "$id done $(date +%T)" >> "$gt/progress"
done
