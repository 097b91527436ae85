#!/usr/bin/env bash
# ctest GithubActionsValid: every GitHub action and workflow under deploy/
# passes @action-validator/cli (pinned in the Makefile, installed by `make
# deps` into BUILD/tools), and so does a workflow whose strategy.matrix is
# the literal output of a real `ste select --shards 3 --format matrix`: the
# shape ste prints is one GitHub accepts.
#
#   tests/ci/validate_actions.sh BUILD
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
validator="$build/tools/node_modules/.bin/action-validator"
if [ ! -x "$validator" ]; then
  echo "validate_actions: $validator is missing: run 'make deps'" >&2
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-actions-XXXXXX")
trap 'rm -rf "$work"' EXIT

n=0
while IFS= read -r -d '' f; do
  if ! "$validator" "$f" > "$work/out" 2>&1; then
    echo "validate_actions: $f is not valid:" >&2
    cat "$work/out" >&2
    exit 1
  fi
  n=$((n + 1))
done < <(find "$src/deploy/github" -name '*.yml' -print0)
[ "$n" -ge 5 ] || { echo "validate_actions: only $n files found" >&2; exit 1; }
echo "validate_actions: $n action and workflow files valid"

# A workflow with the real matrix in it.
repo="$work/repo"
mkdir -p "$repo/tests"
for i in 1 2 3 4 5; do echo "true" > "$repo/tests/test_$i.sh"; done
printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\n' > "$repo/ste.toml"
git -C "$repo" init -q -b main
git -C "$repo" -c user.email=t@example.com -c user.name=t add -A
git -C "$repo" -c user.email=t@example.com -c user.name=t commit -q -m init
(cd "$repo" && "$build/ste" record --progress none > /dev/null)
matrix=$(cd "$repo" && "$build/ste" select --all --shards 3 --format matrix 2> /dev/null)
cat > "$work/matrix.yml" <<YML
name: matrix shape
on: pull_request
jobs:
  tests:
    runs-on: ubuntu-latest
    strategy:
      matrix: $matrix
    steps:
      - run: echo "\${{ matrix.shard }} of \${{ matrix.of }}"
YML
"$validator" "$work/matrix.yml"
/usr/bin/python3 - "$matrix" <<'PY'
import json, sys
m = json.loads(sys.argv[1])
assert list(m) == ["include"] and len(m["include"]) == 3, m
assert sorted(t for e in m["include"] for t in e["tests"]) == ["tests/test_%d.sh" % i for i in range(1, 6)], m
PY
echo "validate_actions: a workflow with ste's matrix ($matrix) is valid"
