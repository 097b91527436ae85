#!/usr/bin/env bash
# P3 on a real suite (issue 25): a real project's pytest files, plain
# pytest against `ste record` at file level (kind "pytest", forking) and
# against the forking plugin alone (untraced), same files, one at a time,
# rounds interleaved.
#
#   bench/runners/real_pytest_suite.sh BUILD_DIR CHECKOUT FILE_LIST
#
# CHECKOUT: a git checkout of the project. FILE_LIST: one test file per
# line, relative to CHECKOUT. ste records them through a configuration this
# script writes, CHECKOUT/.ste-bench-real-suite.toml (`ste record --config`):
# exactly those files, kind = "pytest", jobs = 1, granularity = "file".
# Each round removes CHECKOUT/.ste first.
#
# Environment: ROUNDS (2), PYTHON (/usr/bin/python3), PYTEST_ARGS (extra
# pytest arguments for plain and alone, e.g. --veryquickcheck for sympy).
# Prints each run's wall and CPU seconds and the ratios of the medians.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BUILD_DIR CHECKOUT FILE_LIST" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
checkout=$(cd "$2" && pwd)
mapfile -t files <"$3"
[ "${#files[@]}" -gt 0 ] || { echo "$0: no files in $3" >&2; exit 2; }
rounds=${ROUNDS:-2}
python=${PYTHON:-/usr/bin/python3}
read -r -a extra <<<"${PYTEST_ARGS:-}"
integrations=$(cd "$(dirname "$0")/../../integrations/python" && pwd)
times=$(mktemp)
trap 'rm -f "$times" "${config:-}"' EXIT

cd "$checkout"
config=$checkout/.ste-bench-real-suite.toml
{
  echo '[tests]'
  printf 'include = ['
  sep=''
  for f in "${files[@]}"; do printf '%s"%s"' "$sep" "$f"; sep=', '; done
  echo ']'
  echo '[runner]'
  echo 'kind = "pytest"'
  echo "command = \"$python -m pytest -q -p no:cacheprovider -p ste_pytest ${extra[*]} {tests}\""
  echo 'jobs = 1'
  echo '[selection]'
  echo 'granularity = "file"'
} >"$config"
timed() {  # timed NAME ROUND COMMAND...: appends "NAME ROUND wall cpu"
  local name=$1 round=$2
  shift 2
  /usr/bin/time -f "$name $round %e %U %S" -a -o "$times" "$@" >"/tmp/real_suite.$name.$round.log" 2>&1 ||
    { echo "$0: $name (round $round) failed, see /tmp/real_suite.$name.$round.log" >&2; exit 1; }
}
for round in $(seq 1 "$rounds"); do
  timed plain "$round" "$python" -m pytest -q -p no:cacheprovider "${extra[@]}" "${files[@]}"
  rm -rf .ste
  timed record "$round" "$build/ste" record --progress none --config "$config"
  timed alone "$round" env PYTHONPATH="$integrations" STE_JOBS=1 \
    "$python" -m pytest -q -p no:cacheprovider -p ste_pytest --ste-fork=yes "${extra[@]}" "${files[@]}"
done
awk -v n="${#files[@]}" '
  { wall[$1] = wall[$1] " " $3; cpu[$1] = cpu[$1] " " ($4 + $5); print "  " $1 " round " $2 ": " $3 " s wall, " ($4 + $5) " s CPU" }
  function median(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    printf "== %d test files, medians\n", n
    for (v in wall) printf "  %-6s %8.2f s wall %8.2f s CPU   / plain: %.2fx wall %.2fx CPU\n", v, median(wall[v]), median(cpu[v]), median(wall[v]) / median(wall["plain"]), median(cpu[v]) / median(cpu["plain"])
  }' "$times"
