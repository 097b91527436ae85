#!/usr/bin/env bash
# tests/deploy/check_deploy.sh BUILD_DIR — what of deploy/ can be checked
# without a cluster, a registry or a container engine:
#   1-3. check_deploy.py on deploy/ (YAML, kinds and references; every
#        `ste ...` flag against `ste <sub> --help`; ports, token and checkout
#        paths; the Containerfile against readelf -d of BUILD_DIR/ste);
#   4.   systemd-analyze verify on a temporary copy of deploy/systemd/ with
#        /usr/local/bin/ste -> BUILD_DIR/ste and /usr/local/lib/ste/ste-checkout
#        -> deploy/ste-checkout.sh (verify needs ExecStart binaries to
#        exist); any output (it warns with exit 0) fails;
#   5.   that the checks catch breakage: in temporary copies, a flag typo in
#        a k8s manifest, a flag typo in a unit, a Service port that differs
#        from --listen (k8s; systemd env files), a runtime library left out
#        of the Containerfile, and an invalid unit setting must each fail;
#   6.   ste-checkout.sh on a local repository (a SHA, then a branch; .ste/
#        kept, other untracked files removed).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
STE=$BUILD/ste
PY=/usr/bin/python3   # Debian's, with python3-yaml
CHECK=$HERE/check_deploy.py
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ste-deploy-check-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0
step() { echo "== $*"; }
bad() { echo "FAILED: $*"; failed=1; }

step "1-3 check_deploy.py deploy/"
"$PY" "$CHECK" "$STE" "$SRC/deploy" || bad "check_deploy.py on deploy/"

verify_units() {  # DIR: systemd-analyze verify its units, paths substituted
  local dir=$1 out
  sed -i -e "s#/usr/local/bin/ste#$STE#g" \
         -e "s#/usr/local/lib/ste/ste-checkout#$SRC/deploy/ste-checkout.sh#g" "$dir"/*.service
  # the template through an instance (worker index 1)
  out=$(cd "$dir" && systemd-analyze verify ./ste-scheduler.service ./ste-worker@1.service 2>&1) || {
    echo "$out"; return 1; }
  [ -z "$out" ] || { echo "$out"; return 1; }
}
step "4 systemd-analyze verify"
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (make deps installs systemd)"; exit 1; }
mkdir "$tmp/units" && cp "$SRC"/deploy/systemd/*.service "$tmp/units/"
verify_units "$tmp/units" && echo "ok: 2 units verified" || bad "systemd-analyze verify"

step "5 the checks catch breakage"
mutant() {  # NAME FILE SED-EXPR EXPECTED-MESSAGE: a copy of deploy/ broken so, must fail
  local name=$1 file=$2 expr=$3 expect=$4 d=$tmp/mut-$1 out
  cp -r "$SRC/deploy" "$d"
  sed -i -e "$expr" "$d/$file"
  cmp -s "$SRC/deploy/$file" "$d/$file" && { bad "$name: the sed changed nothing"; return; }
  if out=$("$PY" "$CHECK" "$STE" "$d" 2>&1); then
    bad "$name: check_deploy.py passed a broken deploy/"
  elif ! grep -qF -- "$expect" <<<"$out"; then
    echo "$out"; bad "$name: failed, but not with '$expect'"
  else
    echo "ok: $name -> $(grep -F -- "$expect" <<<"$out" | head -1)"
  fi
}
mutant k8s-flag-typo k8s/workers.yaml 's/- --token-file/- --token-flie/' "--token-flie is not a flag"
mutant unit-flag-typo systemd/ste-scheduler.service 's/--listen /--lisen /' "--lisen is not a flag"
mutant service-port k8s/scheduler.yaml 's/port: 7070/port: 7071/' "is not the Service"
mutant env-port systemd/ste-worker.env 's/:7070$/:7071/' "the workers dial port 7071"
mutant runtime-lib container/Containerfile 's/libroaring0 //' "installs none of ['libroaring0']"
mkdir "$tmp/units-bad" && cp "$SRC"/deploy/systemd/*.service "$tmp/units-bad/"
sed -i 's/^Restart=on-failure/Restart=sometimes/' "$tmp/units-bad/ste-scheduler.service"
if verify_units "$tmp/units-bad" >/dev/null; then bad "systemd-analyze verify passed Restart=sometimes"
else echo "ok: systemd-analyze verify fails on Restart=sometimes"; fi

step "6 ste-checkout.sh"
git init -q "$tmp/up"
(cd "$tmp/up" && echo one >f && git add f && git -c user.name=t -c user.email=t@t commit -qm 1 &&
   echo two >f && git -c user.name=t -c user.email=t@t commit -qam 2 && git branch -qM main)
first=$(git -C "$tmp/up" rev-parse HEAD~1)
got=$("$SRC/deploy/ste-checkout.sh" "file://$tmp/up" "$first" "$tmp/wk" | tail -1)
[ "$got" = "$first" ] && [ "$(cat "$tmp/wk/f")" = one ] || bad "ste-checkout of a SHA"
mkdir -p "$tmp/wk/.ste" && touch "$tmp/wk/.ste/log" "$tmp/wk/junk"
STE_CHECKOUT_DEPTH=0 "$SRC/deploy/ste-checkout.sh" "$tmp/up" main "$tmp/wk" >/dev/null
[ "$(cat "$tmp/wk/f")" = two ] && [ -e "$tmp/wk/.ste/log" ] && [ ! -e "$tmp/wk/junk" ] &&
  [ "$(git -C "$tmp/wk" rev-list --count HEAD)" = 2 ] || bad "ste-checkout of a branch, full depth"
[ $failed = 0 ] && echo "ok: ste-checkout (SHA at depth 1, branch at full depth, .ste/ kept)"

[ $failed = 0 ] && echo "deploy checks passed" || exit 1
