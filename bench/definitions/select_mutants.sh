#!/usr/bin/env bash
# select_mutants.sh STE MUTANTS_JSON OUT CLONE... : for each mutant, in each
# clone (a recorded baseline each), apply it, `ste select --format json`
# (kept as OUT/<id>.<clone name>.json, wall/user/sys in .time), put it back.
set -euo pipefail
ste=$1; mutants=$2; out=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for id in $(/usr/bin/python3 -c 'import json,sys; print(" ".join(m["id"] for m in json.load(open(sys.argv[1]))))' "$mutants"); do
  for clone in "$@"; do
    name=$(basename "$clone")
    file=$(/usr/bin/python3 -c 'import json,sys; print(next(m["file"] for m in json.load(open(sys.argv[1])) if m["id"]==sys.argv[2]))' "$mutants" "$id")
    /usr/bin/python3 "$here/mutants.py" apply "$clone" "$mutants" "$id"
    (cd "$clone" && /usr/bin/time -f '%e %U %S' -o "$out/$id.$name.time" "$ste" select --format json > "$out/$id.$name.json" 2> "$out/$id.$name.err") || true
    git -C "$clone" checkout -q -- "$file"
  done
done
