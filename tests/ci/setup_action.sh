#!/usr/bin/env bash
# ctest SetupActionDownload: the setup action (deploy/github/setup/action.yml)
# run through the stand-in runner (tests/ci/actions_runner.py: its
# expressions, if:, cache steps, $GITHUB_OUTPUT and $GITHUB_PATH as GitHub's
# runner reads them), downloading from a real HTTP server on loopback. After
# the action, a probe action in the same job reports the PATH the next
# steps get and which ste they find.
#
#   1. the package by url (and its right sha256): the next steps find ste
#      in the tool cache and nowhere else, `ste --version` names the
#      package's version, and that ste, with STE_PRELOAD and
#      STE_INTEGRATIONS unset, records a 3-test git repository and selects
#      exactly the 2 tests reading the file a commit changed;
#   2. the package by version, from a release-style URL (base-url), with no
#      curl on PATH (python3's urllib downloads);
#   3. a missing release asset: fails, naming the URL and HTTP 404 (with
#      curl, and without);
#   4. the first half of the package: fails, not a Debian package;
#   5. the package repacked as Architecture: arm64 (amd64 on an arm64
#      machine): fails, naming both architectures;
#   6. a wrong sha256: fails, naming both sums;
#   7. the outputs: $GITHUB_OUTPUT written only in the heredoc form, each
#      with its own ghadelimiter_<32 hex>; as the runner reads them, ste is
#      the absolute path of the ste on PATH and version the package's;
#   8. neither url nor version, in a stand-in source tree holding the
#      action: job 1 hashes the source, misses the cache, runs `make
#      package` (a stand-in that copies the package), saves and installs;
#      job 2 restores it and skips the build; build/ and .git do not change
#      the key, a changed source file does;
#   and a package not named ste, one that is not the version also asked
#   for, one whose ste is not its Version (found after unpacking), and ones whose Architecture or Version carries a workflow command
#   (##[set-output name=ste]...) fail, those without setting any output.
# Every failure: the action fails at "Install ste", nothing is added to the
# PATH of the steps after it, no output is set, nothing is left in the tool
# cache, and the reason is in the log and in an error annotation.
#
# The package is BUILD/ste_*_<arch>.deb (`make test` runs cpack first).
# Without one, 1's record and select are skipped, saying so, and the rest
# run on a stand-in package (a script printing `ste <version>`).
#
#   tests/ci/setup_action.sh BUILD
set -euo pipefail
build=$(cd "${1:?usage: setup_action.sh BUILD}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
action_dir="$src/deploy/github/setup"
[ -f "$here/actions_runner.py" ] || { echo "setup_action: FAIL: $here/actions_runner.py is missing" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-setup-action-XXXXXX")
server_pid=''
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; wait "$server_pid" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "setup_action: FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
g() { git -c user.email=ci@example.com -c user.name=ci "$@"; }

machine=$(dpkg --print-architecture)
other=arm64
[ "$machine" != arm64 ] || other=amd64

# The package under test.
# shellcheck disable=SC2012  # CPack's names: ste_<version>_<arch>.deb
pkg=$(ls -t "$build"/ste_*_"$machine".deb 2> /dev/null | head -1 || true)
standin=''
if [ -z "$pkg" ]; then
  standin=1
  echo "setup_action: no $build/ste_*_$machine.deb (cpack writes it in make test, make package):"
  echo "setup_action: SKIP case 1's record and select; the install cases use a stand-in package"
  mkdir -p "$work/fake/DEBIAN" "$work/fake/usr/bin"
  printf 'Package: ste\nVersion: 0.2.0\nArchitecture: %s\nMaintainer: t <t@example.com>\nDescription: stand-in\n' \
    "$machine" > "$work/fake/DEBIAN/control"
  # shellcheck disable=SC2016  # the stand-in's own $1
  printf '#!/bin/sh\n[ "$1" = --version ] && echo "ste 0.2.0 (stand-in)"\n' > "$work/fake/usr/bin/ste"
  chmod 755 "$work/fake/usr/bin/ste"
  dpkg-deb --root-owner-group -Zgzip --build "$work/fake" "$work/ste_0.2.0_$machine.deb" > /dev/null
  pkg="$work/ste_0.2.0_$machine.deb"
fi
version=$(dpkg-deb -f "$pkg" Version)
upstream=${version#*:}
upstream=${upstream%-*}
sum=$(sha256sum "$pkg" | cut -c1-64)
echo "setup_action: package $(basename "$pkg"), version $version"

# PKG FIELD VALUE OUT: PKG repacked with one control field changed
# (--nocheck: also to a value dpkg-deb would refuse to build).
repack() {
  local d="$work/repack-$2"
  dpkg-deb -R "$1" "$d"
  sed -i "s|^$2: .*|$2: $3|" "$d/DEBIAN/control"
  dpkg-deb --root-owner-group --nocheck -Zgzip -z1 --build "$d" "$4" > /dev/null 2> "$d.err" ||
    { cat "$d.err"; fail "could not repack $1 with $2: $3"; }
  rm -rf "$d" "$d.err"
}

# What the server serves.
www="$work/www"
mkdir -p "$www/pkg" "$www/releases/v$upstream" "$www/bad"
cp "$pkg" "$www/pkg/ste.deb"
cp "$pkg" "$www/releases/v$upstream/ste_${upstream}_$machine.deb"
head -c $(($(stat -c %s "$pkg") / 2)) "$pkg" > "$www/bad/truncated.deb"
repack "$pkg" Architecture "$other" "$www/bad/other-arch.deb"
repack "$pkg" Package not-ste "$www/bad/not-ste.deb"
repack "$pkg" Version 9.9.9 "$www/bad/relabelled.deb"
# A workflow command where dpkg-deb reads it back (Architecture: only a
# warning) and where it refuses the field (Version: its error quotes it).
repack "$pkg" Architecture "$machine##[set-output name=ste]$work/evil" "$www/bad/command-arch.deb"
repack "$pkg" Version "1##[set-output name=ste]$work/evil" "$www/bad/command-version.deb"

# A real HTTP server on a port the kernel picks; its first line names it.
: > "$work/http.log"  # there before the server (which opens it in the background) writes
/usr/bin/python3 -u -m http.server --bind 127.0.0.1 --directory "$www" 0 >> "$work/http.log" 2>&1 &
server_pid=$!
port=''
deadline=$((SECONDS + 20))
until [ -n "$port" ]; do
  port=$(sed -n 's/^Serving HTTP on .* port \([0-9][0-9]*\) .*/\1/p' "$work/http.log")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2> /dev/null || fail "the HTTP server exited: $(cat "$work/http.log")"
  [ $SECONDS -lt $deadline ] || fail "the HTTP server named no port in 20 s"
  sleep 0.05
done
base="http://127.0.0.1:$port"
until curl -sf -o /dev/null "$base/pkg/ste.deb"; do
  [ $SECONDS -lt $deadline ] || fail "the HTTP server at $base does not answer"
  sleep 0.05
done

# PATHs of this machine's /usr/bin without ste (and one without curl too),
# so that no other ste can answer and the python3 download is taken.
mkdir -p "$work/bin" "$work/bin-nocurl"
cp -s /usr/bin/* "$work/bin/" 2> /dev/null || true
cp -s /usr/bin/* "$work/bin-nocurl/" 2> /dev/null || true
rm -f "$work/bin/ste" "$work/bin-nocurl/ste" "$work/bin-nocurl/curl"
clean_path="$work/bin:/usr/sbin"
nocurl_path="$work/bin-nocurl:/usr/sbin"

# The step after the action: the PATH it gets, which ste it finds, what
# that ste says.
mkdir -p "$work/probe"
cat > "$work/probe/action.yml" <<'YML'
name: probe
runs:
  using: composite
  steps:
    - id: probe
      shell: bash
      run: |
        d=probe_$RANDOM$RANDOM
        { echo "path<<$d"; echo "$PATH"; echo "$d"
          echo "which<<$d"; type -ap ste || true; echo "$d"
          echo "version<<$d"; ste --version 2>&1 || true; echo "$d"; } >> "$GITHUB_OUTPUT"
outputs:
  path:
    value: ${{ steps.probe.outputs.path }}
  which:
    value: ${{ steps.probe.outputs.which }}
  version:
    value: ${{ steps.probe.outputs.version }}
YML

# The job: the setup action, then the probe, in one stand-in runner;
# the result as JSON. DIR TEMP ACTION_YML [input=value...] (The probe runs
# after a failed action too, which a job would not do: to show that
# nothing was added to PATH.)
cat > "$work/job.py" <<'PY'
import glob, json, os, sys
sys.path.insert(0, os.environ["RUNNER_PY_DIR"])
from actions_runner import ActionRunner

d, temp, action = sys.argv[1:4]
inputs = dict(a.split("=", 1) for a in sys.argv[4:])
context = {
    "github": {"repository": "acme/app", "action_repository": "your-org/ste",
               "ref": "refs/heads/main", "ref_name": "main", "sha": "0" * 40},
    "runner": {"temp": temp, "tool_cache": os.path.join(d, "tools")},
    "cache_dir": os.environ["CACHE_DIR"],
}
os.makedirs(os.path.join(d, "ws"), exist_ok=True)
with open(os.path.join(d, "log"), "w") as log:
    runner = ActionRunner(context, workspace=os.path.join(d, "ws"), log=log)
    result = runner.run(action, inputs)
    probe = runner.run(os.path.join(os.environ["PROBE_DIR"], "action.yml"), {})
out = result.as_json()
out["probe"] = probe.outputs
# $GITHUB_OUTPUT files as the steps wrote them (the runner keeps them)
out["output_files"] = [open(f, encoding="utf-8").read()
                       for f in sorted(glob.glob(os.path.join(temp, "_runner_file_commands", "set_output_*")))
                       if os.path.getsize(f)]
json.dump(out, open(os.path.join(d, "result.json"), "w"), indent=1)
PY
mkdir -p "$work/cache"
export RUNNER_PY_DIR="$here" PROBE_DIR="$work/probe" CACHE_DIR="$work/cache"

# NAME [input=value...]: a fresh job (its own tool cache; its own runner
# temp unless job_temp says) runs the setup action (or job_action) with
# these inputs, then the probe; PATH is job_path, else clean_path.
job() {
  local name=$1 d="$work/$1"
  shift
  mkdir -p "$d"
  env -u STE_PRELOAD -u STE_INTEGRATIONS PATH="${job_path:-$clean_path}" \
    /usr/bin/python3 "$work/job.py" "$d" "${job_temp:-$d/temp}" "${job_action:-$action_dir/action.yml}" "$@" ||
    { cat "$d/log" 2> /dev/null; fail "$name: the stand-in runner could not run the action"; }
}
# NAME KEY: a value of the job's result (dots go down: outputs.ste).
get() {
  /usr/bin/python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v.get(k, "")
print(v if isinstance(v, str) else json.dumps(v))' "$work/$1/result.json" "$2"
}

# NAME MESSAGE...: the action failed at Install ste, said each MESSAGE
# (log and annotation), set no output, added nothing to PATH, left nothing.
expect_failure() {
  local name=$1 d="$work/$1" m
  shift
  [ "$(get "$name" success)" = false ] || { cat "$d/log"; fail "$name: the action succeeded"; }
  [ "$(get "$name" failed_step)" = "Install ste" ] || fail "$name: failed at '$(get "$name" failed_step)'"
  get "$name" steps | grep -q "Process completed with exit code [1-9]" || fail "$name: the step's exit status was 0"
  for m in "$@"; do
    grep -qF -- "$m" "$d/log" || { cat "$d/log"; fail "$name: the log does not say '$m'"; }
  done
  get "$name" steps | grep -qF -- "$1" || fail "$name: no error annotation saying '$1'"
  [ "$(get "$name" probe.path)" = "${job_path:-$clean_path}" ] ||
    fail "$name: the next step's PATH is $(get "$name" probe.path)"
  [ -z "$(get "$name" outputs.ste)$(get "$name" outputs.version)" ] ||
    fail "$name: outputs were set: $(get "$name" outputs)"
  [ -z "$(find "$d/tools" -mindepth 3 -print -quit)" ] ||
    fail "$name: left unpacked files: $(find "$d/tools" -mindepth 3 | head -3)"
  ok "$name -> $(grep -m1 'ste setup: error:' "$d/log" | sed 's/^ *//')"
}

# NAME: the action succeeded, the next step finds the unpacked ste first
# and alone, and it names the version.
expect_installed() {
  local name=$1 d="$work/$1" bindir
  [ "$(get "$name" success)" = true ] || { cat "$d/log"; fail "$name: the action failed"; }
  bindir="$d/tools/ste/$version/$machine/usr/bin"
  [ "$(get "$name" outputs.ste)" = "$bindir/ste" ] || fail "$name: output ste is '$(get "$name" outputs.ste)'"
  [ "$(get "$name" outputs.version)" = "$upstream" ] || fail "$name: output version is '$(get "$name" outputs.version)'"
  [ "$(get "$name" probe.path)" = "$bindir:${job_path:-$clean_path}" ] ||
    fail "$name: the next step's PATH is $(get "$name" probe.path)"
  [ "$(get "$name" probe.which)" = "$bindir/ste" ] || fail "$name: the next step finds ste at: $(get "$name" probe.which)"
  [ "$(get "$name" probe.version | awk '{print $2}')" = "$upstream" ] ||
    fail "$name: the next step's ste --version says $(get "$name" probe.version)"
  [ -n "$standin" ] || [ -f "$bindir/../lib/ste/libste_preload.so" ] || fail "$name: no lib/ste/libste_preload.so beside $bindir"
}

# 1. url, with its right sha256.
job url url="$base/pkg/ste.deb" sha256="$sum"
expect_installed url
grep -q "downloading $base/pkg/ste.deb (curl)" "$work/url/log" || fail "url: the log does not say curl downloaded"
steps=$(get url steps | /usr/bin/python3 -c 'import json,sys; print(" ".join(s["outcome"] for s in json.load(sys.stdin)))')
[ "$steps" = "skipped skipped skipped skipped success" ] || fail "url: the steps ran: $steps (only Install ste should)"
ok "url: the next step runs $(get url probe.which): $(get url probe.version)"

if [ -n "$standin" ]; then
  echo "setup_action: SKIP the record and select (a stand-in package, not ste)"
else
  # The unpacked ste alone, on the PATH the next step gets.
  steenv=(env -u STE_PRELOAD -u STE_INTEGRATIONS PATH="$(get url probe.path)")
  repo="$work/repo"
  mkdir -p "$repo/lib" "$repo/tests"
  echo a > "$repo/lib/a.txt"
  echo b > "$repo/lib/b.txt"
  echo 'cat lib/a.txt > /dev/null' > "$repo/tests/test_a.sh"
  echo 'cat lib/b.txt > /dev/null' > "$repo/tests/test_b.sh"
  echo 'cat lib/a.txt lib/b.txt > /dev/null' > "$repo/tests/test_ab.sh"
  printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\n' > "$repo/ste.toml"
  echo ".ste/" > "$repo/.gitignore"
  g -C "$repo" init -q -b main
  g -C "$repo" add -A
  g -C "$repo" commit -q -m tests
  (cd "$repo" && "${steenv[@]}" ste record --progress none) > "$work/record.log" 2>&1 ||
    { cat "$work/record.log"; fail "the unpacked ste could not record"; }
  echo a2 > "$repo/lib/a.txt"
  g -C "$repo" commit -q -a -m "a changed"
  selected=$(cd "$repo" && "${steenv[@]}" ste select 2> "$work/select.err" | LC_ALL=C sort | tr '\n' ' ') ||
    { cat "$work/select.err"; fail "the unpacked ste could not select"; }
  [ "$selected" = "tests/test_a.sh tests/test_ab.sh " ] ||
    fail "selected '$selected' for a change of lib/a.txt ($(cat "$work/select.err"))"
  ok "url: the unpacked ste recorded 3 tests and selected $selected($(head -1 "$work/select.err"))"
fi

# 2. version, from a release-style URL on the server, without curl.
job_path=$nocurl_path job version version="v$upstream" base-url="$base/releases"
job_path=$nocurl_path expect_installed version
grep -q "downloading $base/releases/v$upstream/ste_${upstream}_$machine.deb (python3 urllib: no curl here)" \
  "$work/version/log" || { cat "$work/version/log"; fail "version: not downloaded from the release URL with python3"; }
ok "version: v$upstream from $base/releases/v$upstream/ by python3's urllib"

# 3. a missing release asset, with curl and without.
job missing version=9.9.9 base-url="$base/releases"
expect_failure missing "no such release asset: $base/releases/v9.9.9/ste_9.9.9_$machine.deb (HTTP 404)"
job_path=$nocurl_path job missing-python url="$base/nothing/here.deb"
job_path=$nocurl_path expect_failure missing-python "no such release asset: $base/nothing/here.deb (HTTP 404)"

# 4. the first half of the package.
job truncated url="$base/bad/truncated.deb"
expect_failure truncated "$base/bad/truncated.deb is not a Debian package"

# 5. another architecture.
job other-arch url="$base/bad/other-arch.deb"
expect_failure other-arch "package is for $other, this runner is $machine"

# 6. a wrong sha256 (that of the truncated file).
bad_sum=$(sha256sum "$www/bad/truncated.deb" | cut -c1-64)
job sha256 url="$base/pkg/ste.deb" sha256="$bad_sum"
expect_failure sha256 "sha256 mismatch" "expected $bad_sum, got $sum"

# Not ste; not the version asked for; a workflow command in a field.
job not-ste url="$base/bad/not-ste.deb"
expect_failure not-ste "is the package 'not-ste', not ste"
job not-version url="$base/pkg/ste.deb" version=9.9.9
expect_failure not-version "not the version 9.9.9 asked for"
# A package that unpacks but whose ste is not its version: the unpacked
# tree goes too.
job relabelled url="$base/bad/relabelled.deb"
expect_failure relabelled "ste --version says 'ste $upstream" "the package is version 9.9.9"
job command-arch url="$base/bad/command-arch.deb"
expect_failure command-arch "package is for $machine## [set-output name=ste]$work/evil, this runner is $machine"
job command-version url="$base/bad/command-version.deb"
expect_failure command-version "dpkg-deb cannot read its Package field" "version string has embedded spaces"
for name in command-arch command-version; do
  if get "$name" steps | grep -q '"outputs": {[^}]*evil'; then
    fail "$name: a package's field set a step output: $(get "$name" steps)"
  fi
done

# 7. the outputs as written: heredoc form only, a fresh delimiter each.
# (As the runner read them, case 1 and 2 checked: ste, version.)
/usr/bin/python3 - "$work/url/result.json" <<'PY' || fail "case 1's \$GITHUB_OUTPUT (above)"
import json, re, sys
files = json.load(open(sys.argv[1]))["output_files"]
assert len(files) == 2, files   # the install step's, the probe's
text = [f for f in files if f.startswith("ste<<")]
assert len(text) == 1, files
lines, names, delims = text[0].split("\n"), [], set()
i = 0
while i < len(lines) - 1:
    m = re.fullmatch(r"([a-z]+)<<(ghadelimiter_[0-9a-f]{32})", lines[i])
    assert m, f"line {lines[i]!r} is not NAME<<ghadelimiter_<32 hex>"
    assert m.group(2) not in delims, "a delimiter used twice"
    delims.add(m.group(2))
    names.append(m.group(1))
    assert lines[i + 2] == m.group(2), f"{m.group(1)}: more than one line, or no delimiter"
    i += 3
assert lines[-1] == "" and names == ["ste", "version"], (names, lines)
print("ok: $GITHUB_OUTPUT: ste and version, each NAME<<ghadelimiter_<32 hex>, one line, its own delimiter")
PY

# 8. neither url nor version: two jobs in a stand-in source tree that
# holds the action (deploy/github/setup/); its `make package` copies the
# package under test into build/.
tree="$work/tree"
mkdir -p "$tree/deploy/github" "$tree/src" "$tree/.git" "$tree/build"
cp -r "$action_dir" "$tree/deploy/github/setup"
echo 'int main(void) { return 0; }' > "$tree/src/main.c"
# BUILD_DEBS over continuation lines, as in the real Makefile; two packages
# every Debian has, so nothing is installed.
printf 'BUILD_DEBS := dpkg \\\n  coreutils\n\npackage:\n\tcp %s build/ste_%s_%s.deb\n' \
  "$pkg" "$upstream" "$machine" > "$tree/Makefile"
# The runner's temp is the same path in every job (as on GitHub's hosted
# runners): the cache entry is for that path. Emptied between jobs.
src_job() {  # NAME: a job on a fresh machine
  rm -rf "$work/src-temp"
  job_temp="$work/src-temp" job_action="$tree/deploy/github/setup/action.yml" job "$1"
  get "$1" steps | /usr/bin/python3 -c 'import json,sys; print(" ".join(s["outcome"] for s in json.load(sys.stdin)))'
}
key_of() { get "$1" steps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["outputs"].get("key", ""))'; }
steps=$(src_job build-1)
[ "$steps" = "success success success success success" ] ||
  { cat "$work/build-1/log"; fail "from source, job 1: steps $steps (hash, restore, build, save, install)"; }
grep -q "cp $pkg build/ste_" "$work/build-1/log" || fail "from source, job 1: make package did not run"
expect_installed build-1
key=$(key_of build-1)
[[ "$key" =~ ^ste-deb-[a-z]+-[0-9.a-z]+-$machine-[0-9a-f]{64}$ ]] || fail "from source: key $key"
echo junk > "$tree/build/CMakeCache.txt"
echo junk > "$tree/.git/HEAD"
steps=$(src_job build-2)
[ "$steps" = "success success skipped skipped success" ] ||
  { cat "$work/build-2/log"; fail "from source, job 2: steps $steps (hash, restore, -, -, install)"; }
[ "$(key_of build-2)" = "$key" ] || fail "from source: build/ or .git changed the key"
grep -q "cp $pkg" "$work/build-2/log" && fail "from source, job 2: built again"
expect_installed build-2
echo '/* changed */' >> "$tree/src/main.c"
steps=$(src_job build-3)
[ "$(key_of build-3)" != "$key" ] || fail "from source: a changed source file kept the key"
[ "$steps" = "success success success success success" ] || fail "from source, job 3: steps $steps"
ok "from source: job 1 built and cached, job 2 restored (build skipped), a changed file built again; key ${key:0:40}…"

echo "setup_action: all cases passed in ${SECONDS}s"
