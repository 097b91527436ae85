#!/usr/bin/env bash
# What a whole record costs at definition level on a real suite, against
# plain pytest and the file level, with and without the fingerprints the
# last record left on disk (.ste/fingerprints; issue 24, item 5).
#
#   bench/definitions/record_cost.sh STE CHECKOUT [ROUNDS]
#
# STE: the ste binary (its integrations beside it). CHECKOUT: a sympy
# checkout (bench/README.md measured 4b6b3b1a81; its conftest needs
# python3-hypothesis). The suite: the 17 test files of sympy/{logic, sets,
# calculus, crypto} with sympy's --veryquickcheck, kind = "pytest",
# jobs = 1. Another suite: DIRS (the folders whose tests/test_*.py are the
# suite, relative to CHECKOUT) and PYTEST_ARGS (pytest's arguments besides
# the files), e.g. for networkx DIRS="networkx/classes networkx/generators"
# PYTEST_ARGS="". Rounds interleaved, one run at a time:
#   plain     /usr/bin/python3 -m pytest ... <the files>, no ste;
#   file      ste record, granularity = "file", from an empty .ste/;
#   def-cold  ste record, granularity = "definition", from an empty .ste/
#             (every source the tests loaded is fingerprinted);
#   def-warm  the same after a record of the same tree: a new store, the
#             fingerprints on disk kept;
#   hook-warm def-warm with STE_DEFS_TRACER=frame-hook: the tracker's frame
#             evaluation hook instead of the warm-up counters (CPython
#             3.11; elsewhere the variable changes nothing);
#   base-warm def-warm with the ste BASE_STE names (another build, e.g. the
#             commit before a change: an A/B in the same rounds; its
#             "definitions of" line says whether it used the fingerprints).
# VARIANTS="plain def-warm hook-warm" prints some only (def-cold runs in
# every round all the same: the def-* runs need its fingerprints). Prints
# each run's wall and CPU time (user + sys of the whole tree) and the
# medians' ratios to plain. ste.toml is written at the checkout's root and
# removed at the end.
set -euo pipefail
ste=$(realpath "$1"); root=$(cd "$2" && pwd); rounds=${3:-3}
cd "$root"
dirs=${DIRS-sympy/logic sympy/sets sympy/calculus sympy/crypto}
pytest_args=${PYTEST_ARGS---veryquickcheck}
globs=$(for d in $dirs; do printf '"%s/**/tests/test_*.py", ' "$d"; done)
globs=${globs%, }
files=$(find $dirs -path '*/tests/test_*.py' | sort)
write_toml() {
  cat > ste.toml <<EOF
[tests]
include = [$globs]
[runner]
kind = "pytest"
command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest $pytest_args {tests}"
jobs = 1
[inventory]
ignore = ["**/__pycache__/**", ".hypothesis/**"]
[selection]
granularity = "$1"
EOF
}
trap 'rm -f "$root/ste.toml"; rm -rf "$root/.ste"' EXIT
export PYTHONDONTWRITEBYTECODE=1
timed() {  # label command...: prints "label seconds cpu-seconds"
  local start end cpu
  start=$(date +%s.%N)
  /usr/bin/time -o /tmp/record_cost.cpu -f "%U %S" "${@:2}" > /tmp/record_cost.out 2>&1 ||
    { echo "$1 failed:" >&2; tail -5 /tmp/record_cost.out >&2; }
  end=$(date +%s.%N)
  cpu=$(awk 'END {print $1 + $2}' /tmp/record_cost.cpu)  # (the last line: a failing command's status comes first)
  echo "$1 $(echo "$end - $start" | bc) $cpu"
}
# VARIANTS: which of the runs below, in this order (all by default).
variants=${VARIANTS:-plain file def-cold def-warm hook-warm}
base_ste=${BASE_STE:+$(realpath "$BASE_STE")}
if [[ " $variants " == *" base-warm "* ]] && [ -z "$base_ste" ]; then echo "base-warm needs BASE_STE" >&2; exit 2; fi
want() { [[ " $variants " == *" $1 "* ]]; }
results=$(mktemp)
for r in $(seq "$rounds"); do
  if want plain; then
    timed plain /usr/bin/python3 -m pytest -q -p no:cacheprovider $pytest_args $files >> "$results"
  fi
  if want file; then
    rm -rf .ste; write_toml file
    timed file "$ste" record >> "$results"
  fi
  rm -rf .ste; write_toml definition
  timed def-cold "$ste" record > /tmp/record_cost.cold
  if want def-cold; then cat /tmp/record_cost.cold >> "$results"; fi
  grep -h "definitions of" /tmp/record_cost.out | tail -1 || true
  if want def-warm; then
    rm -f .ste/ste.db*
    timed def-warm "$ste" record >> "$results"
    grep -h "definitions of" /tmp/record_cost.out | tail -1 || true
  fi
  if want hook-warm; then
    rm -f .ste/ste.db*
    STE_DEFS_TRACER=frame-hook timed hook-warm "$ste" record >> "$results"
  fi
  if want base-warm; then
    rm -f .ste/ste.db*
    timed base-warm "$base_ste" record >> "$results"
    grep -h "definitions of" /tmp/record_cost.out | tail -1 || true
  fi
done
cat "$results"
/usr/bin/python3 - "$results" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, seconds, cpu = line.split()
    runs.setdefault(label, []).append((float(seconds), float(cpu)))
base = runs.get("plain", next(iter(runs.values())))
plain_wall = statistics.median(w for w, _ in base)
plain_cpu = statistics.median(c for _, c in base)
print("| run | wall (median of %d) | / plain | CPU (median) | / plain |" % len(base))
print("|---|---|---|---|---|")
for label, values in runs.items():
    w = statistics.median(x for x, _ in values)
    c = statistics.median(x for _, x in values)
    print("| %s | %.2f s | %.2f | %.2f s | %.2f |" % (label, w, w / plain_wall, c, c / plain_cpu))
EOF
