#!/bin/bash
# A Python process's start-up under ste (bench/README, "Where a tracked
# test process's fixed cost goes"):
#   bench/definitions/startup_cost.sh BUILD_DIR [ROUNDS]
# `perf stat -r 60 /usr/bin/python3 -c pass`, ROUNDS times (default 3),
# interleaved: plain; ste's import hook (file level); the hook and the
# definition tracker (definition level); each of the last two with the
# start-up modules from the build's bytecode (BUILD_DIR/python/ste_site)
# and compiled from source (the same interceptor and _ste_tracer copied to
# a folder without that bytecode). The environment is the one ste sets:
# LD_PRELOAD, PYTHONPATH, PYTHONUSERBASE (and STE_DEFINITIONS).
set -euo pipefail
build=$(cd "$1" && pwd)
rounds=${2:-3}
py=$(cd "$(dirname "$0")/../../integrations/python" && pwd)
bare=$(mktemp -d)
root=$(mktemp -d)
trap 'rm -rf "$bare" "$root"' EXIT
cp "$build/libste_preload.so" "$bare/"
mkdir -p "$bare/python"
cp "$build"/python/_ste_tracer*.so "$bare/python/" 2>/dev/null || true
ms() { perf stat -r 60 "$@" 2>&1 >/dev/null | awk '/time elapsed/ {printf "%.1f ms", $1 * 1000}'; }
run() {  # LIB_DIR DEFINITIONS
  env LD_PRELOAD="$1/libste_preload.so" PYTHONPATH="$py/ste_site" PYTHONUSERBASE="$py/ste_userbase" \
    ${2:+STE_DEFINITIONS=$root} bash -c "$(declare -f ms); ms /usr/bin/python3 -c pass"
}
for r in $(seq "$rounds"); do
  echo "round $r: plain $(ms /usr/bin/python3 -c pass)" \
       "| file: bytecode $(run "$build" "") source $(run "$bare" "")" \
       "| definition: bytecode $(run "$build" 1) source $(run "$bare" 1)"
done
