#!/usr/bin/env bash
# Definition-level selection (issue 12) measured on a real Python suite.
#
#   bench/definitions/real_suite.sh BUILD_DIR REPO_DIR [MEAS_DIR]
#
# REPO_DIR: a git checkout of a package whose tests run with Debian's
# /usr/bin/python3 -m pytest (measured: networkx 3.6.1, 7530809, no numpy/
# scipy installed: their tests importorskip). Its HEAD is cloned four times
# under MEAS_DIR (default: a new /tmp/ste-defs-XXXXXX, kept): plainrepo (no
# ste), file and def (a ste.toml each, committed on a local branch, one
# baseline each), gtrepo (ground truth, no ste). Then, one job at a time, all
# under `nice -n 10`:
#   1. plain: every test file alone, a process per file (run_each.sh);
#   2. `ste record`, kind = "pytest", jobs = 1, granularity file, then
#      definition (GENERIC=1: also the generic per-file runner, both);
#   3. mutants (mutants.py, seed $SEED, $COUNT of them), `ste select` for
#      each in both baselines (select_mutants.sh);
#   4. ground truth (ground_truth.py: each test file alone, plain pytest, in a
#      forked child of a parent that imported pytest and the mutated
#      package; checked first against step 1 on the unchanged tree): the
#      mutants that select at most $NARROW tests at definition level are run
#      in groups of $GROUP (one module each, applied together: every test
#      file once per group, gt_group.sh), then every file whose outcome
#      changed runs alone under each mutant of its group alone
#      (followup.sh); the others alone, the files they did not select
#      (gt_mutants.sh);
#   5. select time (hyperfine, unchanged tree and 3 mutants, both levels);
#   6. summary.py: the figures of bench/README.md, "Definition level
#      (Python)".
# Nothing here is part of `make test`.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
meas=${3:-$(mktemp -d "${TMPDIR:-/tmp}/ste-defs-XXXXXX")}
mkdir -p "$meas"; meas=$(cd "$meas" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
ste="$build/ste"
export STE_INTEGRATIONS=${STE_INTEGRATIONS:-$(cd "$here/../../integrations" && pwd)}
package=${PACKAGE:-networkx}
export GT_PACKAGE=$package
glob=${TEST_GLOB:-$package/**/tests/test_*.py}
SEED=${SEED:-12}; COUNT=${COUNT:-30}; GROUP=${GROUP:-15}; NARROW=${NARROW:-10}
N="nice -n 10"
T() { local o=$1; shift; /usr/bin/time -f "%e %U %S" -o "$o" "$@"; }
commit=$(git -C "$src" rev-parse HEAD)
echo "suite: $src at $commit; measurements in $meas"

for c in plainrepo file def gtrepo; do
  [ -d "$meas/$c" ] || { git clone -q "$src" "$meas/$c"; git -C "$meas/$c" checkout -q "$commit"; }
  (cd "$meas/$c" && $N /usr/bin/python3 -m compileall -q "$package" > /dev/null) || true
done
(cd "$meas/plainrepo" && find "$package" -path '*/tests/test_*.py' | LC_ALL=C sort) > "$meas/tests.txt"
echo "test files: $(wc -l < "$meas/tests.txt")"

# 1. plain
T "$meas/plain_each.time" $N "$here/run_each.sh" "$meas/plainrepo" "$meas/plain" "$meas/tests.txt" > /dev/null 2>&1
echo "plain: $(cat "$meas/plain_each.time")"

# 2. records
record() {  # CLONE GRANULARITY KIND NAME
  local d=$1 gran=$2 kind=$3 name=$4 runner
  if [ "$kind" = pytest ]; then
    runner='kind = "pytest"
command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p no:randomly -p ste_pytest {tests}"'
  else
    runner='command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p no:randomly {test}"'
  fi
  printf '[tests]\ninclude = ["%s"]\n[runner]\n%s\njobs = 1\n[selection]\ngranularity = "%s"\n' \
    "$glob" "$runner" "$gran" > "$d/ste.toml"
  git -C "$d" add ste.toml
  git -C "$d" -c user.email=b@example.com -c user.name=b commit -q -m "ste.toml ($gran, $kind)"
  (cd "$d" && T "$meas/$name.time" $N "$ste" record --progress none > "$meas/$name.txt" 2>&1)
  echo "$name: $(cat "$meas/$name.time"); $(grep '^ste record: baseline' "$meas/$name.txt")"
}
git -C "$meas/file" checkout -q -B ste-measure; git -C "$meas/def" checkout -q -B ste-measure
if [ "${GENERIC:-0}" = 1 ]; then
  record "$meas/file" file generic rec_file_generic
  record "$meas/def" definition generic rec_def_generic
fi
record "$meas/file" file pytest rec_file_pytest
record "$meas/def" definition pytest rec_def_pytest

# 3. mutants and selections
/usr/bin/python3 "$here/mutants.py" generate "$meas/plainrepo" "$package" --seed "$SEED" --count "$COUNT" > "$meas/mutants.json"
# select_mutants.sh names the outputs <id>.nx-def / <id>.nx-file
ln -sfn "$meas/def" "$meas/nx-def"; ln -sfn "$meas/file" "$meas/nx-file"
$N "$here/select_mutants.sh" "$ste" "$meas/mutants.json" "$meas/sel" "$meas/nx-def" "$meas/nx-file"

# 4. ground truth
$N /usr/bin/python3 "$here/ground_truth.py" "$meas/gtrepo" "$meas/gt/base" "$meas/tests.txt"
bad=0
while read -r t; do k=$(echo "$t" | tr / _).out; cmp -s "$meas/gt/base/$k" "$meas/plain/$k" || { echo "fork/plain differ: $t"; bad=1; }; done < "$meas/tests.txt"
[ $bad = 0 ] && echo "ground truth runner: the same outcome as plain for every file of the unchanged tree"
read -r -a narrow <<< "$(/usr/bin/python3 -c '
import json, sys
ms = json.load(open(sys.argv[1]))
print(" ".join(m["id"] for m in ms if len(json.load(open("%s/%s.nx-def.json" % (sys.argv[2], m["id"])))["tests"]) <= int(sys.argv[3])))
' "$meas/mutants.json" "$meas/sel" "$NARROW")"
read -r -a wide <<< "$(/usr/bin/python3 -c '
import json, sys
ms = json.load(open(sys.argv[1]))
print(" ".join(m["id"] for m in ms if len(json.load(open("%s/%s.nx-def.json" % (sys.argv[2], m["id"])))["tests"]) > int(sys.argv[3])))
' "$meas/mutants.json" "$meas/sel" "$NARROW")"
g=0
for ((i = 0; i < ${#narrow[@]}; i += GROUP)); do
  g=$((g + 1))
  $N "$here/gt_group.sh" "$meas/mutants.json" "$meas/gt" "$meas/tests.txt" "$meas/gtrepo" "G$g" "${narrow[@]:i:GROUP}"
  $N "$here/followup.sh" "$meas/mutants.json" "$meas" "$meas/gtrepo" "G$g"
done
[ ${#wide[@]} = 0 ] || $N "$here/gt_mutants.sh" "$meas/mutants.json" "$meas/sel" "$meas/gt" "$meas/tests.txt" "$meas/gtrepo" "${wide[@]}"

# 5. select time
mkdir -p "$meas/hf"
if command -v hyperfine > /dev/null; then
  for c in nx-def nx-file; do
    for id in none m01 "${wide[0]:-m02}" m03; do
      [ "$id" = none ] || /usr/bin/python3 "$here/mutants.py" apply "$meas/$c" "$meas/mutants.json" "$id"
      (cd "$meas/$c" && $N hyperfine -N --warmup 2 --runs 10 --export-json "$meas/hf/$c.$id.json" "$ste select --format json" > /dev/null 2>&1)
      git -C "$meas/$c" checkout -q -- "$package"
    done
  done
fi

# 6.
/usr/bin/python3 "$here/summary.py" "$meas"
