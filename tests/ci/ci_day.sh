#!/usr/bin/env bash
# ctest CiDay: a day of CI with the scripts of deploy/github (ste-ci.sh, what
# the GitHub actions run), on real git clones, with files standing in for
# the CI cache, $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY:
#
#   1. main: a full clone records and exports its baseline ("record");
#   2. a pull request changing one library, checked out at depth 1 as
#      actions/checkout does, restores the export from the "cache" and
#      selects ("select", 3 shards): outputs and a summary are written, the
#      mode is subset, and each shard job ("shard", K/3) runs its tests for
#      real; the union of the shards is the selection, each test once, and
#      equals what the full clone selects from its own store;
#   3. a force-tag commit ([test all]) selects all;
#   4. a damaged export is refused: all, with the reason;
#   5. no export in the cache: all, with the reason.
#
#   tests/ci/ci_day.sh BUILD
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
ci="$(cd "$here/../.." && pwd)/deploy/github/ste-ci.sh"
export STE="$build/ste"
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-ciday-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "ci_day: FAIL: $*" >&2; exit 1; }
g() { git -c user.email=ci@example.com -c user.name=ci "$@"; }

# The project: 6 shell tests over two libraries.
origin="$work/origin"
mkdir -p "$origin/lib" "$origin/tests"
echo 'a() { echo A; }' > "$origin/lib/a.sh"
echo 'b() { echo B; }' > "$origin/lib/b.sh"
for i in 1 2 3; do printf '. lib/a.sh\n[ "$(a)" = A ]\n' > "$origin/tests/test_a$i.sh"; done
for i in 1 2 3; do printf '. lib/b.sh\n[ "$(b)" = B ]\n' > "$origin/tests/test_b$i.sh"; done
printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\n' > "$origin/ste.toml"
printf '.ste/\n.ste-baseline/\n' > "$origin/.gitignore"
g -C "$origin" init -q -b main
g -C "$origin" add -A
g -C "$origin" commit -q -m "main: the project"
main_sha=$(git -C "$origin" rev-parse HEAD)

# 1. main's CI job: record, export into the cache.
cache="$work/cache"
mkdir -p "$cache"
git clone -q "file://$origin" "$work/main"
(cd "$work/main" && STE_BASELINE_FILE="$cache/baseline.steb" GITHUB_OUTPUT="$work/main.out" "$ci" record) \
  > "$work/record.log" 2>&1 || { cat "$work/record.log"; fail "record"; }
[ -s "$cache/baseline.steb" ] || fail "no export in the cache"
grep -q "^baseline-file=$cache/baseline.steb$" "$work/main.out" || fail "record's output: $(cat "$work/main.out")"

# The pull request: lib/b.sh changed.
g -C "$origin" checkout -q -b feature
echo 'b() { echo B; }  # faster' > "$origin/lib/b.sh"
g -C "$origin" commit -q -a -m "feature: b is faster"

pr_job() {  # NAME: a depth-1 clone of feature with the cache restored; select
  local name=$1 dir="$work/$1"
  git clone -q --depth 1 --branch feature "file://$origin" "$dir"
  if [ -e "$cache/baseline.steb" ]; then
    mkdir -p "$dir/.ste-baseline"
    cp "$cache/baseline.steb" "$dir/.ste-baseline/baseline.steb"
  fi
  : > "$work/$name.out"
  : > "$work/$name.summary"
  # Each job is a machine of its own: its own store, outside the checkout.
  (cd "$dir" && STE_STORE="sqlite:$work/$name.store/ste.db" STE_SHARDS=3 STE_BASE_COMMIT="$main_sha" GITHUB_OUTPUT="$work/$name.out" \
     GITHUB_STEP_SUMMARY="$work/$name.summary" "$ci" select) > "$work/$name.log" 2>&1 \
    || { cat "$work/$name.log"; fail "$name: select"; }
}
out() { sed -n "s/^$2=//p" "$work/$1.out" | head -1; }

# 2. The PR's select job, then its shard jobs.
pr_job pr
mode=$(out pr mode)
[ "$mode" = subset ] || { cat "$work/pr.log" "$work/pr.out"; fail "pr: mode $mode"; }
tests_file="$work/pr/$(out pr tests_file)"
[ -f "$tests_file" ] || tests_file=$(out pr tests_file)
[ ! -e "$work/pr/.ste/ste.db" ] || fail "pr: select used a store in the checkout"
selected=$(sort "$tests_file")
[ "$selected" = "$(printf 'tests/test_b1.sh\ntests/test_b2.sh\ntests/test_b3.sh')" ] \
  || fail "pr: selected $selected"
matrix=$(out pr matrix)
/usr/bin/python3 - "$matrix" <<'PY' || fail "pr: matrix $matrix"
import json, sys
m = json.loads(sys.argv[1])
assert list(m) == ["include"] and len(m["include"]) == 3, m
assert sorted(t for e in m["include"] for t in e["tests"]) == ["tests/test_b%d.sh" % i for i in (1, 2, 3)], m
PY
grep -q "ste select: subset" "$work/pr.summary" || fail "pr: summary $(cat "$work/pr.summary")"
grep -q "tests/test_b1.sh" "$work/pr.summary" || fail "pr: summary lists no test"
# The full clone, from its own store, selects the same.
full=$(cd "$work/main" && git fetch -q origin feature && git checkout -q FETCH_HEAD && "$STE" select 2> /dev/null | sort)
[ "$full" = "$selected" ] || fail "full clone selects $full, the PR job $selected"
# Each shard job: a fresh depth-1 clone, the cache restored, its shard run.
ran="$work/ran"
: > "$ran"
for k in 1 2 3; do
  dir="$work/shard$k"
  git clone -q --depth 1 --branch feature "file://$origin" "$dir"
  mkdir -p "$dir/.ste-baseline"
  cp "$cache/baseline.steb" "$dir/.ste-baseline/baseline.steb"
  args=$(cd "$dir" && STE_STORE="sqlite:$work/shard$k.store/ste.db" STE_SHARD="$k/3" STE_BASE_COMMIT="$main_sha" "$ci" shard 2> "$work/shard$k.log") \
    || { cat "$work/shard$k.log"; fail "shard $k"; }
  eval "set -- $args"
  for t in "$@"; do
    (cd "$dir" && sh "$t") || fail "shard $k: $t failed"
    echo "$t" >> "$ran"
  done
done
[ "$(sort "$ran")" = "$selected" ] || fail "the shards ran $(sort "$ran" | tr '\n' ' '), not the selection"
[ "$(sort "$ran" | uniq -d)" = "" ] || fail "a test ran in two shards"

# 3. A force tag in the PR's commit.
g -C "$origin" commit -q --allow-empty -m "feature: check everything [test all]"
pr_job forced
[ "$(out forced mode)" = all ] || fail "force tag: mode $(out forced mode)"
grep -q "force tag" "$work/forced.out" || fail "force tag: reason $(out forced reason)"
g -C "$origin" reset -q --hard HEAD~1

# 4. A damaged export: one byte flipped in the middle.
cp "$cache/baseline.steb" "$work/good.steb"
size=$(stat -c %s "$cache/baseline.steb")
printf '\xff' | dd of="$cache/baseline.steb" bs=1 seek=$((size / 2)) conv=notrunc status=none
pr_job damaged
[ "$(out damaged mode)" = all ] || fail "damaged export: mode $(out damaged mode)"
grep -q "refused" "$work/damaged.log" || fail "damaged export: not refused: $(cat "$work/damaged.log")"
grep -q "no usable baseline" "$work/damaged.out" || fail "damaged export: reason $(out damaged reason)"

# 5. No export at all.
rm -f "$cache/baseline.steb"
pr_job empty
[ "$(out empty mode)" = all ] || fail "no export: mode $(out empty mode)"
grep -q "no usable baseline" "$work/empty.out" || fail "no export: reason $(out empty reason)"

echo "ci_day: record+export, a depth-1 PR selecting $(echo "$selected" | wc -l) tests in 3 shards (each once), force tag -> all, damaged export -> all, no export -> all"
