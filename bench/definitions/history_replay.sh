#!/usr/bin/env bash
# Definition-level selection replayed on a real project's history (issue 24):
# what a CI would have selected for each of a project's last N first-parent
# commits, at definition and at file level, and whether it missed any test.
#
#   bench/definitions/history_replay.sh STE_PREFIX SRC_REPO OUT_DIR
#
# STE_PREFIX: an installed ste (PREFIX/usr/bin/ste or PREFIX/bin/ste, its
# integrations beside it in share/ste/). SRC_REPO: a full (not shallow) git
# clone of the project. OUT_DIR keeps everything and is reused by a later
# run with another ste: the clones, and the ground-truth outcomes of a tree
# (OUT_DIR/gt/<commit>/), which do not depend on ste.
#
# Environment (defaults for sympy, bench/README.md "Definition level on a
# real history"; LANG_KIND=ruby for rack, "... on a real Ruby history"):
#   LANG_KIND=python|ruby  the runner and the ground truth: pytest with
#              ste_pytest, or minitest with ste's forking runner (kind
#              "minitest", its default command; what the suite needs that
#              Debian lacks goes on RUBYLIB, which every run inherits).
#   TIP        last commit (default: SRC_REPO's HEAD); the replay covers the
#              N first-parent commits ending there, c_1..c_N, on c_0.
#   N=30 EVERY=5
#   TEST_DIRS  the measured part: "<dir> ..."; test files are
#              <dir>/**/TEST_GLOB (tests.include).
#   TEST_GLOB  python: tests/test_*.py; ruby: spec_*.rb.
#   PACKAGE    python: imported once by the ground-truth parent.
#   PYTEST_ARGS  python: extra pytest arguments, for the record and the
#              ground truth.
#   LEVELS="definition file"  GT_MAX=10 (commits given a ground truth)
#   JOBS=1     `ste record -j JOBS` (more than 1 when only the selections
#              matter, not the record's time).
#   RUN_TAG    the folder of this run's selections (default: ste's version).
#   STEPS="select gt"  select: steps 1-2; gt: step 3 (on the selections
#              already in the run's folder). The summary is always printed.
#   UNIT=case  python: `[tests] unit = "case"` (docs/concepts.md, "Test
#              cases"); each commit's cases are listed (pytest
#              --collect-only: NN.cases) for the fraction of cases, the
#              ground truth also runs each file selected as some of its
#              cases (a case not selected whose outcome changed is a miss
#              at case level), and at definition level the selection is
#              run twice without ste, as the runner line (node ids) and as
#              its files whole, timed (NN.run-cases.time, NN.run-files.time).
#
# What it does, one job at a time, under `nice -n 15`:
#   1. a clone per level (OUT_DIR/clones/<level>), ste.toml written beside
#      the tree and excluded from git (the same bytes at every commit, so
#      never a change); each run starts from an empty store (.ste/);
#   2. for i = 0..N: check out c_i; for i > 0, `ste select --format json
#      --base-commit c_b` with b the nearest baseline at most EVERY commits
#      before (b = EVERY*floor((i-1)/EVERY)), i.e. c_i's tree as a pull
#      request against the last baseline main recorded; for i % EVERY == 0,
#      i < N, `ste record -j JOBS` (wall, user, sys timed);
#   3. ground truth for up to GT_MAX commits whose definition-level
#      selection is a strict subset (source changes first): every test file
#      not selected at either level runs alone without ste at c_i
#      (ground_truth.py: plain pytest in a forked child per file, or
#      `ruby -Ilib -Itest FILE` with --minitest); a file whose outcome is
#      not a clean pass runs at c_b too; an outcome that differs is a miss of
#      each level that did not select the file. A file ste did not select
#      passed in the baseline (ste selects a baseline failure), so a clean
#      pass at c_i is no change;
#   4. history_summary.py: per commit and totals (OUT_DIR/runs/<tag>/).
set -euo pipefail
prefix=$(cd "$1" && pwd); src=$(cd "$2" && pwd); out=$3
mkdir -p "$out"; out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$prefix/usr/bin/ste" ]; then ste=$prefix/usr/bin/ste; else ste=$prefix/bin/ste; fi
N=${N:-30}; EVERY=${EVERY:-5}; GT_MAX=${GT_MAX:-10}; JOBS=${JOBS:-1}
LEVELS=${LEVELS:-definition file}
LANG_KIND=${LANG_KIND:-python}
UNIT=${UNIT:-file}
case $UNIT in file|case) ;; *) echo "UNIT: file or case"; exit 2 ;; esac
[ "$UNIT" = file ] || [ "$LANG_KIND" = python ] || { echo "UNIT=case: python only here"; exit 2; }
case $LANG_KIND in
  python)
    PACKAGE=${PACKAGE:-sympy}
    DIRS="utilities liealgebras strategies sets logic unify multipledispatch categories crypto algebras discrete calculus concrete diffgeom holonomic interactive testing external geometry vector parsing codegen tensor ntheory combinatorics"
    TEST_DIRS=${TEST_DIRS:-$(for d in $DIRS; do printf 'sympy/%s ' "$d"; done)}
    TEST_GLOB=${TEST_GLOB:-tests/test_*.py}
    PYTEST_ARGS=${PYTEST_ARGS---veryquickcheck}
    runner='kind = "pytest"
command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest '"$PYTEST_ARGS"' {tests}"'
    gt_flags=() ;;
  ruby)
    PACKAGE="" PYTEST_ARGS=""
    TEST_DIRS=${TEST_DIRS:-test}
    TEST_GLOB=${TEST_GLOB:-spec_*.rb}
    runner='kind = "minitest"'
    gt_flags=(--minitest) ;;
  *) echo "LANG_KIND: python or ruby"; exit 2 ;;
esac
tip=$(git -C "$src" rev-parse "${TIP:-HEAD}")
version=$("$ste" --version)
tag=${RUN_TAG:-$(echo "$version" | sed 's/.*(\(.*\)).*/\1/' | tr -c 'A-Za-z0-9._\n-' _)}
run=$out/runs/$tag
mkdir -p "$run"
Nc="nice -n 15"
T() { local o=$1; shift; /usr/bin/time -f "%e %U %S" -o "$o" "$@"; }
echo "$version" > "$run/ste-version.txt"

git -C "$src" rev-list --first-parent -n $((N + 1)) "$tip" | tac > "$run/commits.txt"
[ "$(wc -l < "$run/commits.txt")" = $((N + 1)) ] || { echo "fewer than $((N + 1)) commits"; exit 2; }
mapfile -t C < "$run/commits.txt"
{
  echo "ste=$ste"; echo "version=$version"; echo "src=$src tip=$tip"
  echo "N=$N EVERY=$EVERY LEVELS=$LEVELS LANG_KIND=$LANG_KIND PACKAGE=$PACKAGE"
  echo "TEST_DIRS=$TEST_DIRS TEST_GLOB=$TEST_GLOB"; echo "PYTEST_ARGS=$PYTEST_ARGS"
  echo "RUBYLIB=${RUBYLIB-}"; echo "UNIT=$UNIT PYTHONPATH=${PYTHONPATH-}"
} > "$run/params.txt"
cat "$run/params.txt"

include=""
for d in $TEST_DIRS; do include="$include${include:+, }\"$d/**/$TEST_GLOB\""; done
# The test files of the measured part at a commit (the same rule as the glob:
# "." literal, "*" within a name).
test_re="(^|/)$(printf '%s' "$TEST_GLOB" | sed -e 's/\./\\./g' -e 's/\*/[^\/]*/g')\$"
list_tests() {  # CLONE COMMIT
  git -C "$1" ls-tree -r --name-only "$2" -- $TEST_DIRS | grep -E "$test_re" | LC_ALL=C sort
}

clone() {  # NAME
  local d=$out/clones/$1
  if [ ! -d "$d/.git" ]; then
    mkdir -p "$out/clones"
    git clone -q --no-checkout "$src" "$d"
  fi
  git -C "$d" fetch -q "$src" "$tip" 2>/dev/null || true
  printf 'ste.toml\n.ste/\n' > "$d/.git/info/exclude"
  echo "$d"
}

STEPS=${STEPS:-select gt}
case " $STEPS " in *" select "*) ;; *) LEVELS_SELECT="" ;; esac
for level in ${LEVELS_SELECT-$LEVELS}; do
  d=$(clone "$level")
  rm -rf "$d/.ste"
  cat > "$d/ste.toml" <<EOF
[tests]
include = [$include]
unit = "$UNIT"
[runner]
$runner
jobs = 1
[selection]
granularity = "$level"
EOF
  ld=$run/$level; mkdir -p "$ld"
  for ((i = 0; i <= N; i++)); do
    c=${C[$i]}; nn=$(printf %02d "$i")
    git -C "$d" checkout -q -f --detach "$c"
    git -C "$d" clean -q -fdx -e ste.toml -e .ste/ > /dev/null
    list_tests "$d" "$c" > "$ld/$nn.tests"
    if [ "$UNIT" = case ]; then
      # (a file that does not collect lists none: it counts as one case)
      (cd "$d" && $Nc /usr/bin/python3 -m pytest --collect-only -q -p no:cacheprovider $PYTEST_ARGS \
        $(cat "$ld/$nn.tests") 2> /dev/null | grep '::' > "$ld/$nn.cases") || true
    fi
    if [ "$i" -gt 0 ]; then
      b=$(( (i - 1) / EVERY * EVERY ))
      echo "${C[$b]}" > "$ld/$nn.base"
      git -C "$d" diff --name-only "${C[$b]}" "$c" > "$ld/$nn.changed"
      (cd "$d" && T "$ld/$nn.select.time" $Nc "$ste" select --format json --base-commit "${C[$b]}" \
        > "$ld/$nn.select.json" 2> "$ld/$nn.select.err") || echo "select $nn: exit $?" >> "$ld/errors"
      if [ "$UNIT" = case ] && [ "$level" = definition ]; then
        # The selection as a CI hands it to pytest, then its files whole.
        args=$(cd "$d" && "$ste" select --format runner --base-commit "${C[$b]}" 2> /dev/null) || args=""
        eval "set -- $args"
        if [ $# -gt 0 ]; then
          files=$(printf '%s\n' "$@" | sed 's/::.*//' | awk '!seen[$0]++')
          (cd "$d" && T "$ld/$nn.run-cases.time" $Nc /usr/bin/python3 -m pytest -q -p no:cacheprovider \
            $PYTEST_ARGS "$@" > /dev/null 2>&1) || true
          (cd "$d" && T "$ld/$nn.run-files.time" $Nc /usr/bin/python3 -m pytest -q -p no:cacheprovider \
            $PYTEST_ARGS $files > /dev/null 2>&1) || true
        fi
      fi
    fi
    if [ $((i % EVERY)) = 0 ] && [ "$i" -lt "$N" ]; then
      (cd "$d" && T "$ld/$nn.record.time" $Nc "$ste" record -j "$JOBS" --progress none --allow-failures \
        > "$ld/$nn.record.txt" 2>&1) || echo "record $nn: exit $?" >> "$ld/errors"
      echo "$level record $nn ($c): $(cat "$ld/$nn.record.time") $(grep '^ste record: baseline' "$ld/$nn.record.txt" || true)"
    fi
  done
  echo "$level: selections done $(date -u +%T)"
done

# 3. ground truth
case " $STEPS " in *" gt "*)
gd=$(clone gt)
/usr/bin/python3 "$here/history_summary.py" "$run" --gt-plan "$GT_MAX" > "$run/gt-plan.txt"
export GT_PACKAGE=$PACKAGE GT_PYTEST_ARGS=$PYTEST_ARGS
while read -r nn; do
  c=${C[$((10#$nn))]}; b=$(cat "$run/definition/$nn.base")
  git -C "$gd" checkout -q -f --detach "$c"; git -C "$gd" clean -q -fdx > /dev/null
  # outcomes already known for this tree are not run again
  mkdir -p "$out/gt/$c"
  # (and the files selected as some of their cases: UNIT=case)
  { cat "$run/gt/$nn.unselected"; cat "$run/gt/$nn.partial" 2> /dev/null || true; } > "$run/gt/$nn.check"
  while read -r t; do [ -f "$out/gt/$c/$(echo "$t" | tr / _).out" ] || echo "$t"; done \
    < "$run/gt/$nn.check" > "$run/gt/$nn.torun"
  T "$run/gt/$nn.time" $Nc /usr/bin/python3 "$here/ground_truth.py" "${gt_flags[@]}" "$gd" "$out/gt/$c" "$run/gt/$nn.torun" > /dev/null 2>&1 || true
  # a file that did not pass cleanly: its outcome at the baseline's tree
  while read -r t; do
    k=$(echo "$t" | tr / _).out
    [ "$(cat "$out/gt/$c/$k")" = "rc 0" ] || [ -f "$out/gt/$b/$k" ] || echo "$t"
  done < "$run/gt/$nn.check" > "$run/gt/$nn.atbase"
  if [ -s "$run/gt/$nn.atbase" ]; then
    git -C "$gd" checkout -q -f --detach "$b"; git -C "$gd" clean -q -fdx > /dev/null
    mkdir -p "$out/gt/$b"
    $Nc /usr/bin/python3 "$here/ground_truth.py" "${gt_flags[@]}" "$gd" "$out/gt/$b" "$run/gt/$nn.atbase" > /dev/null 2>&1 || true
  fi
  echo "ground truth $nn: $(wc -l < "$run/gt/$nn.check") files ($(wc -l < "$run/gt/$nn.torun") run), $(wc -l < "$run/gt/$nn.atbase") again at the base; $(cat "$run/gt/$nn.time")"
done < <(grep '^gt ' "$run/gt-plan.txt" | cut -d' ' -f2)
;; esac

# 4.
/usr/bin/python3 "$here/history_summary.py" "$run" --gt "$out/gt" | tee "$run/summary.txt"
