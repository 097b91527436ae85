#!/usr/bin/env bash
# tests/deploy/check_deploy.sh BUILD_DIR — what of deploy/ can be checked
# without a cluster, a registry or a container engine:
#   1-3. check_deploy.py on deploy/ (YAML, kinds and references; every
#        `ste ...` flag against `ste <sub> --help`; ports, token and checkout
#        paths; the Containerfile builds and apt-installs the package, whose
#        Depends cover readelf -d of BUILD_DIR/ste);
#   4.   systemd-analyze verify on a temporary copy of deploy/systemd/ with
#        /usr/local/bin/ste -> BUILD_DIR/ste and /usr/local/lib/ste/ste-checkout
#        -> deploy/ste-checkout.sh (verify needs ExecStart binaries to
#        exist); any output (it warns with exit 0) fails;
#   5.   that the checks catch breakage: in temporary copies, a flag typo in
#        a k8s manifest, a flag typo in a unit, a Service port that differs
#        from --listen (k8s; systemd env files), a Containerfile that does
#        not install the package, and an invalid unit setting must each fail;
#   6.   ste-checkout.sh on a local repository (a SHA, then a branch; .ste/
#        kept, other untracked files removed);
#   7.   the k8s containers' ste command lines run for real, as the pods
#        would: the scheduler's, two workers' (indexes 0, 1) and the record
#        client's, each in its own ste-checkout of a small repo, with only
#        the address (0.0.0.0:7070 -> 127.0.0.1:0 + --port-file; the
#        Service name -> that address), the store (a temp SQLite), the
#        token path (a temp file) and the workers' --wait (600 -> 30, so a
#        worker that missed the build cannot hang the test) replaced; the
#        record must store a baseline of every test (12 tests of 0.5 s,
#        so that both workers, 4 slots each, take some), both workers exit 0
#        and the scheduler log names both.
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
"$PY" "$CHECK" "$STE" "$SRC/deploy" "$tmp/argv.json" || bad "check_deploy.py on deploy/"

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
mutant runtime-package container/Containerfile 's|/opt/ste/ste_\*\.deb ||' "does not apt-get install the package"
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

step "7 the k8s command lines, run"
(cd "$tmp/up" && mkdir -p tests && for i in 1 2 3 4 5 6 7 8 9 10 11 12; do printf 'cat f >/dev/null\nsleep 0.5\n' >"tests/test_$i.sh"; done &&
   printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\njobs = 2\n' >ste.toml &&
   echo ".ste/" >.gitignore && git add -A && git -c user.name=t -c user.email=t@t commit -qm 3)
head=$(git -C "$tmp/up" rev-parse HEAD)
for c in rec w0 w1; do
  depth=1; [ $c = rec ] && depth=0   # as record.yaml / workers.yaml
  STE_CHECKOUT_DEPTH=$depth "$SRC/deploy/ste-checkout.sh" "file://$tmp/up" "$head" "$tmp/co-$c" >/dev/null
done
openssl rand -hex 16 >"$tmp/token"
chmod 600 "$tmp/token"  # ste refuses a token file others can read
# ARGV_JSON COMPONENT [VAR=VALUE...]: the argv, substituted, one per line
argv() {
  "$PY" - "$tmp/argv.json" "$@" <<'PYEOF'
import json, re, sys
argv = json.load(open(sys.argv[1]))[sys.argv[2]]
env = dict(a.split("=", 1) for a in sys.argv[3:])
out = []
for a in argv:
    if a == "/etc/ste/token": a = env["TOKEN"]
    elif a == "0.0.0.0:7070": a = "127.0.0.1:0"
    elif a == "ste-scheduler:7070": a = env["ADDR"]
    elif out and out[-1] == "--wait" and a == "600": a = "30"
    a = re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a)
    out.append(a)
print("\n".join(out))
PYEOF
}
mapfile -t sargv < <(argv scheduler TOKEN="$tmp/token" STE_STORE="sqlite:$tmp/k8s.db")
"$STE" "${sargv[@]}" --port-file "$tmp/port" 2>"$tmp/sched.err" &
spid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
if [ ! -s "$tmp/port" ]; then
  cat "$tmp/sched.err"; bad "the scheduler's command line did not start a scheduler"
else
  addr=$(cat "$tmp/port")
  for i in 0 1; do
    mapfile -t wargv < <(argv worker TOKEN="$tmp/token" ADDR="$addr" JOB_COMPLETION_INDEX=$i)
    (cd "$tmp/co-w$i" && exec "$STE" "${wargv[@]}" 2>"$tmp/w$i.err") &
    eval "wpid$i=\$!"
  done
  mapfile -t rargv < <(argv record TOKEN="$tmp/token" ADDR="$addr")
  if (cd "$tmp/co-rec" && timeout 120 "$STE" "${rargv[@]}" >"$tmp/rec.out" 2>&1); then
    wait "$wpid0" && wait "$wpid1" || bad "a worker's command line failed: $(cat "$tmp"/w*.err)"
    grep -q "joined: worker-0 " "$tmp/sched.err" && grep -q "joined: worker-1 " "$tmp/sched.err" ||
      bad "the scheduler does not name worker-0 and worker-1: $(cat "$tmp/sched.err")"
    grep -q "12 tests, 12 passed" "$tmp/rec.out" || bad "the record did not store 12 passing tests: $(cat "$tmp/rec.out")"
    echo "ok: scheduler + 2 workers + record ran the k8s command lines: $(grep -m1 'baseline' "$tmp/rec.out")"
  else
    cat "$tmp/rec.out" "$tmp"/w*.err; bad "the record client's command line failed"
    kill "$wpid0" "$wpid1" 2>/dev/null || true
  fi
  kill -TERM "$spid"; wait "$spid" || bad "the scheduler did not stop cleanly on SIGTERM"
fi

[ $failed = 0 ] && echo "deploy checks passed" || exit 1
