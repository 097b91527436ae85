#!/usr/bin/env bash
# A pull request's select job, timed two ways on this machine (issue 22):
#
#   new  the job as deploy/github/workflows/pr.yml has it: a depth-1
#        checkout of the merge commit, the setup action installing ste's
#        package from a URL (a loopback HTTP server stands in for the
#        release asset), the select action (cache restore, change text,
#        select, 3 shards) -- each action run by tests/ci/actions_runner.py
#        as GitHub's runner runs it;
#   old  the job before: a clone of ste's source at OLD_COMMIT, `make build`
#        (the whole tree with its tests, as the old workflows did; the
#        Debian packages already installed, ccache off), then ste-ci.sh
#        select at depth 1 (SKIP_OLD=1 leaves it out: it takes minutes;
#        OLD_TREE=DIR times only the select of a tree built at OLD_COMMIT).
#
#   bench/ci_job/measure.sh BUILD [OLD_COMMIT]     (BUILD has ste_*.deb)
set -euo pipefail
build=$(cd "${1:?usage: measure.sh BUILD [OLD_COMMIT]}" && pwd)
old_commit=${2:-08a2526}
src=$(cd "$(dirname "$0")/../.." && pwd)
runner="$src/tests/ci/actions_runner.py"
deb=$(ls -t "$build"/ste_*_"$(dpkg --print-architecture)".deb | head -1)
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-cijob-XXXXXX")
server=''
trap '[ -z "$server" ] || kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
g() { git -c user.email=ci@example.com -c user.name=ci "$@"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# The project: 30 shell tests over three libraries, on a bare origin.
dev="$work/dev" origin="$work/origin.git"
mkdir -p "$dev/lib" "$dev/tests"
for l in a b c; do echo "$l() { echo $l; }" > "$dev/lib/$l.sh"; done
for l in a b c; do for i in $(seq 1 10); do
  printf '. lib/%s.sh\n[ "$(%s)" = %s ]\n' "$l" "$l" "$l" > "$dev/tests/test_$l$i.sh"; done; done
printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\n' > "$dev/ste.toml"
printf '.ste/\n.ste-baseline/\n' > "$dev/.gitignore"
g -C "$dev" init -q -b main && g -C "$dev" add -A && g -C "$dev" commit -q -m project
git clone -q --bare "$dev" "$origin"
g -C "$dev" remote add origin "file://$origin"
base=$(git -C "$dev" rev-parse HEAD)
# main's baseline, exported into the "cache" under the record action's key.
pkgroot="$work/pkgroot"
dpkg-deb -x "$deb" "$pkgroot"
ste="$pkgroot/usr/bin/ste"
cache="$work/cache"
(cd "$dev" && "$ste" record --progress none > /dev/null && mkdir -p .ste-baseline &&
  "$ste" baseline export latest -o .ste-baseline/baseline.steb 2> /dev/null)
# The pull request: lib/b.sh, merged as GitHub does (refs/pull/1/merge).
g -C "$dev" checkout -q -b feature
echo 'b() { echo b; }  # faster' > "$dev/lib/b.sh"
g -C "$dev" commit -q -a -m "b is faster"
g -C "$dev" push -q origin feature
head=$(git -C "$dev" rev-parse feature)
g -C "$dev" checkout -q --detach main
g -C "$dev" merge -q --no-ff -m "Merge $head into $base" feature
merge=$(git -C "$dev" rev-parse HEAD)
g -C "$dev" push -q origin "$merge:refs/pull/1/merge"

# The package on loopback.
mkdir -p "$work/www"
cp "$deb" "$work/www/"
/usr/bin/python3 -m http.server --bind 127.0.0.1 0 --directory "$work/www" > "$work/http.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do grep -q 'port [0-9]' "$work/http.log" && break; sleep 0.1; done
port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/http.log" | head -1)
url="http://127.0.0.1:$port/$(basename "$deb")"

context() {  # FILE TEMP
  /usr/bin/python3 - "$1" "$2" "$cache" "$merge" "$base" "$head" <<'PY'
import json, sys
out, temp, cache, merge, base, head = sys.argv[1:]
pr = {"number": 1, "title": "Faster b", "body": "It is faster.", "labels": [], "commits": 1,
      "base": {"sha": base, "ref": "main"}, "head": {"sha": head, "ref": "feature"}}
github = {"event_name": "pull_request", "sha": merge, "ref": "refs/pull/1/merge", "ref_name": "1/merge",
          "base_ref": "main", "head_ref": "feature", "run_number": "7", "run_attempt": "1",
          "repository": "acme/app", "action_repository": "your-org/ste", "server_url": "https://github.com",
          "event": {"action": "synchronize", "number": 1, "pull_request": pr}}
json.dump({"github": github, "runner": {"temp": temp, "tool_cache": temp + "/_tool"}, "cache_dir": cache},
          open(out, "w"))
PY
}
checkout() {  # DIR: the merge commit at depth 1, as actions/checkout does
  git init -q "$1"
  git -C "$1" remote add origin "file://$origin"
  git -C "$1" -c protocol.version=2 fetch -q --no-tags --depth=1 origin "+$merge:refs/remotes/pull/1/merge"
  git -C "$1" checkout -q --force refs/remotes/pull/1/merge
}

# The cache entry: a save by the record action's own step (through the
# runner, so that its layout is the runner's).
mkdir -p "$work/save/.ste-baseline" "$work/save.tmp"
cp "$dev/.ste-baseline/baseline.steb" "$work/save/.ste-baseline/"
cat > "$work/save.yml" <<YML
name: save
runs:
  using: composite
  steps:
    - uses: actions/cache/save@v4
      with:
        path: .ste-baseline/baseline.steb
        key: ste-baseline-main-$base
YML
context "$work/save.ctx" "$work/save.tmp"
/usr/bin/python3 "$runner" --action "$work/save.yml" --workspace "$work/save" --context "$work/save.ctx" > /dev/null

echo "== new: depth-1 checkout, setup (package from $url), select"
t0=$(now)
ws="$work/new/ws"
checkout "$ws"
mkdir -p "$work/new/temp"
context "$work/new/ctx" "$work/new/temp"
t1=$(now)
/usr/bin/python3 "$runner" --action "$src/deploy/github/setup/action.yml" --workspace "$ws" \
  --context "$work/new/ctx" --with "url=$url" --outputs "$work/new/setup.json" > "$work/new/setup.log" 2>&1 \
  || { cat "$work/new/setup.log"; exit 1; }
t2=$(now)
installed=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outputs"]["ste"])' "$work/new/setup.json")
/usr/bin/python3 "$runner" --action "$src/deploy/github/select/action.yml" --workspace "$ws" \
  --context "$work/new/ctx" --with "ste=$installed" --with shards=3 --outputs "$work/new/select.json" \
  > "$work/new/select.log" 2>&1 || { cat "$work/new/select.log"; exit 1; }
t3=$(now)
mode=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outputs"]["mode"])' "$work/new/select.json")
echo "new: checkout $(secs "$t0" "$t1") s, setup $(secs "$t1" "$t2") s, select $(secs "$t2" "$t3") s (mode $mode): $(secs "$t0" "$t3") s"

if [ "${SKIP_OLD:-0}" = 1 ]; then exit 0; fi
echo "== old: clone ste at $old_commit, make build (ccache off), select"
t0=$(now)
if [ -n "${OLD_TREE:-}" ]; then
  # A tree already built at OLD_COMMIT: only its select is timed.
  mkdir -p "$work/old" && ln -s "$OLD_TREE" "$work/old/ste"
else
  git clone -q "$src" "$work/old/ste"
  git -C "$work/old/ste" checkout -q "$old_commit"
  CCACHE_DISABLE=1 make -C "$work/old/ste" build ACTION_VALIDATOR=/bin/true > "$work/old/build.log" 2>&1 \
    || { tail -20 "$work/old/build.log"; exit 1; }
fi
t1=$(now)
ws="$work/old/ws"
checkout "$ws"
cp -r "$work/save/.ste-baseline" "$ws/"
(cd "$ws" && STE="$work/old/ste/build/ste" STE_BASE_COMMIT="$base" STE_SHARDS=3 STE_STORE="sqlite:$work/old/store/ste.db" \
  GITHUB_OUTPUT="$work/old/out" "$work/old/ste/deploy/github/ste-ci.sh" select) > "$work/old/select.log" 2>&1 || true
t2=$(now)
echo "old: build $(secs "$t0" "$t1") s, select $(secs "$t1" "$t2") s ($(grep -m1 '^mode=' "$work/old/out" || echo 'mode ?')): $(secs "$t0" "$t2") s"
