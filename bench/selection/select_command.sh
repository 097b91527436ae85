#!/usr/bin/env bash
# P7 as a user runs it: `ste select` (the command, store and all) on an
# unchanged tree with a baseline, against `git status --porcelain` on the
# same tree, in the same run (issue 25).
#
#   bench/selection/select_command.sh BUILD_DIR
#
# The repository (FILES files in directories of 25, TESTS shell tests, each
# reading a few files) is generated once and cached under $STE_BENCH_DIR
# (default /tmp/ste-bench-select); a baseline is recorded once. Then, with a
# warm page cache, RUNS alternating timed pairs of
#   ste select --format json     (unchanged tree)
#   git status --porcelain
# and the same with one source file changed (CHANGED=1 then restored);
# medians of wall and CPU (user+sys of the process tree, from
# /usr/bin/time), and the ratio ste / git. Last, one `ste select --timings`
# of each shape: where the time goes.
#
# Environment: FILES (55000), TESTS (40), RUNS (15), STE_BENCH_DIR.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
ste=$build/ste
files=${FILES:-55000}
tests=${TESTS:-40}
runs=${RUNS:-15}
work=${STE_BENCH_DIR:-/tmp/ste-bench-select}
repo=$work/repo-$files-$tests
py=/usr/bin/python3
for tool in "$ste" git /usr/bin/time "$py"; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
mkdir -p "$work"

if [ ! -f "$repo.done" ]; then
  echo "== generating $repo: $files files, $tests tests (once; cached)"
  rm -rf "$repo"
  mkdir -p "$repo/tests"
  "$py" - "$repo" "$files" "$tests" <<'EOF'
import os, random, sys
root, files, tests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(1)
paths = []
for i in range(files):
    d = os.path.join(root, "src", "m%03d" % (i // 2500), "d%04d" % (i // 25))
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "f%02d.txt" % (i % 25))
    with open(p, "w") as f:
        f.write(("line %d of file %d\n" % (rng.randrange(1 << 30), i)) * rng.randrange(1, 40))
    paths.append(os.path.relpath(p, root))
for t in range(tests):
    reads = rng.sample(paths, 20)
    with open(os.path.join(root, "tests", "test_%03d.sh" % t), "w") as f:
        f.write("#!/bin/sh\ncat %s >/dev/null\n" % " ".join(reads))
EOF
  (
    cd "$repo"
    printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\njobs = 2\n' >ste.toml
    echo ".ste/" >.gitignore
    git init -q .
    git config gc.auto 0
    git add -A
    git -c user.name=bench -c user.email=bench@example.invalid commit -q -m "bench tree"
    "$ste" record --progress none >/dev/null
  )
  touch "$repo.done"
fi
cd "$repo"
changed=$(git ls-files src | sed -n 1000p)

# time_one OUT CMD...: wall and user+sys seconds of CMD, appended to OUT.
time_one() {
  local out=$1
  shift
  /usr/bin/time -f '%e %U %S' -o "$work/time.$$" "$@" >/dev/null 2>&1
  awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$work/time.$$" >>"$out"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

measure() {  # measure LABEL: RUNS pairs, medians and ratios
  local label=$1
  rm -f "$work/ste.t" "$work/git.t"
  "$ste" select --format json >/dev/null 2>&1  # warm-up (page cache, stat cache)
  git status --porcelain >/dev/null
  for _ in $(seq "$runs"); do
    time_one "$work/ste.t" "$ste" select --format json
    time_one "$work/git.t" git status --porcelain
  done
  local sw sc gw gc
  sw=$(cut -d' ' -f1 "$work/ste.t" | median)
  sc=$(cut -d' ' -f2 "$work/ste.t" | median)
  gw=$(cut -d' ' -f1 "$work/git.t" | median)
  gc=$(cut -d' ' -f2 "$work/git.t" | median)
  printf '%-22s ste %6.3f s wall %6.3f s CPU | git status %6.3f s wall %6.3f s CPU | ste/git %.2fx wall %.2fx CPU\n' \
    "$label" "$sw" "$sc" "$gw" "$gc" "$(echo "$sw / $gw" | bc -l)" "$(echo "$sc / $gc" | bc -l)"
}

echo "== $files files, $tests tests, $runs pairs each, medians (load: $(cut -d' ' -f1-3 /proc/loadavg))"
measure "unchanged tree"
cp "$changed" "$work/saved"
echo "changed" >>"$changed"
measure "one file changed"
echo "== where the time goes (--timings), one file changed"
"$ste" select --timings >/dev/null
cp "$work/saved" "$changed"
touch -d '2 hours ago' "$changed"
echo "== where the time goes (--timings), unchanged"
"$ste" select --timings >/dev/null
rm -f "$work/time.$$"
