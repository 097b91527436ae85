#!/usr/bin/env bash
# The behaviour reference: records small real repositories and asks
# `ste select` about a fixed list of changes, and compares what
# `ste index dump --json` and `ste select --format json` print with the
# reference outputs beside this script (written from ste as it was before
# the restructuring of issue 10). A refactoring must leave them identical.
#
#   golden.sh BUILD_DIR            compare (exit 1 and a diff on a difference)
#   golden.sh BUILD_DIR --update   rewrite the reference outputs
#
# Normalised before comparing (normalise.py): the temporary directories
# become <repo> and <ext>, commit ids <commit>, and index keys outside the
# repository (the interpreter, libc: they differ between machines) are
# dropped; the rest is compared byte for byte.
set -euo pipefail
build=$(cd "$1" && pwd)
scheduler=
scheduler_pid=
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
ste="$build/ste"
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-golden-XXXXXX")
stop_scheduler() {
  if [ -n "$scheduler_pid" ]; then
    kill "$scheduler_pid" 2>/dev/null || true
    wait "$scheduler_pid" 2>/dev/null || true
  fi
  scheduler= scheduler_pid=
}
trap 'stop_scheduler; rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out" "$work/tmp"
# The tests' temporary files (and the listings of their temp directory) in
# a directory of this run only: /tmp changes under other processes.
export TMPDIR="$work/tmp"

git_init() {  # dir
  git -C "$1" init -q -b main
  git -C "$1" config user.email golden@example.com
  git -C "$1" config user.name golden
  git -C "$1" config commit.gpgsign false
  git -C "$1" add -A
  git -C "$1" commit -q -m init
}

# select NAME [args...]: the JSON selection, normalised, into $out/NAME.
select_json() {
  local name=$1
  shift
  (cd "$repo" && "$ste" select --format json "$@" 2>/dev/null) |
    "$py" "$here/normalise.py" select "$repo" "$ext" > "$out/$fixture.$name.json"
}

# scenario NAME CHANGE-COMMAND [select args...]: make a change, select
# (and through the scheduler too, when one runs), put the tree back as it
# was committed.
scenario() {
  local name=$1 change=$2
  shift 2
  (cd "$repo" && sh -c "$change")
  select_json "$name" "$@"
  if [ -n "$scheduler" ]; then select_json "$name.remote" --scheduler "$scheduler" "$@"; fi
  git -C "$repo" reset -q --hard
  git -C "$repo" clean -q -fdx -e .ste -e build
}

record_and_dump() {
  # Some repositories have failing tests on purpose: the baseline is what
  # is compared, not the exit code.
  (cd "$repo" && "$ste" record --progress none --allow-failures >/dev/null)
  (cd "$repo" && "$ste" index dump --json) |
    "$py" "$here/normalise.py" index "$repo" "$ext" > "$out/$fixture.index.json"
}

# ---- polyglot: examples/polyglot (Python, shell, C) ------------------------
fixture=polyglot
repo="$work/polyglot"
ext="$work/none"
cp -a "$src/examples/polyglot" "$repo"
rm -rf "$repo/.ste" "$repo/build"
git_init "$repo"
record_and_dump
select_json nothing
scenario money 'echo "# more" >> src/money.py'
scenario new_module 'echo "X = 1" > src/extra.py'
scenario new_fixture 'echo "{}" > fixtures/cases/new_order.json'
scenario deleted_fixture 'rm fixtures/cases/empty_order.json'
scenario config_ini 'echo "; x" >> config/eu.ini'
scenario csrc 'echo "/* x */" >> csrc/ean13.c'
scenario docs_only 'echo more >> docs/guide.md'
scenario run_all 'echo "# x" >> .ci/pipeline.yml'
scenario ste_toml 'echo "" >> ste.toml'
scenario new_test 'cp tests/test_units.py tests/test_units2.py'
scenario deleted_test 'rm tests/test_units.py'
scenario all_flag 'echo "# more" >> src/money.py' --all
scenario base_id 'echo "# more" >> src/units.py' --base 1
scenario force_tag 'echo "# x" >> src/units.py && git add -A && git commit -q -m "units [test all]"'
(cd "$repo" && echo "# more" >> src/money.py && "$ste" select --changed-files 2>/dev/null) \
  > "$out/$fixture.changed_files.txt"
git -C "$repo" checkout -q -- .

# ---- shell: the select e2e fixture (absent, listing, external) -------------
fixture=shell
repo="$work/shell"
ext="$work/ext"
mkdir -p "$repo/lib" "$repo/fixtures" "$repo/tests" "$repo/docs" "$repo/.ci" "$ext/site"
echo 'VERSION = 1' > "$ext/site/lib.py"
echo 'a() { echo A; }' > "$repo/lib/a.sh"
echo 'b() { echo B; }' > "$repo/lib/b.sh"
echo 1 > "$repo/fixtures/one.txt"
echo 2 > "$repo/fixtures/two.txt"
printf '. lib/a.sh\n[ "$(a)" = A ] || exit 1\nfor f in fixtures/*.txt; do read x < "$f"; done\n' \
  > "$repo/tests/test_a.sh"
printf '. lib/b.sh\n[ "$(b)" = B ] || exit 1\n[ -f config/local.env ] && . config/local.env\nexit 0\n' \
  > "$repo/tests/test_b.sh"
printf "grep -q VERSION '%s/site/lib.py'\n" "$ext" > "$repo/tests/test_ext.sh"
printf 'exit 1\n' > "$repo/tests/test_fails.sh"
echo '# guide' > "$repo/docs/guide.md"
echo 'steps: []' > "$repo/.ci/pipeline.yml"
cat > "$repo/ste.toml" <<'TOML'
[tests]
include = ["tests/test_*.sh"]
[runner]
command = "sh {test}"
[selection]
run_all = ["ste.toml", ".ci/**"]
skip_all = ["docs/**", "*.md"]
TOML
git_init "$repo"
record_and_dump
# A scheduler on the same store: `select --scheduler` must answer as the
# local select does.
"$ste" scheduler --listen "unix:$work/scheduler.sock" --store "sqlite:$repo/.ste/ste.db" \
  --port-file "$work/scheduler.addr" 2>"$work/scheduler.log" &
scheduler_pid=$!
for _ in $(seq 600); do [ -s "$work/scheduler.addr" ] && break; sleep 0.1; done
[ -s "$work/scheduler.addr" ] || { cat "$work/scheduler.log" >&2; exit 1; }
scheduler=$(cat "$work/scheduler.addr")
select_json nothing
scenario lib_a 'echo "# x" >> lib/a.sh'
scenario absent_appears 'mkdir -p config && echo X=1 > config/local.env'
scenario listing 'echo 3 > fixtures/three.txt'
scenario external "echo 'VERSION = 2' > '$ext/site/lib.py'"
echo 'VERSION = 1' > "$ext/site/lib.py"
scenario external_gone "rm '$ext/site/lib.py'"
echo 'VERSION = 1' > "$ext/site/lib.py"
scenario docs_only 'echo x >> docs/guide.md'
scenario runner_format 'echo "# x" >> lib/b.sh' --explain
(cd "$repo" && echo "# x" >> lib/b.sh && "$ste" select --format runner 2>/dev/null) \
  > "$out/$fixture.runner.txt"
git -C "$repo" checkout -q -- .
stop_scheduler

# ---- pytest: a batch runner (kind = "pytest"), case scopes -----------------
fixture=pytest
repo="$work/pytest"
ext="$work/none"
mkdir -p "$repo/pkg" "$repo/tests"
echo 'def one(): return 1' > "$repo/pkg/one.py"
echo 'def two(): return 2' > "$repo/pkg/two.py"
touch "$repo/pkg/__init__.py"
printf 'from pkg.one import one\n\ndef test_one():\n    assert one() == 1\n' > "$repo/tests/test_one.py"
printf 'from pkg.two import two\n\ndef test_two():\n    assert two() == 2\n\ndef test_two_again():\n    assert two() + 0 == 2\n' \
  > "$repo/tests/test_two.py"
cat > "$repo/ste.toml" <<'TOML'
[tests]
include = ["tests/test_*.py"]
[runner]
kind = "pytest"
command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest {tests}"
case_scopes = true
[inventory]
ignore = ["**/__pycache__/**"]
[selection]
granularity = "file"
TOML
git_init "$repo"
record_and_dump
select_json nothing
scenario two 'echo "# x" >> pkg/two.py'
scenario test_one 'echo "# x" >> tests/test_one.py'
(cd "$repo" && echo "# x" >> pkg/two.py && "$ste" select --format runner 2>/dev/null) \
  > "$out/$fixture.runner.txt"
git -C "$repo" checkout -q -- .

# ---- compare ---------------------------------------------------------------
if [ "$update" = --update ]; then
  rm -f "$here"/expected/*
  mkdir -p "$here/expected"
  cp "$out"/* "$here/expected/"
  echo "golden.sh: wrote $(ls "$out" | wc -l) reference outputs to $here/expected"
  exit 0
fi
if ! diff -ru "$here/expected" "$out"; then
  echo "golden.sh: the outputs differ from the reference (above: expected -> now)" >&2
  exit 1
fi
echo "golden.sh: $(ls "$out" | wc -l) outputs identical to the reference"
