#!/usr/bin/env bash
# `make demo`, in two parts.
#  1. What ste sees when a test runs: builds a tiny repository with two
#     shell "tests", runs each under the interceptor in its own scope, and
#     prints what each one depended on.
#  2. Selection on a real example (examples/polyglot: Python, shell and C
#     tests): record a baseline, make a change, ask which tests it affects.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
ste="$build/ste"
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-demo-XXXXXX")
repo="$work/repo"
mkdir -p "$repo/lib" "$repo/tests" "$repo/fixtures"
cat > "$repo/lib/math.sh" <<'SH'
add() { echo $(( $1 + $2 )); }
SH
cat > "$repo/lib/strings.sh" <<'SH'
upper() { echo "$1" | tr a-z A-Z; }
SH
printf '1 2 3\n' > "$repo/fixtures/one.txt"
printf '4 5 9\n' > "$repo/fixtures/two.txt"
cat > "$repo/tests/test_math.sh" <<'SH'
. lib/math.sh
for f in fixtures/*.txt; do            # a glob: a `listing` dependency
  read a b want < "$f"
  [ "$(add "$a" "$b")" = "$want" ] || { echo "FAIL $f"; exit 1; }
done
[ -f config/override.env ] && . config/override.env   # probed: `absent`
echo "test_math ok"
SH
cat > "$repo/tests/test_strings.sh" <<'SH'
. lib/strings.sh
[ "$(upper abc)" = ABC ] || exit 1
echo "test_strings ok"
SH

echo "== A small repository: $repo"
(cd "$repo" && find . -type f | sort | sed 's/^/   /')
echo
for t in tests/test_math.sh tests/test_strings.sh; do
  echo "== ste run --scope //r/$t -- sh $t"
  (cd "$repo" && "$ste" run --scope "//r/$t" --log-dir "$work/logs" -- sh "$t")
done
echo
echo "== What each test depended on (ste log dump, paths inside the repo):"
"$ste" log dump "$work/logs" |
  awk -F'\t' -v repo="$repo/" 'index($6, repo) == 1 {
      sub(repo, "", $6); printf "   %-26s %-8s %-7s %s\n", $3, $4, $5, $6 }' | sort -u
echo
total=$("$ste" log dump "$work/logs" | wc -l)
procs=$(ls "$work/logs" | wc -l)
echo "== $total records from $procs processes in all (programs and shared"
echo "   libraries outside the repo too: 'ste log dump $work/logs')."
echo "   test_math depends on lib/math.sh, its fixtures, the fixtures/ listing"
echo "   and the absence of config/override.env; test_strings only on"
echo "   lib/strings.sh and the tr it runs. A change to lib/strings.sh"
echo "   can only affect test_strings."

echo
echo "=================================================================="
echo "Part 2: selecting tests in a real example (examples/polyglot)"
echo "=================================================================="
poly="$work/polyglot"
cp -r "$root/examples/polyglot" "$poly"
rm -rf "$poly/.ste" "$poly/build"
cd "$poly"
git init -q
git add -A
git -c user.name=demo -c user.email=demo@example.com commit -qm "polyglot example"
echo "== A copy in $poly, committed to a fresh git repository:"
echo "   10 tests: Python unittest files, shell scripts, a C program"
echo "   compiled by its test (what each shows: examples/polyglot/README.md)."
echo
echo "== ste record: run every test under the interceptor, store a baseline"
if ! "$ste" record --progress none > "$work/record.log" 2>&1; then
  cat "$work/record.log"; exit 1
fi
grep '^ste record:' "$work/record.log" | sed 's/^/   /'
echo
echo "== A change: a new helper in the shared module src/money.py, and a new"
echo "   pricing case, fixtures/cases/large_order.json"
cat >> src/money.py <<'PY'


def is_free(cents):
    """True for a zero amount (a gift, a fully discounted line)."""
    return cents == 0
PY
cat > fixtures/cases/large_order.json <<'JSON'
{
  "name": "a large bulk order",
  "lines": [[1000, 50]],
  "total": 51300
}
JSON
git status --short | sed 's/^/   /'
echo
echo "== ste select --explain"
"$ste" select --explain 2>&1 | sed 's/^/   /'
echo
echo "== Running only those tests:"
"$ste" select 2>/dev/null | while read -r t; do
  if sh run_test.sh "$t" > /dev/null 2>&1; then echo "   pass  $t"; else echo "   FAIL  $t"; fi
done
echo
cat <<'TXT'
== Why these and not the others. When the baseline was recorded, every
   test process that imported money.py opened src/money.py, so the change
   to it selects test_money, test_pricing, test_pricing_eu, test_cases,
   test_report and test_receipt_cli (a shell test: it runs bin/receipt.py,
   and ste followed that Python child). test_cases is also selected by the
   new fixture: it found its cases with glob.glob, which listed the
   directory fixtures/cases, and that listing has changed. test_records,
   test_units, test_slugify and test_ean13 never opened money.py nor listed
   fixtures/cases, so no change here can affect them: ste leaves them out.
   Nobody wrote these dependencies down; they were observed.
TXT
