#!/usr/bin/env bash
# ctest PackageInstalled: the Debian package `make package` (cpack) writes,
# unpacked into an empty folder with dpkg-deb -x (what the setup action
# does; `apt-get install ./ste_*.deb` puts the same files under /), used
# alone: no build tree, no STE_PRELOAD / STE_INTEGRATIONS, nothing of ste
# on PATH. Its `ste` must find its preload library and integrations
# relative to itself, name the package's version, and record and select
# real repositories: one with the generic runner (shell tests), one with
# kind = "pytest" (the integrations/python runner, forking).
#
#   tests/package/package_installed.sh BUILD
set -euo pipefail
build=$(cd "$1" && pwd)
fail() { echo "package_installed: FAIL: $*" >&2; exit 1; }
shopt -s nullglob
debs=("$build"/ste_*.deb)
[ ${#debs[@]} -ge 1 ] || fail "no $build/ste_*.deb: run 'make package' (make test runs cpack first)"
deb=$(ls -t "${debs[@]}" | head -1)
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-package-XXXXXX")
trap 'rm -rf "$work"' EXIT

# The package's fields.
[ "$(dpkg-deb -f "$deb" Package)" = ste ] || fail "Package: $(dpkg-deb -f "$deb" Package)"
version=$(dpkg-deb -f "$deb" Version)
arch=$(dpkg-deb -f "$deb" Architecture)
[ "$arch" = "$(dpkg --print-architecture)" ] || fail "Architecture $arch"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libgrpc++ libroaring0 libsqlite3-0 libpq5 git; do
  case "$depends" in *"$lib"*) ;; *) fail "Depends lacks $lib: $depends" ;; esac
done
cmake_version=$(sed -n 's/^project(ste VERSION \([0-9.]*\) .*/\1/p' "$(dirname "$0")/../../CMakeLists.txt")
[ "$version" = "$cmake_version" ] || fail "package version $version, CMakeLists.txt says $cmake_version"

root="$work/root"
mkdir -p "$root"
dpkg-deb -x "$deb" "$root"
ste="$root/usr/bin/ste"
for f in usr/bin/ste usr/lib/ste/libste_preload.so usr/share/ste/integrations/python/ste_pytest.py \
         usr/share/ste/ci/ste-ci.sh usr/share/doc/ste/README.md; do
  [ -e "$root/$f" ] || fail "the package has no $f"
done
# The Python definition tracker's compiled tracer (CPython 3.11), not its
# sources.
tracer=("$root"/usr/lib/ste/python/_ste_tracer.cpython-311-*.so)
[ ${#tracer[@]} = 1 ] || fail "the package has no usr/lib/ste/python/_ste_tracer.cpython-311-*.so"
[ -e "$root/usr/share/ste/integrations/python/ste_tracer" ] && fail "the package has the tracer's sources"
# ... found there by the tracker of a process the packaged interceptor is in.
got=$(env -i PATH=/usr/bin:/bin LD_PRELOAD="$root/usr/lib/ste/libste_preload.so" STE_DEFINITIONS="$work" \
  PYTHONPATH="$root/usr/share/ste/integrations/python/ste_site" /usr/bin/python3 -c \
  'import ste_defs; print(ste_defs._tracer.name)' 2>&1) || fail "the tracker did not start: $got"
[ "$got" = warm-up ] || fail "the packaged tracker runs '$got', not the compiled tracer"
# Only the package: a clean environment, ste found by its own path.
clean() { env -i HOME="$work/home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }
mkdir -p "$work/home"
got=$(clean "$ste" --version)
case "$got" in "ste $version ("*")") ;; *) fail "--version printed '$got', the package is $version" ;; esac
readelf -d "$root/usr/lib/ste/libste_preload.so" | grep NEEDED | grep -qv 'libc.so\|libdl.so' \
  && fail "the packaged preload library needs more than libc/libdl"

g() { git -c user.email=t@example.com -c user.name=t "$@"; }

# 1. The generic runner: shell tests over two libraries.
repo="$work/shell"
mkdir -p "$repo/lib" "$repo/tests"
echo 'a() { echo A; }' > "$repo/lib/a.sh"
echo 'b() { echo B; }' > "$repo/lib/b.sh"
for i in 1 2; do printf '. lib/a.sh\n[ "$(a)" = A ]\n' > "$repo/tests/test_a$i.sh"; done
printf '. lib/b.sh\n[ "$(b)" = B ]\n' > "$repo/tests/test_b.sh"
printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\n' > "$repo/ste.toml"
printf '.ste/\n' > "$repo/.gitignore"
g -C "$repo" init -q -b main && g -C "$repo" add -A && g -C "$repo" commit -q -m init
(cd "$repo" && clean "$ste" record --progress none) > "$work/rec1.log" 2>&1 || { cat "$work/rec1.log"; fail "record (generic)"; }
grep -q "3 tests, 3 passed" "$work/rec1.log" || fail "record (generic): $(cat "$work/rec1.log")"
echo 'a() { echo A; }  # edited' > "$repo/lib/a.sh"
sel=$(cd "$repo" && clean "$ste" select 2> "$work/sel1.err") || { cat "$work/sel1.err"; fail "select (generic)"; }
[ "$sel" = "$(printf 'tests/test_a1.sh\ntests/test_a2.sh')" ] || fail "select (generic) gave: $sel ($(cat "$work/sel1.err"))"

# 2. kind = "pytest": the packaged Python integration runs the suite.
repo="$work/py"
mkdir -p "$repo/pkg" "$repo/tests"
printf 'def one():\n    return 1\n' > "$repo/pkg/one.py"
printf 'def two():\n    return 2\n' > "$repo/pkg/two.py"
: > "$repo/pkg/__init__.py"
printf 'from pkg.one import one\n\ndef test_one():\n    assert one() == 1\n' > "$repo/tests/test_one.py"
printf 'from pkg.two import two\n\ndef test_two():\n    assert two() == 2\n' > "$repo/tests/test_two.py"
cat > "$repo/ste.toml" <<'TOML'
[tests]
include = ["tests/test_*.py"]
[runner]
kind = "pytest"
command = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest {tests}"
TOML
printf '.ste/\n__pycache__/\n' > "$repo/.gitignore"
g -C "$repo" init -q -b main && g -C "$repo" add -A && g -C "$repo" commit -q -m init
(cd "$repo" && clean "$ste" record --progress none) > "$work/rec2.log" 2>&1 || { cat "$work/rec2.log"; fail "record (pytest)"; }
grep -q "2 tests, 2 passed" "$work/rec2.log" || fail "record (pytest): $(cat "$work/rec2.log")"
printf 'def two():\n    return 1 + 1\n' > "$repo/pkg/two.py"
sel=$(cd "$repo" && clean "$ste" select 2> "$work/sel2.err") || { cat "$work/sel2.err"; fail "select (pytest)"; }
[ "$sel" = "tests/test_two.py" ] || fail "select (pytest) gave: $sel ($(cat "$work/sel2.err"))"

echo "package_installed: $(basename "$deb") unpacked alone: --version '$got', generic and pytest repositories recorded and selected"
