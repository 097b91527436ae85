#!/usr/bin/env bash
# gt_group.sh MUTANTS_JSON GTDIR TESTS_TXT CLONE GROUP ID... : the ground
# truth of a group of mutants (each in a module of its own) applied together
# in CLONE (a plain checkout, no ste): every test file alone
# (ground_truth.py) into GTDIR/GROUP/, then the mutants are undone.
# followup.py then runs each test file whose outcome changed alone under
# each of the group's mutants alone, so every figure is per mutant.
set -euo pipefail
mutants=$1; gt=$2; tests=$3; clone=$4; group=$5; shift 5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$gt"
echo "$*" > "$gt/$group.ids"
for id in "$@"; do /usr/bin/python3 "$here/mutants.py" apply "$clone" "$mutants" "$id"; done
/usr/bin/time -f '%e %U %S' -o "$gt/$group.time" /usr/bin/python3 "$here/ground_truth.py" "$clone" "$gt/$group" "$tests" > "$gt/$group.stdout" 2>&1 || true
git -C "$clone" checkout -q -- .
echo "$group done $(date +%T)" >> "$gt/progress"
