#!/usr/bin/env bash
# `make demo`: what ste sees when a test runs. Builds a tiny repository
# with two shell "tests", runs each under the interceptor in its own scope,
# and prints what each one depended on.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
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
