#!/usr/bin/env bash
# deploy/measure_scheduler_memory.sh BUILD_DIR [TESTS:FILES[:TOTAL] ...] — the peak
# RSS of `ste scheduler` over one distributed record build of a synthetic
# git repo, for the sizing rules in deploy/README.md.
#
# Per TESTS:FILES[:TOTAL] point (default 1000:10 2000:10 4000:10 1000:1000
# 1000:1000:20000): a fresh repo with TESTS shell tests tests/test_NNNNN.sh,
# each `cat`ting FILES consecutive files (from its own offset) of a src/ tree
# of TOTAL files (default max(FILES, 100)), so about TESTS x FILES content
# dependency records over TOTAL distinct paths, plus the shell and its
# libraries; `ste scheduler` on a fresh
# SQLite store under /usr/bin/time -v, one `ste worker -j2 -q` and
# `ste record --scheduler ADDR --wait --progress none` in the repo; then
# SIGTERM to the scheduler (by its pid, the child of time) and its "Maximum resident set size".
# Prints one line per point. Everything under a temp dir, removed on exit.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [TESTS:FILES ...]" >&2; exit 2; }
STE=$(cd "$1" && pwd)/ste
shift
points=("$@")
[ ${#points[@]} -gt 0 ] || points=(1000:10 2000:10 4000:10 1000:1000 1000:1000:20000)
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-sizing-XXXXXX")
sched_pid=
cleanup() {
  if [ -n "$sched_pid" ]; then kill -TERM "$sched_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

printf '%-8s %-8s %-8s %-14s %-16s %s\n' tests files src_files records_in_index scheduler_maxrss_kib wall_s
for point in "${points[@]}"; do
  IFS=: read -r tests files total <<<"$point"
  [ -n "$total" ] || total=$(( files > 100 ? files : 100 ))
  repo=$work/repo_${tests}_${files}_$total
  mkdir -p "$repo/tests" "$repo/src"
  (
    cd "$repo"
    # test i reads FILES files of src/ starting at the i-th (wrapping).
    for f in $(seq 0 $((total - 1))); do echo "file $f" >"src/f_$f.txt"; done
    awk -v n="$tests" -v k="$files" -v total="$total" 'BEGIN {
      for (i = 1; i <= n; i++) {
        t = sprintf("tests/test_%05d.sh", i)
        printf "cat" > t
        for (j = 0; j < k; j++) printf " src/f_%d.txt", (i * 37 + j) % total > t
        printf " >/dev/null\n" > t
        close(t)
      }
    }'
    # The scheduler's store, so that `ste deps` afterwards reads its baseline.
    printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\njobs = 2\n[store]\nurl = "sqlite:%s"\n' \
      "$work/s_${tests}_${files}_$total.db" >ste.toml
    echo ".ste/" >.gitignore
    git init -q . && git add -A &&
      git -c user.name=sizing -c user.email=sizing@example.invalid commit -q -m synthetic
  )
  rm -f "$work/port" "$work/time"
  /usr/bin/time -v -o "$work/time" \
    "$STE" scheduler --listen 127.0.0.1:0 --store "sqlite:$work/s_${tests}_${files}_$total.db" \
    --port-file "$work/port" 2>"$work/sched.err" &
  sched_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  addr=$(cat "$work/port")
  # The scheduler itself: the child of time(1), which SIGTERM would kill instead.
  ste_pid=$(ps -o pid= --ppid "$sched_pid" | tr -d ' ')
  t0=$(date +%s.%N)
  (cd "$repo" && "$STE" worker --scheduler "$addr" -j2 -q 2>"$work/worker.err") &
  wpid=$!
  (cd "$repo" && "$STE" record --scheduler "$addr" --wait --progress none >"$work/record.out" 2>&1) ||
    { echo "record failed:" >&2; cat "$work/record.out" "$work/worker.err" >&2; exit 1; }
  wait "$wpid"
  t1=$(date +%s.%N)
  kill -TERM "$ste_pid"; wait "$sched_pid" || true; sched_pid=
  # Dependencies of one test (all tests have as many), as `ste deps` lists them.
  records=$(cd "$repo" && "$STE" deps tests/test_00001.sh | wc -l)
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
  printf '%-8s %-8s %-8s %-14s %-16s %.1f\n' "$tests" "$files" "$total" "~$((tests * records))" "$rss" "$(echo "$t1 - $t0" | bc)"
done
