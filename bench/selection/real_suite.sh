#!/usr/bin/env bash
# How many tests everyday events select on a real pytest suite (issue 11).
#
#   bench/selection/real_suite.sh BUILD SUITE_DIR [generic|pytest] [TEST_GLOB]
#
# Copies SUITE_DIR (a checkout of a project whose tests run with Debian's
# /usr/bin/python3 -m pytest) into a fresh git repository, records a
# baseline with the per-file runner (generic) or kind = "pytest", then for
# each event makes the change, asks `ste select --format json`, prints the
# mode and the number of selected tests, and puts the tree back. Nothing
# here is part of `make test`; the figures go to bench/README.md.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runner=${3:-generic}
glob=${4:-tests/test_*.py}
ste="$build/ste"
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-real-XXXXXX")
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
cp -a "$src" "$repo"
rm -rf "$repo/.git" "$repo/.ste" "$repo/.pytest_cache"
find "$repo" -name __pycache__ -prune -exec rm -rf {} +
if [ "$runner" = pytest ]; then
  runner_toml='kind = "pytest"
command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest {tests}"'
else
  runner_toml='command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider {test}"'
fi
cat > "$repo/ste.toml" <<TOML
[tests]
include = ["$glob"]
[runner]
$runner_toml
TOML
# The user site (PYTHONUSERBASE), where `pip install --user` installs: the
# "installed package" events put packages there (and, with
# REAL_APT=python3-foo, a real `apt-get install` into dist-packages).
export PYTHONUSERBASE="$work/userbase"
user_site="$PYTHONUSERBASE/lib/python$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages"
mkdir -p "$user_site/already" "$user_site/already-1.0.dist-info"
printf 'Metadata-Version: 2.1\nName: already\nVersion: 1.0\n' > "$user_site/already-1.0.dist-info/METADATA"
git -C "$repo" init -q -b main
git -C "$repo" -c user.email=b@example.com -c user.name=b add -A
git -C "$repo" -c user.email=b@example.com -c user.name=b commit -q -m base
start=$(date +%s.%N)
(cd "$repo" && "$ste" record --progress none > "$work/record.txt" 2>&1) || { cat "$work/record.txt"; exit 1; }
grep -E "^ste record: baseline|^  (failed|error|opaque)" "$work/record.txt" | sed "s/^/  /"
end=$(date +%s.%N)
total=$(cd "$repo" && "$ste" select --all --format json 2>/dev/null | "$py" -c 'import json,sys; print(len(json.load(sys.stdin)["tests"]))')
echo "suite: $src ($total test files), runner: $runner, record: $(printf '%.1f' "$(echo "$end - $start" | bc)") s"
printf '%-48s %-7s %s\n' event mode selected

measure() {  # NAME: select now, print, put the tree back
  local name=$1
  (cd "$repo" && "$ste" select --format json 2>/dev/null) > "$work/sel.json" || true
  "$py" - "$name" "$work/sel.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
wide = "; ".join("%s %s %s -> %d" % (w["path"], w["kind"], w["change"], w["tests"]) for w in d.get("wide", []))
print("%-48s %-7s %3d   %s" % (name, d["mode"], len(d["tests"]), (wide or d["reason"])[:110]))
PY
  git -C "$repo" reset -q --hard
  git -C "$repo" clean -q -fdx -e .ste
}

install_user() {  # NAME DIST [ENTRY_POINTS]: a package in the user site
  local name=$1 dist=$2
  mkdir -p "$user_site/$name" "$user_site/$dist.dist-info"
  echo "def main(): pass" > "$user_site/$name/__init__.py"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n' "$name" > "$user_site/$dist.dist-info/METADATA"
  printf '%s' "${3:-}" > "$user_site/$dist.dist-info/entry_points.txt"
}
uninstall_user() { rm -rf "$user_site/$1" "$user_site/$2.dist-info"; }

measure "nothing changed"
echo "notes" > "$repo/NOTES.txt"; measure "NOTES.txt dropped at the root"
pkg=$(cd "$repo" && ls -d */__init__.py 2>/dev/null | grep -v '^tests/' | head -1 | xargs dirname)
echo "X = 1" > "$repo/$pkg/ste_new_module.py"; measure "a new module in $pkg/ that no test imports"
mkdir -p "$work/sibling"; measure "a sibling directory next to the checkout"; rmdir "$work/sibling"
(cd "$repo" && $py -m pytest -q tests > /dev/null 2>&1 || true); measure "after a plain pytest run (caches in the tree)"
first=$(cd "$repo" && ls $pkg/*.py | grep -v __init__ | head -1)
echo "# touched" >> "$repo/$first"; measure "one source file edited ($first)"
echo "" > "$repo/conftest.py"; measure "shadow: a new conftest.py at the root"
install_user tabl tabl-0.9 $'[console_scripts]\ntabl = tabl:main\n'
measure "pip install --user tabl (a console script)"; uninstall_user tabl tabl-0.9
install_user probe_plugin probe_plugin-1.0 $'[pytest11]\nprobe = probe_plugin\n'
measure "shadow: a pytest plugin installed (user site)"; uninstall_user probe_plugin probe_plugin-1.0
echo "import os" > "$user_site/zz_extra.pth"; measure "shadow: a .pth file in the user site"
rm -f "$user_site/zz_extra.pth"
if [ -n "${REAL_APT:-}" ]; then
  if dpkg-query -W -f='${Status}' "$REAL_APT" 2>/dev/null | grep -q 'ok installed'; then
    echo "REAL_APT=$REAL_APT is installed already: skipped" >&2
  else
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$REAL_APT" > /dev/null
    measure "apt-get install $REAL_APT"
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$REAL_APT" > /dev/null
  fi
fi
