#!/usr/bin/env bash
# bench/distributed/run.sh BUILD_DIR — what distributing a record build
# costs, and P8 (ingest over loopback gRPC).
#
#   overhead  the same 1,000-test record build of a synthetic git repo,
#             (a) embedded:    ste record -j4 --progress none
#             (b) distributed: ste scheduler --listen 127.0.0.1:0 (started
#                 beforehand on a fresh SQLite store, stopped with SIGTERM
#                 by its pid afterwards), 4 x `ste worker -j1 -q` in the same checkout
#                 and `ste record --scheduler ADDR --wait --progress none`,
#                 all started together.
#             Wall: (a) the record; (b) from starting workers and record to
#             the last of them exiting (also shown: to the record's exit,
#             when the baseline is stored). CPU: user+sys of every process of
#             the variant and its children (the tests), the scheduler's
#             counted from just before the build to its end (/proc/PID/stat).
#             ROUNDS rounds after one warm-up round, (a) and (b) alternating;
#             medians, min-max, ratio (b)/(a) of the medians. Target <= 1.2x.
#   P8        BUILD_DIR/bench/ingest_bench with its defaults (INGEST_ARGS).
#
# The repo: TESTS shell tests tests/test_NNNN.sh (runner `sh {test}`), each
# sourcing src/lib/common.sh and reading 3 files of a shared src/ tree (50
# packages x 20 files) plus one more through `cat`: two traced processes
# per test. Everything lives under a fresh directory in $TMPDIR (default
# /tmp), removed on exit.
#
# Knobs (environment): ROUNDS (5), TESTS (1000), WORKERS (4), SKIP_P8=1,
# SKIP_OVERHEAD=1, INGEST_ARGS (extra flags for ingest_bench).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
ROUNDS=${ROUNDS:-5}
TESTS=${TESTS:-1000}
WORKERS=${WORKERS:-4}
STE=$BUILD/ste
INGEST=$BUILD/bench/ingest_bench

if ! cmake --build "$BUILD" --target ste ste_preload ingest_bench >/dev/null 2>&1; then
  for bin in "$STE" "$BUILD/libste_preload.so" "$INGEST"; do
    [ -e "$bin" ] || { echo "$0: cannot build $bin in $BUILD" >&2; exit 1; }
  done
  echo "warning: the build failed; measuring the binaries already in $BUILD" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ste-bench-dist-XXXXXX")
sched_pid=
cleanup() {
  if [ -n "$sched_pid" ]; then kill -TERM "$sched_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
# CPU seconds (user+sys) a live process has used so far.
proc_cpu() {
  awk -v tck="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / tck }' "/proc/$1/stat"
}
# "wall user sys" of /usr/bin/time -f '%e %U %S' -> user+sys
time_cpu() { awk '{ print $2 + $3 }' "$1"; }

echo "ste distributed benchmark — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host: $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "${SKIP_OVERHEAD:-0}" != 1 ]; then
  repo=$work/repo
  mkdir -p "$repo/src/lib" "$repo/tests"
  (
    cd "$repo"
    for p in $(seq -w 0 49); do
      mkdir -p "src/pkg_$p"
      for m in $(seq -w 0 19); do
        echo "pkg $p module $m" >"src/pkg_$p/mod_$m.txt"
      done
    done
    cat >src/lib/common.sh <<'EOF'
# shared by every test: read the first line of a file, fail if it is empty
check() { read -r line <"$1" && [ -n "$line" ]; }
EOF
    # Test n reads files of packages n%50, (n*7)%50 and (n*13)%50.
    awk -v n="$TESTS" 'BEGIN {
      for (i = 1; i <= n; i++) {
        f = sprintf("tests/test_%04d.sh", i)
        a = i % 50; b = (i * 7) % 50; c = (i * 13) % 50; m = i % 20
        printf ". ./src/lib/common.sh\n" > f
        printf "check src/pkg_%02d/mod_%02d.txt\n", a, m > f
        printf "check src/pkg_%02d/mod_%02d.txt\n", b, (m + 1) % 20 > f
        printf "check src/pkg_%02d/mod_%02d.txt\n", c, (m + 2) % 20 > f
        printf "cat src/pkg_%02d/mod_%02d.txt >/dev/null\n", a, (m + 3) % 20 > f
        close(f)
      }
    }'
    cat >ste.toml <<EOF
[tests]
include = ["tests/test_*.sh"]
[runner]
command = "sh {test}"
jobs = $WORKERS
EOF
    echo ".ste/" >.gitignore
    git init -q .
    git add -A
    git -c user.name=bench -c user.email=bench@example.invalid commit -q -m synthetic
  )
  echo "repo: $TESTS shell tests, $(find "$repo/src" -type f | wc -l) source files; $WORKERS workers; $ROUNDS rounds + 1 warm-up, alternating"
  echo

  # (a) the embedded record. Prints "wall cpu wall".
  run_embedded() {
    local out=$work/a
    local t0 t1
    t0=$(now)
    (cd "$repo" && /usr/bin/time -f '%e %U %S' -o "$out.time" \
       "$STE" record -j"$WORKERS" --progress none >"$out.out" 2>"$out.err") ||
      { echo "embedded record failed:" >&2; cat "$out.out" "$out.err" >&2; exit 1; }
    t1=$(now)
    grep -q "$TESTS tests, $TESTS passed" "$out.out" ||
      { echo "embedded record: unexpected result:" >&2; cat "$out.out" >&2; exit 1; }
    local wall
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
    echo "$wall $(time_cpu "$out.time") $wall"
  }

  # (b) scheduler + workers + record --scheduler --wait. Prints "wall cpu
  # record_wall": to the last exit, CPU, to the exit of the record (the
  # baseline is stored; the workers may still be on their way out).
  run_distributed() {
    local out=$work/b
    # A fresh store each round (the SQLite store keeps its blobs beside it).
    local store
    store=$(mktemp -d "$work/sched-XXXXXX")
    rm -f "$out.port"
    "$STE" scheduler --listen 127.0.0.1:0 --store "sqlite:$store/s.db" \
      --port-file "$out.port" 2>"$out.sched.err" &
    sched_pid=$!
    local i
    for i in $(seq 1 500); do
      [ -s "$out.port" ] && break
      sleep 0.01
    done
    [ -s "$out.port" ] || { echo "the scheduler did not start:" >&2; cat "$out.sched.err" >&2; exit 1; }
    local addr
    addr=$(head -n1 "$out.port")
    local s0 t0 tr t1 s1
    local pids=()
    s0=$(proc_cpu "$sched_pid")
    t0=$(now)
    for i in $(seq 1 "$WORKERS"); do
      (cd "$repo" && exec /usr/bin/time -f '%e %U %S' -o "$out.w$i.time" \
         "$STE" worker --scheduler "$addr" -j1 -q 2>"$out.w$i.err") &
      pids+=($!)
    done
    (cd "$repo" && /usr/bin/time -f '%e %U %S' -o "$out.time" \
       "$STE" record --scheduler "$addr" --wait --progress none >"$out.out" 2>"$out.err") ||
      { echo "distributed record failed:" >&2; cat "$out.out" "$out.err" "$out.sched.err" >&2; exit 1; }
    tr=$(now)
    for i in "${pids[@]}"; do
      wait "$i" || { echo "a worker failed:" >&2; cat "$out".w*.err >&2; exit 1; }
    done
    t1=$(now)
    s1=$(proc_cpu "$sched_pid")
    kill -TERM "$sched_pid"
    wait "$sched_pid" || true
    sched_pid=
    rm -rf "$store"
    grep -q "$TESTS tests, $TESTS passed" "$out.out" ||
      { echo "distributed record: unexpected result:" >&2; cat "$out.out" >&2; exit 1; }
    local cpu
    cpu=$(time_cpu "$out.time")
    for i in $(seq 1 "$WORKERS"); do
      cpu=$(awk -v a="$cpu" -v b="$(time_cpu "$out.w$i.time")" 'BEGIN { print a + b }')
    done
    cpu=$(awk -v a="$cpu" -v x="$s0" -v y="$s1" 'BEGIN { print a + y - x }')
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $cpu $(awk -v a="$t0" -v b="$tr" 'BEGIN { print b - a }')"
  }

  median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }

  : >"$work/a.samples"
  : >"$work/b.samples"
  for round in $(seq 0 "$ROUNDS"); do
    # In this shell, not in $(...): a failure's exit then runs the EXIT
    # trap, which stops the scheduler.
    if [ $((round % 2)) = 0 ]; then
      run_embedded >"$work/a.last"; run_distributed >"$work/b.last"
    else
      run_distributed >"$work/b.last"; run_embedded >"$work/a.last"
    fi
    read -r a_wall a_cpu _ <"$work/a.last"
    read -r b_wall b_cpu b_record <"$work/b.last"
    line=$(printf 'embedded wall %.2f s cpu %.2f s | distributed wall %.2f s cpu %.2f s (record done at %.2f s)' \
      "$a_wall" "$a_cpu" "$b_wall" "$b_cpu" "$b_record")
    if [ "$round" = 0 ]; then
      echo "warm-up: $line; not counted"
      continue
    fi
    cat "$work/a.last" >>"$work/a.samples"
    cat "$work/b.last" >>"$work/b.samples"
    echo "round $round: $line"
  done
  aw=$(cut -d' ' -f1 "$work/a.samples" | median); ac=$(cut -d' ' -f2 "$work/a.samples" | median)
  bw=$(cut -d' ' -f1 "$work/b.samples" | median); bc=$(cut -d' ' -f2 "$work/b.samples" | median)
  echo
  echo "Distribution overhead: $TESTS tests, $WORKERS workers vs embedded -j$WORKERS (medians of $ROUNDS, min-max)"
  printf '  %-40s wall %6.2f s (%s)  cpu %6.2f s (%s)\n' "(a) embedded ste record -j$WORKERS" \
    "$aw" "$(cut -d' ' -f1 "$work/a.samples" | spread)" "$ac" "$(cut -d' ' -f2 "$work/a.samples" | spread)"
  printf '  %-40s wall %6.2f s (%s)  cpu %6.2f s (%s)\n' "(b) scheduler + $WORKERS workers + record" \
    "$bw" "$(cut -d' ' -f1 "$work/b.samples" | spread)" "$bc" "$(cut -d' ' -f2 "$work/b.samples" | spread)"
  br=$(cut -d' ' -f3 "$work/b.samples" | median)
  printf '  %-40s wall %6.2f s (%s)\n' "(b) until the record exits" \
    "$br" "$(cut -d' ' -f3 "$work/b.samples" | spread)"
  ratio_r=$(awk -v a="$aw" -v b="$br" 'BEGIN { printf "%.2f", b / a }')
  ratio_w=$(awk -v a="$aw" -v b="$bw" 'BEGIN { printf "%.2f", b / a }')
  ratio_c=$(awk -v a="$ac" -v b="$bc" 'BEGIN { printf "%.2f", b / a }')
  per_round=$(paste -d' ' "$work/a.samples" "$work/b.samples" |
    awk '{ printf "%s%.2f", (NR > 1) ? " " : "", $4 / $1 }')
  verdict=$(awk -v r="$ratio_w" 'BEGIN { print (r <= 1.2) ? "met" : "MISSED" }')
  echo "  ratio (b)/(a): wall ${ratio_w}x (per round: $per_round), cpu ${ratio_c}x — target <= 1.2x wall: $verdict"
  echo "  ratio (b)/(a) to the record's exit: wall ${ratio_r}x"
  echo
fi

if [ "${SKIP_P8:-0}" != 1 ]; then
  # shellcheck disable=SC2086  # INGEST_ARGS is a list of flags
  TMPDIR=$work "$INGEST" ${INGEST_ARGS:-}
fi
