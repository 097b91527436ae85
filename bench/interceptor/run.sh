#!/usr/bin/env bash
# bench/interceptor/run.sh BUILD_DIR — what libste_preload.so costs.
#
#   P1  N open(O_RDONLY)+close of 64 existing files, round-robin:
#       plain vs `ste run`; strace -f as the anchor (smaller N, against
#       plain with the same N).
#   P2  a shell loop spawning short processes (/bin/true):
#       plain vs `ste run`; strace -f as the anchor (fewer processes,
#       against plain with the same count).
#   P3  N syscall(3) calls that name no file (futex wake, getppid): plain
#       vs an empty LD_PRELOAD library (no syscall hook) vs `ste run`: what
#       the syscall(3) hook's pass-through costs the calls runtimes make
#       most through it.
#
# Every variant runs ROUNDS times, interleaved, after one warm-up round;
# the table shows median and min wall time and ratios against the plain
# run of the same size measured in this same run. Each traced run writes
# its logs in a fresh directory under $TMPDIR (default /tmp), removed
# right after it.
#
# Knobs (environment): ROUNDS (5), P1_N (1000000), P1_STRACE_N (50000),
# P2_N (2000), P2_STRACE_N (500), P3_N (20000000), SKIP_STRACE=1 to leave
# the anchors out, BENCHES ("P1 P2 P3": which to run).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
ROUNDS=${ROUNDS:-5}
P1_N=${P1_N:-1000000}
P1_STRACE_N=${P1_STRACE_N:-50000}
P2_N=${P2_N:-2000}
P2_STRACE_N=${P2_STRACE_N:-500}
P3_N=${P3_N:-20000000}
BENCHES=${BENCHES:-P1 P2 P3}

STE=$BUILD/ste
DRIVER=$BUILD/bench/bench_driver
OPEN_CLOSE=$BUILD/bench/bench_open_close
SYSCALLS=$BUILD/bench/bench_syscall
EMPTY_PRELOAD=$BUILD/bench/libbench_empty_preload.so

# Bring the measured binaries up to date. If the tree does not build right
# now but all of them exist, measure those (and say so) rather than nothing.
if ! cmake --build "$BUILD" --target ste ste_preload bench_open_close bench_syscall bench_driver bench_empty_preload \
     >/dev/null 2>&1; then
  for bin in "$STE" "$BUILD/libste_preload.so" "$DRIVER" "$OPEN_CLOSE" "$SYSCALLS"; do
    [ -x "$bin" ] || [ -f "$bin" ] ||
      { echo "$0: cannot build $bin in $BUILD" >&2; exit 1; }
  done
  echo "warning: the build failed; measuring the binaries already in $BUILD" >&2
fi

strace_ok=1
if [ "${SKIP_STRACE:-0}" = 1 ] || ! command -v strace >/dev/null ||
   ! strace -f -o /dev/null /bin/true 2>/dev/null; then
  strace_ok=0
fi

# Everything this script writes lives under $work (and $shm, the tmpfs
# control), removed on exit even if interrupted.
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-bench-XXXXXX")
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
  shm=$(mktemp -d /dev/shm/ste-bench-XXXXXX)
fi
trap 'rm -rf "$work" ${shm:+"$shm"}' EXIT
trap 'exit 130' INT TERM
fixture=$work/files
# `ste run` without --log-dir writes under /dev/shm when it is tmpfs (see
# DefaultScratchRoot): the main variants put their logs where ste would.
# The control keeps them on $TMPDIR's filesystem.
disk_logs=$work/logs
logs=${shm:-$disk_logs}
mkdir -p "$fixture" "$disk_logs"
files=()
for i in $(seq -w 0 63); do
  printf 'file %s\n' "$i" >"$fixture/f$i"
  files+=("$fixture/f$i")
done

echo "ste interceptor benchmark — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host: $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "logs: $logs ($(stat -f -c %T "$logs"); ste run's default), control on $disk_logs ($(stat -f -c %T "$disk_logs")); log dirs kept until each table is done"
echo "wall-clock ratios are median/median (x med) and min/min (x min) against"
echo "the variant in 'vs', measured in this run; cpu = user+sys of the tree."
echo

wants() { case " $BENCHES " in *" $1 "*) return 0 ;; esac; return 1; }

if wants P1; then
  p1=(--variant plain -- "$OPEN_CLOSE" "$P1_N" "${files[@]}" ::
      --variant "ste run" --vs plain --target 1.10 --log-root "$logs" --
        "$STE" run --log-dir "{logdir}" -- "$OPEN_CLOSE" "$P1_N" "${files[@]}" ::)
  if [ $strace_ok = 1 ]; then
    p1+=(--variant "plain N=$P1_STRACE_N" -- "$OPEN_CLOSE" "$P1_STRACE_N" "${files[@]}" ::
         --variant "strace -f N=$P1_STRACE_N" --vs "plain N=$P1_STRACE_N" --
           strace -f -o /dev/null "$OPEN_CLOSE" "$P1_STRACE_N" "${files[@]}" ::)
  fi
  "$DRIVER" --rounds "$ROUNDS" \
    --title "P1: $P1_N open+close of 64 files (strace anchor: N=$P1_STRACE_N vs plain N=$P1_STRACE_N)" \
    "${p1[@]}"
  echo
fi

if wants P2; then
  # shellcheck disable=SC2016  # $i and $1 are for sh -c, not this shell
  loop='i=0; while [ $i -lt "$1" ]; do /bin/true; i=$((i+1)); done'
  p2=(--variant plain -- sh -c "$loop" sh "$P2_N" ::
      --variant "empty LD_PRELOAD" --vs plain --
        env LD_PRELOAD="$EMPTY_PRELOAD" sh -c "$loop" sh "$P2_N" ::
      --variant "ste run" --vs plain --target 1.10 --log-root "$logs" --
        "$STE" run --log-dir "{logdir}" -- sh -c "$loop" sh "$P2_N" ::)
  if [ -n "$shm" ]; then
    # Control: the same, logs on $TMPDIR's disk — separates the filesystem's
    # cost of creating one log file per process from the library's own.
    p2+=(--variant "ste run, logs on disk" --vs plain --log-root "$disk_logs" --
           "$STE" run --log-dir "{logdir}" -- sh -c "$loop" sh "$P2_N" ::)
  fi
  if [ $strace_ok = 1 ]; then
    p2+=(--variant "plain n=$P2_STRACE_N" -- sh -c "$loop" sh "$P2_STRACE_N" ::
         --variant "strace -f n=$P2_STRACE_N" --vs "plain n=$P2_STRACE_N" --
           strace -f -o /dev/null sh -c "$loop" sh "$P2_STRACE_N" ::)
  fi
  "$DRIVER" --rounds "$ROUNDS" \
    --title "P2: sh loop spawning $P2_N /bin/true (strace anchor: $P2_STRACE_N processes vs plain $P2_STRACE_N)" \
    "${p2[@]}"
  echo
fi

if wants P3; then
  p3=(--variant plain -- "$SYSCALLS" "$P3_N" ::
      --variant "empty LD_PRELOAD" --vs plain --
        env LD_PRELOAD="$EMPTY_PRELOAD" "$SYSCALLS" "$P3_N" ::
      --variant "ste run" --vs plain --log-root "$logs" --
        "$STE" run --log-dir "{logdir}" -- "$SYSCALLS" "$P3_N" ::)
  "$DRIVER" --rounds "$ROUNDS" \
    --title "P3: $P3_N syscall(3) calls naming no file (futex wake, getppid)" \
    "${p3[@]}"
  echo
fi

if [ $strace_ok = 0 ]; then
  echo
  echo "(strace anchors skipped: SKIP_STRACE=1, or strace missing or not permitted here)"
fi
