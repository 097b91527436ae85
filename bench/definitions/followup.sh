#!/usr/bin/env bash
# followup.sh MUTANTS_JSON MEAS CLONE GROUP : after gt_group.sh, the test
# files whose outcome changed under the group (MEAS/gt/GROUP/*.out against
# MEAS/plain/*.out) run alone again under each of the group's mutants alone
# (MEAS/gt/GROUP.<id>/): which mutant changed which file. A file selected
# by no mutant of the group still runs under each of them.
set -euo pipefail
mutants=$1; meas=$2; clone=$3; group=$4
here=$(cd "$(dirname "$0")" && pwd)
gt=$meas/gt
: > "$gt/$group.changed"
while read -r t; do
  k=$(echo "$t" | tr / _).out
  cmp -s "$gt/$group/$k" "$meas/plain/$k" || echo "$t" >> "$gt/$group.changed"
done < "$meas/tests.txt"
echo "$group: $(wc -l < "$gt/$group.changed") test files changed" >> "$gt/progress"
[ -s "$gt/$group.changed" ] || exit 0
for id in $(cat "$gt/$group.ids"); do
  /usr/bin/python3 "$here/mutants.py" apply "$clone" "$mutants" "$id"
  /usr/bin/python3 "$here/ground_truth.py" "$clone" "$gt/$group.$id" "$gt/$group.changed" > /dev/null 2>&1 || true
  git -C "$clone" checkout -q -- .
done
echo "$group followup done $(date +%T)" >> "$gt/progress"
