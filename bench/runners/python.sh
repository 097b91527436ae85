#!/usr/bin/env bash
# bench/runners/python.sh BUILD_DIR — what recording a pytest suite costs,
# with the generic runner and with the forking pytest plugin (runner.kind
# "pytest", integrations/python/ste_pytest.py).
#
#   (i)   plain: `python3 -m pytest -q tests`, one process, untraced
#   (ii)  `ste record`, kind "generic": `python3 -m pytest -q {test}`, one
#         process per test file, each paying for the interpreter, pytest
#         and the shared conftest again
#   (iii) `ste record`, kind "pytest": pytest and the conftest once, a
#         forked child per test file
#   (iv)  for reference: the plugin alone, untraced (--ste-fork=yes: its own
#         cost, a fork per file)
#   generic_listing, pytest_listing: (ii) and (iii) with
#         runner.python_imports = "listing" (CPython's own finder instead of
#         ste's import hook, integrations/README.md): the hook's cost is
#         generic / generic_listing and pytest / pytest_listing
#
# Prints medians of wall time (and CPU: user+sys of the process tree) and
# the ratios (ii)/(i), (iii)/(i), (iv)/(i). Target: (iii)/(i) <= 1.05.
# A record includes hashing the tree, the index and the store (.ste/ is
# removed before each, so every record starts alike). Every variant runs
# with -p no:cacheprovider and PYTHONDONTWRITEBYTECODE=1, so that none of
# them leaves files the next one would read (a record writes no bytecode
# anyway).
#
# The suite (generated, cached under $STE_BENCH_DIR, default
# /tmp/ste-bench-python): FILES test files of CASES test cases each; each
# file imports its own src/unit_N.py; tests/conftest.py imports src/app,
# which imports some standard library and MODELS generated modules of a
# class each (the "moderately heavy" shared module); each case does WORK
# iterations of arithmetic.
#
# Environment: FILES (100), CASES (10), WORK (20000), MODELS (300),
# GRANULARITY ("file", the P3 figure; "auto" or "definition" to add the
# definition tracker), RUNS (3, after one untimed warm-up of each variant), JOBS (1: test
# processes, resp. forked children, at a time; the plain run is one
# process), VARIANTS ("plain generic pytest alone"; add generic_listing
# and pytest_listing for the import hook's cost), STE_BENCH_DIR.
set -euo pipefail
runners_dir=$(cd "$(dirname "$0")" && pwd)

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
ste=$build/ste
here=$(cd "$(dirname "$0")" && pwd)
integrations=$(cd "$here/../../integrations" && pwd)
python=/usr/bin/python3  # Debian's, with pytest
files=${FILES:-100}
cases=${CASES:-10}
work=${WORK:-20000}
models=${MODELS:-300}
runs=${RUNS:-3}
granularity=${GRANULARITY:-file}
jobs=${JOBS:-1}
suite=${STE_BENCH_DIR:-/tmp/ste-bench-python}/suite-f$files-c$cases-w$work-m$models

[ -x "$ste" ] || { echo "$0: $ste not found" >&2; exit 1; }
[ -f "$integrations/python/ste_pytest.py" ] || { echo "$0: no integrations/python/ste_pytest.py" >&2; exit 1; }
"$python" -c 'import pytest' 2>/dev/null || { echo "$0: $python has no pytest" >&2; exit 1; }

if [ ! -f "$suite/.done" ]; then
  echo "== generating $suite (once; cached)"
  rm -rf "$suite"
  mkdir -p "$suite"
  "$python" - "$suite" "$files" "$cases" "$work" "$models" <<'PYTHON'
import os
import sys

root, files, cases, work, models = sys.argv[1], *map(int, sys.argv[2:])


def write(rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


write("pytest.ini", "[pytest]\n")
imports = "".join("from app import model_%03d  # noqa: F401\n" % m for m in range(1, models + 1))
write(
    "src/app/__init__.py",
    "import dataclasses\nimport decimal\nimport json\nimport typing\nimport uuid\n"
    "import xml.etree.ElementTree\nimport email.message\nimport argparse\n",
)
write("src/app/models.py", imports)
for m in range(1, models + 1):
    methods = "".join("    def m%d(self, x):\n        return (x * %d + %d) %% 97\n\n" % (k, k, m) for k in range(1, 21))
    fields = "".join("    a%d: int = %d\n" % (k, k) for k in range(1, 21))
    write(
        "src/app/model_%03d.py" % m,
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass Model%d:\n%s\n%s" % (m, fields, methods),
    )
write(
    "tests/conftest.py",
    "import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname("
    "os.path.abspath(__file__))), \"src\"))\nimport app.models  # noqa: E402,F401\n",
)
for n in range(1, files + 1):
    name = "unit_%03d" % n
    write(
        "src/%s.py" % name,
        "def compute(k):\n    s = 0\n    for i in range(%d):\n        s += (i * k) %% 7\n    return s\n" % work,
    )
    tests = "".join(
        "\n\ndef test_%d():\n    assert isinstance(%s.compute(%d), int)\n"
        "    assert model_001.Model1().m1(%d) == (%d * 1 + 1) %% 97\n" % (k, name, k, k, k)
        for k in range(1, cases + 1)
    )
    write("tests/test_%s.py" % name, "import %s\nfrom app import model_001\n%s" % (name, tests))
PYTHON
  printf '[tests]\ninclude = ["tests/test_*.py"]\n[runner]\ncommand = "%s -m pytest -q -p no:cacheprovider {test}"\njobs = %s\n' \
    "$python" "$jobs" >"$suite/ste-generic.toml"
  printf '[tests]\ninclude = ["tests/test_*.py"]\n[runner]\nkind = "pytest"\ncommand = "%s -m pytest -q -p no:cacheprovider -p ste_pytest {tests}"\njobs = %s\n' \
    "$python" "$jobs" >"$suite/ste-pytest.toml"
  touch "$suite/.done"
fi
# The configs carry JOBS: rewrite the line (the suite is shared by JOBS values).
sed -i "s/^jobs = .*/jobs = $jobs/" "$suite/ste-generic.toml" "$suite/ste-pytest.toml"
# And GRANULARITY ("file": P3 is file level; "auto", ste's default, adds
# the definition tracker): a [selection] table at the end, rewritten.
for f in "$suite/ste-generic.toml" "$suite/ste-pytest.toml"; do
  sed -i '/^\[selection\]/,$d' "$f"
  printf '[selection]\ngranularity = "%s"\n' "$granularity" >>"$f"
done
for v in generic pytest; do  # the same without the import hook
  sed 's/^jobs = .*/&\npython_imports = "listing"/' "$suite/ste-$v.toml" >"$suite/ste-${v}_listing.toml"
done
cd "$suite"

export STE_INTEGRATIONS=$integrations
export PYTHONDONTWRITEBYTECODE=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Runs a variant (a function below) once: "wall cpu" on stdout; its output
# in $out/<name>.log. bash's `time`: CPU of the waited-for process tree.
measure() {
  local name=$1 status=0
  rm -rf "$suite/.ste"
  TIMEFORMAT='%R %U %S'
  { time "$name" >"$out/$name.log" 2>&1 || status=$?; } 2>"$out/$name.time"
  if [ "$status" != 0 ]; then
    echo "$0: variant '$name' failed (exit $status)" >&2
    tail -20 "$out/$name.log" >&2
    return 1
  fi
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$out/$name.time"
}
plain() { "$python" -m pytest -q -p no:cacheprovider tests; }
generic() { "$ste" record --progress none --config "$suite/ste-generic.toml"; }
pytest() { "$ste" record --progress none --config "$suite/ste-pytest.toml"; }
generic_listing() { "$ste" record --progress none --config "$suite/ste-generic_listing.toml"; }
pytest_listing() { "$ste" record --progress none --config "$suite/ste-pytest_listing.toml"; }
alone() {
  PYTHONPATH=$integrations/python STE_JOBS=$jobs \
    "$python" -m pytest -q -p no:cacheprovider -p ste_pytest --ste-fork=yes tests
}

read -r -a variants <<<"${VARIANTS:-plain generic pytest alone}"
[ "${variants[0]}" = plain ] || { echo "$0: VARIANTS must start with plain" >&2; exit 2; }
echo "== machine"
echo "nproc=$(nproc) kernel=$(uname -r) load=$(cut -d' ' -f1-3 /proc/loadavg) $("$python" --version)" \
  "pytest $("$python" -c 'import pytest; print(pytest.__version__)')"
echo "suite: $files files x $cases cases, WORK=$work, $models models; JOBS=$jobs; RUNS=$runs"
echo
echo "== warm-up (untimed) and checks"
for v in "${variants[@]}"; do
  measure "$v" >/dev/null
done
tail -1 "$out/plain.log" | sed 's/^/   plain: /'
[ -f "$out/alone.log" ] && tail -1 "$out/alone.log" | sed 's/^/   alone: /'
for v in generic pytest generic_listing pytest_listing; do
  [[ " ${variants[*]} " == *" $v "* ]] || continue
  "$ste" record --progress none --config "$suite/ste-$v.toml" >"$out/check.log" 2>&1
  grep 'ste record: baseline' "$out/check.log" | sed "s/^/   $v: /"
  recorded=$("$ste" index dump --json --config "$suite/ste-$v.toml" 2>/dev/null | wc -l || true)
  echo "   $v: $recorded tests in the index (expected $files)"
done
echo

kind=pytest
# shellcheck source=report.sh
. "$runners_dir/report.sh"
run_and_report
