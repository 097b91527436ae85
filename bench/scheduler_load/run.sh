#!/usr/bin/env bash
# bench/scheduler_load/run.sh BUILD_DIR — the scheduler under load and
# under faults (issue 14, item 4): real processes on loopback.
#
#   clean   `ste scheduler` on a fresh SQLite store, WORKERS x `ste worker
#           -j1`, `ste record --scheduler --wait`, TESTS synthetic tests.
#           Figures: the scheduler's peak RSS (VmHWM), its CPU (user+sys,
#           /proc/PID/stat) per 1,000 tests, results/s (TESTS over the time
#           from starting workers and record to the record's exit).
#   faults  the same build, with a worker SIGKILLed every KILL_EVERY
#           seconds (by pid, and replaced, so WORKERS keep running) and the
#           scheduler SIGKILLed and restarted twice: when the store holds a
#           third and two thirds of the results (`ste baseline list`, store
#           rows), restarted on the same address and --instance-id, so it
#           resumes the build at once.
#   checks  both builds have every test passed, once (TESTS results
#           stored); each test appends a line to a file outside the repo
#           when it runs, so runs - TESTS is how many ran again; and the
#           two indexes' `ste index dump --json` are identical.
#
# The repo: TESTS shell tests tests/t_NNNNN.sh (runner `sh {test}`), each
# sourcing src/lib/common.sh, reading 3 files of a src/ tree of 100
# packages x 20 files, listing one package directory (a glob) and probing
# an absent file: one traced process per test, 4 content, 1 listing and 1
# absent dependencies plus the shell itself. Everything lives in a fresh
# directory under $TMPDIR (default /tmp), removed on exit.
#
# Knobs (environment): TESTS (10000), WORKERS (32), KILL_EVERY (3),
# LEASE_TIMEOUT (5: the scheduler's --lease-timeout, --heartbeat 1),
# SKIP_FAULTS=1, KEEP=1 (keep the directory, with every process's log).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
TESTS=${TESTS:-10000}
WORKERS=${WORKERS:-32}
KILL_EVERY=${KILL_EVERY:-3}
# A killed worker's leases go back after this (the build's end waits for
# the last of them); the scheduler's default is 30 s.
LEASE_TIMEOUT=${LEASE_TIMEOUT:-5}
STE=$BUILD/ste

work=$(mktemp -d "${TMPDIR:-/tmp}/ste-bench-load-XXXXXX")
sched_pid=
worker_pids=()
cleanup() {
  # Only what this script started, by pid.
  if [ -n "$sched_pid" ]; then kill -KILL "$sched_pid" 2>/dev/null || true; fi
  for p in "${worker_pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
proc_cpu() {
  awk -v tck="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / tck }' "/proc/$1/stat"
}
peak_rss_mib() { awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
stored_results() {
  (cd "$repo" && "$STE" baseline list --format json 2>/dev/null) |
    sed -n 's/.*{"id":1,[^}]*"tests":\([0-9]*\).*/\1/p' | head -n1
}

echo "ste scheduler load benchmark — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host: $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"

repo=$work/repo
store=$work/store/ste.db
runs=$work/runs.log
mkdir -p "$repo/src/lib" "$repo/tests"
(
  cd "$repo"
  for p in $(seq -w 0 99); do
    mkdir -p "src/pkg_$p"
    for m in $(seq -w 0 19); do echo "pkg $p module $m" >"src/pkg_$p/mod_$m.txt"; done
  done
  cat >src/lib/common.sh <<'EOF'
check() { read -r line <"$1" && [ -n "$line" ]; }
EOF
  awk -v n="$TESTS" -v runs="$runs" 'BEGIN {
    for (i = 1; i <= n; i++) {
      f = sprintf("tests/t_%05d.sh", i)
      a = i % 100; b = (i * 7) % 100; c = (i * 13) % 100; m = i % 20
      printf ". ./src/lib/common.sh\n" > f
      printf "check src/pkg_%02d/mod_%02d.txt\n", a, m > f
      printf "check src/pkg_%02d/mod_%02d.txt\n", b, (m + 1) % 20 > f
      printf "check src/pkg_%02d/mod_%02d.txt\n", c, (m + 2) % 20 > f
      printf "for x in src/pkg_%02d/*; do :; done\n", a > f
      printf "[ -e src/pkg_%02d/_native.so ] && exit 3\n", b > f
      printf "echo \"$0\" >>%s\n", runs > f
      close(f)
    }
  }'
  cat >ste.toml <<EOF
[tests]
include = ["tests/t_*.sh"]
[runner]
command = "sh {test}"
[store]
url = "sqlite:$store"
EOF
  echo ".ste/" >.gitignore
  git init -q .
  git add -A
  git -c user.name=bench -c user.email=bench@example.invalid commit -q -m synthetic
)
echo "repo: $TESTS tests, $(find "$repo/src" -type f | wc -l) source files; $WORKERS workers"
echo

start_scheduler() {  # LISTEN LOG: sets sched_pid and addr
  rm -f "$work/port"
  "$STE" scheduler --listen "$1" --store "sqlite:$store" --instance-id bench-scheduler \
    --lease-timeout "$LEASE_TIMEOUT" --heartbeat 1 --port-file "$work/port" 2>>"$2" &
  sched_pid=$!
  local i
  for i in $(seq 1 1000); do
    [ -s "$work/port" ] && break
    sleep 0.01
  done
  [ -s "$work/port" ] || { echo "the scheduler did not start:" >&2; cat "$2" >&2; exit 1; }
  addr=$(head -n1 "$work/port")
}

start_worker() {  # N
  (cd "$repo" && exec "$STE" worker --scheduler "$addr" -j1 -q 2>>"$work/w$1.err") &
  worker_pids[$1]=$!
}

run_build() {  # NAME FAULTS(0/1): prints figures, leaves the dump in $work/NAME.dump
  local name=$1 faults=$2
  rm -rf "$work/store" "$runs"
  mkdir -p "$work/store"
  local log=$work/$name.sched.err
  : >"$log"
  start_scheduler 127.0.0.1:0 "$log"
  local listen=$addr
  local cpu=0 s0 t0 t1 i
  s0=$(proc_cpu "$sched_pid")
  t0=$(now)
  worker_pids=()
  for i in $(seq 1 "$WORKERS"); do start_worker "$i"; done
  (cd "$repo" && exec "$STE" record --scheduler "$addr" --wait --progress none \
     >"$work/$name.out" 2>"$work/$name.err") &
  local record_pid=$!
  local kills=0 restarts=0 next_kill
  next_kill=$(awk -v t="$(now)" -v k="$KILL_EVERY" 'BEGIN { printf "%.3f", t + k }')
  while kill -0 "$record_pid" 2>/dev/null; do
    if [ "$faults" = 1 ]; then
      local stored
      stored=$(stored_results)
      if [ "$restarts" -lt 2 ] && [ -n "$stored" ] &&
         [ "$stored" -ge $(( TESTS * (restarts + 1) / 3 )) ]; then
        cpu=$(awk -v a="$cpu" -v b="$(proc_cpu "$sched_pid")" -v c="$s0" 'BEGIN { print a + b - c }')
        kill -KILL "$sched_pid"
        wait "$sched_pid" 2>/dev/null || true
        start_scheduler "$listen" "$log"
        s0=$(proc_cpu "$sched_pid")
        restarts=$((restarts + 1))
        echo "  $name: scheduler SIGKILLed at $stored results stored, $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s in; restarted (pid $sched_pid)" >&2
      fi
      if awk -v t="$(now)" -v n="$next_kill" 'BEGIN { exit !(t >= n) }'; then
        i=$(( (RANDOM % WORKERS) + 1 ))
        kill -KILL "${worker_pids[$i]}" 2>/dev/null || true
        wait "${worker_pids[$i]}" 2>/dev/null || true
        start_worker "$i"
        kills=$((kills + 1))
        next_kill=$(awk -v t="$(now)" -v k="$KILL_EVERY" 'BEGIN { printf "%.3f", t + k }')
      fi
    fi
    sleep 0.2
  done
  wait "$record_pid" || { echo "$name: the record failed:" >&2; cat "$work/$name.out" "$work/$name.err" "$log" >&2; exit 1; }
  t1=$(now)
  cpu=$(awk -v a="$cpu" -v b="$(proc_cpu "$sched_pid")" -v c="$s0" 'BEGIN { print a + b - c }')
  local rss
  rss=$(peak_rss_mib "$sched_pid")
  for i in $(seq 1 "$WORKERS"); do wait "${worker_pids[$i]}" 2>/dev/null || true; done
  worker_pids=()
  grep -q "$TESTS tests, $TESTS passed" "$work/$name.out" ||
    { echo "$name: unexpected result:" >&2; cat "$work/$name.out" >&2; exit 1; }
  local stored
  stored=$(stored_results)
  (cd "$repo" && "$STE" index dump --json) >"$work/$name.dump"
  kill -TERM "$sched_pid"
  wait "$sched_pid" 2>/dev/null || true
  sched_pid=
  local wall ran
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  ran=$(wc -l <"$runs")
  printf '%-7s wall %7.1f s | %6.1f results/s | scheduler: peak RSS %6.1f MiB (last process), CPU %6.2f s = %5.3f s per 1k tests | results stored %s, test runs %s (%s again) | workers killed %s, scheduler restarts %s, duplicates logged %s\n' \
    "$name" "$wall" "$(awk -v n="$TESTS" -v w="$wall" 'BEGIN { print n / w }')" "$rss" "$cpu" \
    "$(awk -v c="$cpu" -v n="$TESTS" 'BEGIN { print c / (n / 1000) }')" "$stored" "$ran" \
    "$((ran - TESTS))" "$kills" "$restarts" "$(grep -c 'duplicate result' "$log" || true)"
}

run_build clean 0
if [ "${SKIP_FAULTS:-0}" != 1 ]; then
  run_build faults 1
  if cmp -s "$work/clean.dump" "$work/faults.dump"; then
    echo "index: identical (ste index dump --json, $(wc -l <"$work/clean.dump") tests)"
  else
    echo "index: DIFFERENT" >&2
    diff "$work/clean.dump" "$work/faults.dump" | head -20 >&2
    exit 1
  fi
fi
