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
# jobs = 1. Rounds interleaved, one run at a time:
#   plain     /usr/bin/python3 -m pytest ... <the files>, no ste;
#   file      ste record, granularity = "file", from an empty .ste/;
#   def-cold  ste record, granularity = "definition", from an empty .ste/
#             (every source the tests loaded is fingerprinted);
#   def-warm  the same after a record of the same tree: a new store, the
#             fingerprints on disk kept;
#   hook-warm def-warm with STE_DEFS_TRACER=frame-hook: the tracker's frame
#             evaluation hook instead of the warm-up counters (CPython
#             3.11; elsewhere the variable changes nothing).
# Prints each run's wall time and the medians' ratios to plain. ste.toml
# is written at the checkout's root and removed at the end.
set -euo pipefail
ste=$(realpath "$1"); root=$(cd "$2" && pwd); rounds=${3:-3}
cd "$root"
globs='"sympy/logic/**/tests/test_*.py", "sympy/sets/**/tests/test_*.py", "sympy/calculus/**/tests/test_*.py", "sympy/crypto/**/tests/test_*.py"'
files=$(find sympy/logic sympy/sets sympy/calculus sympy/crypto -path '*/tests/test_*.py' | sort)
write_toml() {
  cat > ste.toml <<EOF
[tests]
include = [$globs]
[runner]
kind = "pytest"
command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest --veryquickcheck {tests}"
jobs = 1
[inventory]
ignore = ["**/__pycache__/**", ".hypothesis/**"]
[selection]
granularity = "$1"
EOF
}
trap 'rm -f "$root/ste.toml"; rm -rf "$root/.ste"' EXIT
export PYTHONDONTWRITEBYTECODE=1
timed() {  # label command...: prints "label seconds"
  local start end
  start=$(date +%s.%N)
  "${@:2}" > /tmp/record_cost.out 2>&1 || { echo "$1 failed:"; tail -5 /tmp/record_cost.out; }
  end=$(date +%s.%N)
  echo "$1 $(echo "$end - $start" | bc)"
}
results=$(mktemp)
for r in $(seq "$rounds"); do
  timed plain /usr/bin/python3 -m pytest -q -p no:cacheprovider --veryquickcheck $files >> "$results"
  rm -rf .ste; write_toml file
  timed file "$ste" record >> "$results"
  rm -rf .ste; write_toml definition
  timed def-cold "$ste" record >> "$results"
  grep -h "definitions:" /tmp/record_cost.out | tail -1 || true
  rm -f .ste/ste.db*
  timed def-warm "$ste" record >> "$results"
  grep -h "definitions:" /tmp/record_cost.out | tail -1 || true
  rm -f .ste/ste.db*
  STE_DEFS_TRACER=frame-hook timed hook-warm "$ste" record >> "$results"
done
cat "$results"
/usr/bin/python3 - "$results" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, seconds = line.split()
    runs.setdefault(label, []).append(float(seconds))
plain = statistics.median(runs["plain"])
print("| run | wall (median of %d) | / plain |" % len(runs["plain"]))
print("|---|---|---|")
for label in ("plain", "file", "def-cold", "def-warm", "hook-warm"):
    m = statistics.median(runs[label])
    print("| %s | %.2f s | %.2f |" % (label, m, m / plain))
EOF
