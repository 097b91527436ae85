#!/bin/bash
# `ste report` at scale (issue 26): a store of 100,000 tests, 5,000 builds
# and 200 audits (report_store.cc), then the page made and loaded.
#   bench/report/run.sh BUILD_DIR [TESTS] [BUILDS]
# Prints: the time `ste report` takes, the page's size, and the time a
# headless Chromium takes to load it and build its DOM (--dump-dom),
# against the same Chromium on an empty page (its own start-up), in the
# same run.
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [TESTS] [BUILDS]}" && pwd)
tests=${2:-100000}
builds=${3:-5000}
[ -x "$build/bench/report_store" ] || cmake --build "$build" --target report_store >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bench/report_store" "$work/repo" --tests "$tests" --builds "$builds"
cd "$work/repo"
t0=$(date +%s.%N)
"$build/ste" report -o "$work/report.html"
t1=$(date +%s.%N)
echo "ste report: $(echo "$t1 - $t0" | bc) s; page $(stat -c %s "$work/report.html") bytes"
echo '<!DOCTYPE html><html><body></body></html>' > "$work/empty.html"
load() {
  local s e
  s=$(date +%s.%N)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" --dump-dom \
    "file://$1" > "$work/dom.out" 2>/dev/null
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}
for i in 1 2 3; do
  echo "chromium: empty page $(load "$work/empty.html") s, the report $(load "$work/report.html") s" \
       "(DOM $(stat -c %s "$work/dom.out") bytes)"
done
