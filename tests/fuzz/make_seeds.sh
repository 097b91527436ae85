#!/usr/bin/env bash
# Remakes the seed corpora of tests/fuzz/<target>/ (the files named
# seed-*) from real runs of a built ste: logs of real processes, the
# inventory, index and baseline export of real record builds, the
# ste.toml files of the examples, $STE_RESULTS lines written by the real
# batch runners, and Report streams of real test runs (make_report_seeds.cc).
# Regression inputs (regress-*) are never touched, nor the selection
# index's v1-* (format version 1, which readers still take: made by the
# ste of 2026-12-04, before version 2).
#
#   tests/fuzz/make_seeds.sh BUILD FUZZ_BUILD
#
# BUILD holds ste and libste_preload.so; FUZZ_BUILD the fuzz tree
# (ste_fuzz_make_report_seeds). Keeps every seed small (a few KB).
set -euo pipefail
build=$(realpath "$1")
fuzz_build=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
ste=$build/ste
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for t in log_reader inventory selection_index config runner_results baseline_archive report_stream; do
  mkdir -p "$here/$t"
  rm -f "$here/$t"/seed-*
done

commit() { git -C "$1" add -A && git -C "$1" -c user.name=seed -c user.email=seed@ste commit -qm "$2"; }

# A tiny repository: two shell tests (one reads a file, one lists a
# directory and looks for a missing file), no external files inventoried
# in the second build, so that the images stay small.
tiny() {
  local dir=$1 external=$2
  mkdir -p "$dir/tests" "$dir/data"
  printf 'a\n' >"$dir/data/a.txt"
  printf 'b\n' >"$dir/data/b.txt"
  printf 'cat data/a.txt\n' >"$dir/tests/test_read.sh"
  printf 'ls data >/dev/null; test -e data/missing || exit 0\n' >"$dir/tests/test_list.sh"
  printf 'exit 1\n' >"$dir/tests/test_fails.sh"
  cat >"$dir/ste.toml" <<TOML
[tests]
include = ["tests/test_*.sh"]
[runner]
command = "sh {test}"
[inventory]
external = $external
TOML
  git -C "$dir" init -q
  commit "$dir" tiny
}

n=0
for variant in "tiny-noext false" "tiny-ext true"; do
  set -- $variant
  dir=$work/$1
  tiny "$dir" "$2"
  (cd "$dir" && "$ste" record >/dev/null 2>&1) || true
  (cd "$dir" && "$ste" baseline export latest -o "$here/baseline_archive/seed-$1.stebase" >/dev/null)
  for blob in "$dir"/.ste/blobs/*-inventory-*.blob; do cp "$blob" "$here/inventory/seed-$1.inv"; done
  for blob in "$dir"/.ste/blobs/*-index-*.blob; do cp "$blob" "$here/selection_index/seed-$1.idx"; done
  (cd "$dir" && "$ste" inventory -o "$here/inventory/seed-$1-scan.inv" >/dev/null)
done

# The polyglot example's inventory (its index and export are larger: kept
# out), and one inventory with a symlink, an executable and an empty dir.
poly=$work/polyglot
cp -r "$src/examples/polyglot" "$poly"
git -C "$poly" init -q && commit "$poly" polyglot
odd=$work/odd
mkdir -p "$odd/empty" "$odd/d"
printf '#!/bin/sh\n' >"$odd/run.sh" && chmod +x "$odd/run.sh"
ln -s run.sh "$odd/link" && ln -s nowhere "$odd/dangling" && ln -s d "$odd/dirlink"
printf '[tests]\ninclude = ["*.sh"]\n[runner]\ncommand = "sh {test}"\n' >"$odd/ste.toml"
(cd "$odd" && "$ste" inventory -o "$here/inventory/seed-odd.inv" >/dev/null)

# Logs of real processes: each of these commands under `ste run`, in the
# tiny repository; every log file kept when it is small.
logs() {
  local name=$1; shift
  local d=$work/logs-$name
  (cd "$work/tiny-ext" && "$ste" run --scope "//r/tests/$name" --log-dir "$d" -- "$@" >/dev/null 2>&1) || true
  local i=0
  for f in "$d"/*.stelog; do
    [ -f "$f" ] || continue
    [ "$(stat -c %s "$f")" -le 16384 ] || continue
    i=$((i + 1))
    cp "$f" "$here/log_reader/seed-$name-$i.stelog"
  done
}
logs cat cat data/a.txt
logs ls ls data
logs sh-fork sh -c 'cat data/a.txt | wc -l; ls data >/dev/null; test -e nope'
logs missing stat data/missing
logs static "$build/tests/cases/static_opener" data/a.txt
logs env env -i /bin/cat data/b.txt
logs write sh -c 'echo x > data/out.txt; cat data/out.txt; rm data/out.txt'

# Every ste.toml of the examples, the ones the README shows and the ones
# the end-to-end tests write (their raw string literals with a [section]
# ste.toml has), and the tiny one.
i=0
while IFS= read -r f; do
  i=$((i + 1))
  cp "$f" "$here/config/seed-example-$i.toml"
done < <(find "$src/examples" -name ste.toml -size -8k | sort)
cp "$work/tiny-ext/ste.toml" "$here/config/seed-tiny.toml"
/usr/bin/python3 - "$src" "$here/config" <<'PY'
import glob, re, sys
src, out = sys.argv[1], sys.argv[2]
texts = []
for block in re.findall(r"```toml\n(.*?)```", open(src + "/README.md").read(), re.S):
    texts.append(block)
# W("ste.toml", "..." "..."): the adjacent C string literals after the name.
lit = r'"((?:[^"\\\n]|\\.)*)"'
for f in sorted(glob.glob(src + "/tests/**/*.cc", recursive=True)):
    code = open(f, errors="replace").read()
    for m in re.finditer(r'"ste\.toml",\s*((?:' + lit + r'\s*)+)[),]', code):
        parts = re.findall(lit, m.group(1))
        texts.append(bytes("".join(parts), "utf-8").decode("unicode_escape"))
seen = set()
for t in texts:
    if t in seen or len(t) > 4096:
        continue
    seen.add(t)
    open("%s/seed-doc-%02d.toml" % (out, len(seen)), "w").write(t)
PY

# $STE_RESULTS as the real batch runners write them: the pytest plugin on
# a small suite, and lines of every outcome.
py=$work/py
mkdir -p "$py/tests"
printf 'def test_ok():\n    assert True\n' >"$py/tests/test_ok.py"
printf 'def test_bad():\n    assert False\n' >"$py/tests/test_bad.py"
printf 'import nope\n' >"$py/tests/test_error.py"
(cd "$py" && STE_RESULTS=$here/runner_results/seed-pytest.tsv STE_INTEGRATIONS=$src/integrations \
  PYTHONPATH=$src/integrations/python /usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest tests >/dev/null 2>&1) || true
[ -s "$here/runner_results/seed-pytest.tsv" ] || rm -f "$here/runner_results/seed-pytest.tsv"
# The same suite recorded with the pytest runner: shared (ancestor) scope
# dependencies in its index.
printf '[tests]\ninclude = ["tests/test_*.py"]\n[runner]\nkind = "pytest"\n[inventory]\nexternal = false\n' >"$py/ste.toml"
git -C "$py" init -q && commit "$py" pytest
(cd "$py" && "$ste" record >/dev/null 2>&1) || true
(cd "$py" && "$ste" baseline export latest -o "$here/baseline_archive/seed-pytest.stebase" >/dev/null) || true
for blob in "$py"/.ste/blobs/*-index-*.blob; do cp "$blob" "$here/selection_index/seed-pytest.idx"; done
for blob in "$py"/.ste/blobs/*-inventory-*.blob; do cp "$blob" "$here/inventory/seed-pytest.inv"; done
# (Python reads hundreds of files of its own: kept only when small.)
find "$here/selection_index" "$here/baseline_archive" -name 'seed-pytest.*' -size +16k -delete
printf 'passed\t0\t0.25\ttests/a.py\nfailed\t1\t1.5\ttests/b c.py\nerror\t-1\t0\ttests/t\tab.py\r\ntorn' \
  >"$here/runner_results/seed-outcomes.tsv"

# Report streams of real test runs (the tiny repository's tests and two
# of polyglot's), whole and with results split into parts of 4 ids.
"$fuzz_build/fuzz/ste_fuzz_make_report_seeds" "$work/tiny-ext/ste.toml" "$build/libste_preload.so" \
  "$work" 1048576 tests/test_read.sh tests/test_list.sh tests/test_fails.sh
for f in "$work"/*.stream; do mv "$f" "$here/report_stream/seed-tiny-$(basename "$f")"; done
"$fuzz_build/fuzz/ste_fuzz_make_report_seeds" "$work/tiny-ext/ste.toml" "$build/libste_preload.so" \
  "$work" 4 tests/test_read.sh tests/test_list.sh
for f in "$work"/*.stream; do mv "$f" "$here/report_stream/seed-split-$(basename "$f")"; done
"$fuzz_build/fuzz/ste_fuzz_make_report_seeds" "$poly/ste.toml" "$build/libste_preload.so" \
  "$work" 64 tests/test_slugify.sh tests/test_units.py
for f in "$work"/*.stream; do
  [ "$(stat -c %s "$f")" -le 36000 ] && mv "$f" "$here/report_stream/seed-poly-$(basename "$f")"
done
rm -f "$work"/*.stream

for t in log_reader inventory selection_index config runner_results baseline_archive report_stream; do
  printf '%-18s %3d files %6d KB\n' "$t" "$(ls "$here/$t" | wc -l)" "$(du -sk "$here/$t" | cut -f1)"
done
