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
# and the same with one source file changed (one that test_000 reads: a
# subset is selected; then put back);
# medians of wall and CPU (user+sys of the process and what it waited
# for), and the ratio ste / git. Last, one `ste select --timings`
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
for tool in "$ste" git "$py"; do
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
changed=$(sed -n 2p tests/test_000.sh | cut -d' ' -f2)  # the first file test_000 reads

# measure LABEL: RUNS interleaved pairs (after one untimed pair), medians
# of wall and CPU (user+sys of the process and its children, from wait4).
measure() {
  "$py" - "$1" "$runs" "$ste" <<'EOF2'
import os, statistics, sys, time
label, runs, ste = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cmds = {"ste": [ste, "select", "--format", "json"], "git": ["git", "status", "--porcelain"]}
got = {k: [] for k in cmds}
null = os.open(os.devnull, os.O_WRONLY)
for r in range(runs + 1):
    for name, argv in cmds.items():
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execvp(argv[0], argv)
        _, status, ru = os.wait4(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(argv)} failed")
        if r:
            got[name].append(((time.perf_counter() - t0) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3))
med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()}
print(f"{label:17s} ste {med['ste'][0]:6.1f} ms wall {med['ste'][1]:6.1f} ms CPU | "
      f"git status {med['git'][0]:6.1f} ms wall {med['git'][1]:6.1f} ms CPU | "
      f"ste/git {med['ste'][0] / med['git'][0]:.2f}x wall {med['ste'][1] / med['git'][1]:.2f}x CPU")
EOF2
}

echo "== $files files, $tests tests, $runs pairs each, medians (load: $(cut -d' ' -f1-3 /proc/loadavg))"
measure "unchanged tree"
cp -p "$changed" "$repo.saved"
trap 'cp -p "$repo.saved" "$changed"' EXIT  # put back however this ends
echo "changed" >>"$changed"
"$ste" select 2>&1 >/dev/null | sed 's/^/   /'
measure "one file changed"
echo "== where the time goes (--timings), one file changed"
"$ste" select --timings >/dev/null
cp -p "$repo.saved" "$changed"
echo "== where the time goes (--timings), unchanged"
"$ste" select --timings >/dev/null
