#!/usr/bin/env bash
# bench/run_all.sh BUILD_DIR — runs every bench/*/run.sh that exists, in
# name order, with BUILD_DIR as its argument (`make bench` calls this).
# Exits non-zero if any of them failed, after running all of them.
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
status=0
ran=0
for script in "$here"/*/run.sh; do
  [ -f "$script" ] || continue
  name=$(basename "$(dirname "$script")")
  echo "######## bench/$name"
  if ! bash "$script" "$1"; then
    echo "bench/$name: FAILED" >&2
    status=1
  fi
  ran=$((ran + 1))
  echo
done
if [ $ran = 0 ]; then
  echo "$0: no bench/*/run.sh found" >&2
  exit 1
fi
exit $status
