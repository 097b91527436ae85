#!/usr/bin/env bash
# ctest CiDay: a day of CI on GitHub's defaults, through the actions
# themselves. deploy/github/record/action.yml and select/action.yml run in
# the stand-in runner (tests/ci/actions_runner.py: expressions, if:, the
# cache on a folder, $GITHUB_OUTPUT read as GitHub's runner reads it), on
# depth-1 checkouts made as actions/checkout makes them, from a bare
# "origin" served over file://:
#
#   main   push 1 and push 2 (run numbers 1, 2): the record action records
#          in a depth-1 clone (MRI = run number) and saves the export as
#          ste-baseline-main-<sha>; without a run number it fails, saying
#          so; on a branch with a failing test it records, saves, writes
#          the JUnit file and a summary naming the test (escaped), and
#          fails;
#   pull request 1 (2 commits on lib/b.sh), on GitHub's merge commit
#          refs/pull/1/merge at depth 1 with a real event payload:
#      a.  main's export for the base commit: mode subset, exactly what a
#          full clone selects for the same merge commit; the matrix's 3
#          shards, each a fresh depth-1 checkout, run each selected test
#          once; GitLab's way (GIT_DEPTH 20, ste-ci.sh shard with
#          STE_CHANGE_BASE) gives the same tests;
#      b.  only an older export in the cache (restore-keys): subset, the
#          reason naming the older baseline;
#      c.  a force tag in one of the PR's commits (not the merge commit's
#          message), in the title, the body or a label: all; a commit
#          count the clone cannot reach: all, saying why;
#      d.  forged file names under a run_all glob and tests named with
#          newlines, `::set-output`, `|`, backticks, `<<`, `%` and
#          non-UTF-8 bytes, and 5000 long test names: the outputs as the
#          runner reads them say all (never none), no output is added,
#          the summary's table rows are whole and it is under 1 MiB;
#      e.  a damaged export: all; no export: all; a baseline file the
#          change commits itself, with no export: all (not imported);
#   the audit workflow (workflows/audit.yml): its job after checkout and
#          setup, at depth 1 on main with push 2's export in the cache: a
#          seeded sample audited, no miss; an empty cache: nothing to do;
#   a pytest project (kind = "pytest"): recorded at depth 1 (a second
#          push's record restores the first's fingerprints), a pull
#          request selects the one test file, its shard runs it as pr.yml
#          does (NUL-separated through xargs -0 -r).
#
#   tests/ci/ci_day.sh BUILD      (ste: $STE, else BUILD/ste)
# shellcheck disable=SC2016  # test scripts written with $ for later
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
export STE=${STE:-$build/ste}
ci="$src/deploy/github/ste-ci.sh"
record_action="$src/deploy/github/record/action.yml"
select_action="$src/deploy/github/select/action.yml"
work=$(mktemp -d "${TMPDIR:-/tmp}/ste-ciday-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "ci_day: FAIL: $*" >&2; exit 1; }
ok() { echo "ci_day: ok: $*"; }
g() { git -c user.email=ci@example.com -c user.name=ci -c init.defaultBranch=main "$@"; }
[ -x "$STE" ] || fail "no ste at $STE"
echo "ci_day: $("$STE" --version)"

# ---------------------------------------------------------------------------
# The project: 9 shell tests over three libraries; config/ is run_all.
dev="$work/dev"
origin="$work/origin.git"
mkdir -p "$dev/lib" "$dev/tests" "$dev/config"
echo 'a() { echo A; }' > "$dev/lib/a.sh"
echo 'b() { echo B; }' > "$dev/lib/b.sh"
echo 'c() { echo C; }' > "$dev/lib/c.sh"
echo 'x = 1' > "$dev/config/app.cfg"
for i in 1 2 3; do printf '. lib/a.sh\n[ "$(a)" = A ]\n' > "$dev/tests/test_a$i.sh"; done
for i in 1 2 3; do printf '. lib/b.sh\n[ "$(b)" = B ]\n' > "$dev/tests/test_b$i.sh"; done
for i in 1 2 3; do printf '. lib/c.sh\n[ "$(c)" = C ]\n' > "$dev/tests/test_c$i.sh"; done
printf '[tests]\ninclude = ["tests/test_*.sh"]\n[runner]\ncommand = "sh {test}"\n[selection]\nrun_all = ["config/**"]\n' \
  > "$dev/ste.toml"
printf '.ste/\n.ste-baseline/\n' > "$dev/.gitignore"
g init -q "$dev"
g -C "$dev" add -A
g -C "$dev" commit -q -m "main: the project"
g init -q --bare "$origin"
g -C "$dev" remote add origin "file://$origin"
g -C "$dev" push -q origin main
c1=$(git -C "$dev" rev-parse HEAD)

# DIR SHA REF [BRANCH]: a depth-1 checkout as actions/checkout@v4 makes it:
# one commit fetched by its SHA into REF, checked out (on BRANCH for a push,
# detached for a pull request's merge commit).
checkout() {
  local dir=$1 sha=$2 ref=$3 branch=${4:-}
  mkdir -p "$dir"
  git -C "$dir" init -q
  git -C "$dir" remote add origin "file://$origin"
  git -C "$dir" -c protocol.version=2 fetch -q --no-tags --prune --depth=1 origin "+$sha:$ref"
  if [ -n "$branch" ]; then
    git -C "$dir" checkout -q --force -B "$branch" "$ref"
  else
    git -C "$dir" checkout -q --force "$ref"
  fi
}

cache="$work/cache"
mkdir -p "$cache"

# The context of a job (JSON) from the variables named below: CTX_EVENT
# push or pull_request, CTX_SHA, CTX_REF, CTX_RUN, CTX_TEMP, CTX_CACHE and,
# for a pull request, PR_NUMBER PR_TITLE PR_BODY PR_LABELS (one a line)
# PR_COMMITS PR_BASE PR_HEAD PR_HEAD_REF.
cat > "$work/context.py" <<'PY'
import json, os, sys
e = os.environ
github = {"event_name": e["CTX_EVENT"], "sha": e["CTX_SHA"], "ref": e["CTX_REF"],
          "run_number": e["CTX_RUN"], "run_attempt": "1", "repository": "acme/app",
          "repository_owner": "acme", "action_repository": "your-org/ste",
          "server_url": "https://github.com"}
repository = {"full_name": "acme/app", "default_branch": "main"}
if e["CTX_EVENT"] == "push":
    github.update(ref_name=e["CTX_REF"].split("/", 2)[2], base_ref="", head_ref="",
                  event={"ref": e["CTX_REF"], "after": e["CTX_SHA"], "repository": repository})
else:
    labels = [{"name": n} for n in e["PR_LABELS"].split("\n") if n]
    pr = {"number": int(e["PR_NUMBER"]), "title": e["PR_TITLE"], "body": e["PR_BODY"] or None,
          "labels": labels, "commits": int(e["PR_COMMITS"]), "state": "open",
          "base": {"sha": e["PR_BASE"], "ref": "main"},
          "head": {"sha": e["PR_HEAD"], "ref": e["PR_HEAD_REF"]}}
    github.update(ref_name="%s/merge" % e["PR_NUMBER"], base_ref="main", head_ref=e["PR_HEAD_REF"],
                  event={"action": "synchronize", "number": pr["number"], "pull_request": pr,
                         "repository": repository})
json.dump({"github": github, "runner": {"temp": e["CTX_TEMP"], "tool_cache": e["CTX_TEMP"] + "/_tool"},
           "cache_dir": e["CTX_CACHE"]}, open(sys.argv[1], "w"), indent=1)
PY

# NAME ACTION WORKSPACE [input=value...]: runs the action through the
# stand-in runner with the context of the CTX_* variables; the result in
# $work/NAME.json, what GitHub would show as summary in $work/NAME.md, the
# log in $work/NAME.log. Returns the runner's status (1: the action failed).
run_action() {
  local name=$1 action=$2 ws=$3 arg
  shift 3
  local withs=(--with "ste=$STE")
  for arg in "$@"; do withs+=(--with "$arg"); done
  mkdir -p "$work/$name.temp"
  CTX_TEMP="$work/$name.temp" CTX_CACHE=${CTX_CACHE:-$cache} /usr/bin/python3 "$work/context.py" "$work/$name.ctx.json"
  local status=0
  /usr/bin/python3 "$here/actions_runner.py" --action "$action" --workspace "$ws" --context "$work/$name.ctx.json" \
    --outputs "$work/$name.json" --summary "$work/$name.md" "${withs[@]}" > "$work/$name.log" 2>&1 || status=$?
  [ "$status" -le 1 ] || { cat "$work/$name.log"; fail "$name: the runner could not run the action"; }
  return "$status"
}
# NAME KEY: a value of a job's result (dots go down: outputs.mode,
# steps.2.outputs); strings as they are, anything else as JSON.
get() {
  /usr/bin/python3 - "$work/$1.json" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v.get(k, "")
sys.stdout.write(v if isinstance(v, str) else json.dumps(v))
PY
}
show() { cat "$work/$1.log" "$work/$1.json" >&2 2> /dev/null || true; }

# ---------------------------------------------------------------------------
# main, push 1 and push 2: the record action on depth-1 checkouts.
push_record() {  # NAME SHA BRANCH RUN: the record action, expected to pass
  local name=$1 sha=$2 branch=$3 run=$4
  checkout "$work/$name/ws" "$sha" "refs/remotes/origin/$branch" "$branch"
  CTX_EVENT=push CTX_SHA=$sha CTX_REF=refs/heads/$branch CTX_RUN=$run \
    run_action "$name" "$record_action" "$work/$name/ws" "record-args=-j 2"
}
push_record push1 "$c1" main 1 || { show push1; fail "push 1: the record action failed"; }
[ "$(get push1 outputs.baseline-file)" = .ste-baseline/baseline.steb ] || { show push1; fail "push 1: outputs $(get push1 outputs)"; }
grep -q "ste record: baseline [0-9]* (mri 1, commit ${c1:0:12}): 9 tests, 9 passed, 0 failed" "$work/push1.log" \
  || { show push1; fail "push 1: not recorded with mri 1 (the run number)"; }
grep -q "every test passed" "$work/push1.md" || fail "push 1: summary $(cat "$work/push1.md")"
grep -qF "| 9 | 9 | 0 | 0 | 0 |" "$work/push1.md" || fail "push 1: summary table $(cat "$work/push1.md")"
ok "push 1: recorded at depth 1 with mri 1, exported, saved, summary"

echo 'a() { echo A; }  # faster' > "$dev/lib/a.sh"
g -C "$dev" commit -q -a -m "main: a is faster"
g -C "$dev" push -q origin main
c2=$(git -C "$dev" rev-parse HEAD)
push_record push2 "$c2" main 2 || { show push2; fail "push 2: the record action failed"; }
grep -q "(mri 2, commit ${c2:0:12})" "$work/push2.log" || { show push2; fail "push 2: not recorded with mri 2"; }
keys=$(/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import actions_runner as a; print(" ".join(a.CacheFolder(sys.argv[2]).keys()))' "$here" "$cache")
[ "$keys" = "ste-baseline-main-$c1 ste-baseline-main-$c2" ] || fail "the cache holds: $keys"
ok "push 2: recorded with mri 2; the cache holds ste-baseline-main-<sha> for both pushes"

# The nightly audit workflow (deploy/github/workflows/audit.yml), its job
# run as GitHub runs it: the steps after actions/checkout and the setup
# action (which put ste on PATH: here a folder with $STE in it), as one
# composite action through the stand-in runner, on a depth-1 checkout of
# main, with the cache push 2 saved; then with an empty cache.
/usr/bin/python3 - "$src/deploy/github/workflows/audit.yml" "$work/audit-action/action.yml" <<'PY'
import os, sys, yaml
job = yaml.safe_load(open(sys.argv[1]))["jobs"]["audit"]
steps = []
for step in job["steps"]:
    uses = step.get("uses", "")
    if uses.startswith(("actions/checkout@", "actions/upload-artifact@")) or "/deploy/github/setup@" in uses:
        continue
    if "apt-get" in step.get("run", ""):
        continue  # the machine has the tools
    if "run" in step:
        step = dict(step, shell="bash")
    steps.append(step)
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
yaml.safe_dump({"name": "audit job", "description": "audit.yml's job", "runs": {"using": "composite", "steps": steps}},
               open(sys.argv[2], "w"), sort_keys=False)
PY
mkdir -p "$work/ste-on-path"
ln -sf "$STE" "$work/ste-on-path/ste"
checkout "$work/audit/ws" "$c2" refs/remotes/origin/main main
PATH="$work/ste-on-path:$PATH" CTX_EVENT=push CTX_SHA=$c2 CTX_REF=refs/heads/main CTX_RUN=7 \
  run_action audit "$work/audit-action/action.yml" "$work/audit/ws" || { show audit; fail "the audit workflow failed"; }
grep -q "Cache restored from key: ste-baseline-main-$c2" "$work/audit.log" || { show audit; fail "audit: no baseline restored"; }
grep -q "ste audit: the selection (mode none: nothing changed since the baseline) left out 9 of 9 tests; ran 1 (seed 7)" \
  "$work/audit.log" || { show audit; fail "audit: not the sample of 1 in 9 with seed 7"; }
grep -q '"misses":0' "$work/audit.temp/ste-audit/audit.json" || { show audit; fail "audit: audit.json $(cat "$work/audit.temp/ste-audit/audit.json")"; }
grep -q 'data-audit-ran="1"' "$work/audit.temp/ste-audit/report.html" || { show audit; fail "audit: no report of the audit"; }
[ -z "$(git -C "$work/audit/ws" status --porcelain --ignored -- . ':!.ste')" ] \
  || { git -C "$work/audit/ws" status --porcelain --ignored >&2; fail "audit: the checkout was written to"; }
mkdir -p "$work/cache-none"
PATH="$work/ste-on-path:$PATH" CTX_CACHE=$work/cache-none CTX_EVENT=push CTX_SHA=$c2 CTX_REF=refs/heads/main CTX_RUN=8 \
  run_action audit0 "$work/audit-action/action.yml" "$work/audit/ws" || { show audit0; fail "audit without a baseline failed"; }
grep -q "no baseline in the cache yet: nothing to audit" "$work/audit0.log" || { show audit0; fail "audit0: not said"; }
ok "audit.yml: at depth 1, main's export restored and imported, a seeded sample audited (no miss), its report written; no export: nothing to audit"

# No run number in a shallow clone: a clear error, nothing recorded.
if push_record norun "$c2" main ""; then fail "a shallow record without a run number passed"; fi
[ "$(get norun failed_step)" = "Record and export" ] || { show norun; fail "no run number: failed at $(get norun failed_step)"; }
grep -q "STE_RUN_NUMBER" "$work/norun.log" || { show norun; fail "no run number: the log does not say what to set"; }
[ -z "$(get norun outputs.baseline-file)" ] || fail "no run number: a baseline file was output"
ok "a shallow record without a run number fails, naming STE_RUN_NUMBER"

# A branch with a failing test (its name full of Markdown): recorded,
# exported and saved all the same; JUnit written; the action fails.
broken_name='tests/test_br|ok`en<b>_*x*.sh'
g -C "$dev" checkout -q -b broken
printf 'echo "this test fails" >&2\nexit 1\n' > "$dev/$broken_name"
g -C "$dev" add -A
g -C "$dev" commit -q -m "broken: a failing test"
g -C "$dev" push -q origin broken
broken_sha=$(git -C "$dev" rev-parse HEAD)
g -C "$dev" checkout -q main
checkout "$work/broken/ws" "$broken_sha" refs/remotes/origin/broken broken
if CTX_EVENT=push CTX_SHA=$broken_sha CTX_REF=refs/heads/broken CTX_RUN=3 \
   run_action broken "$record_action" "$work/broken/ws" "junit=$work/broken/junit.xml"; then
  show broken; fail "a record with a failing test passed"
fi
[ "$(get broken failed_step)" = "Record and export" ] || { show broken; fail "broken: failed at $(get broken failed_step)"; }
if [ "$(get broken outputs.failed)" != 1 ] || [ -z "$(get broken outputs.baseline-file)" ]; then
  show broken; fail "broken: outputs $(get broken outputs)"
fi
# (The record action's steps: 0 restores the last record's fingerprints,
# 1 records, 2 saves the export, 3 saves the fingerprints, 4 fails.)
[ "$(get broken steps.2.outcome)" = success ] || { show broken; fail "broken: the export was not saved"; }
[ "$(get broken steps.4.outcome)" = failure ] || { show broken; fail "broken: the last step did not fail the action"; }
# Shell tests only: no source fingerprinted, nothing to keep for the next record.
[ "$(get broken steps.3.outcome)" = skipped ] || { show broken; fail "broken: fingerprints saved: $(get broken steps.3)"; }
grep -q "ste-baseline-broken-$broken_sha" "$cache"/entries/*/meta.json || fail "broken: no ste-baseline-broken-<sha> in the cache"
grep -q '<failure' "$work/broken/junit.xml" || fail "broken: no JUnit failure in $work/broken/junit.xml"
grep -qF '1 tests failed' "$work/broken.md" || fail "broken: summary $(cat "$work/broken.md")"
grep -qF 'tests/test\_br\|ok&#96;en&lt;b&gt;\_\*x\*.sh' "$work/broken.md" || fail "broken: the failing test is not escaped in $(cat "$work/broken.md")"
ok "a failing test: baseline stored, exported, saved, JUnit written, summary escaped, the action fails"

# ---------------------------------------------------------------------------
# Pull requests on GitHub's merge commit. BRANCH: commits made on it from
# main; NUMBER: the merge commit pushed as refs/pull/NUMBER/merge.
make_pr() {  # NUMBER BRANCH: sets pr_head, pr_merge, pr_commits
  local number=$1 branch=$2
  g -C "$dev" push -q origin "$branch"
  pr_head=$(git -C "$dev" rev-parse "$branch")
  pr_commits=$(git -C "$dev" rev-list --count "main..$branch")
  g -C "$dev" checkout -q --detach main
  g -C "$dev" merge -q --no-ff -m "Merge $pr_head into $(git -C "$dev" rev-parse main)" "$branch"
  pr_merge=$(git -C "$dev" rev-parse HEAD)
  g -C "$dev" push -q origin "$pr_merge:refs/pull/$number/merge"
  g -C "$dev" checkout -q main
}

# NAME NUMBER [input=value...]: the pull request's select job: a depth-1
# checkout of its merge commit, the select action with 3 shards. PR_TITLE,
# PR_BODY, PR_LABELS, PR_COMMITS (default the real count) say the rest.
pr_job() {
  local name=$1 number=$2
  shift 2
  checkout "$work/$name/ws" "$pr_merge" "refs/remotes/pull/$number/merge"
  CTX_EVENT=pull_request CTX_SHA=$pr_merge CTX_REF=refs/pull/$number/merge CTX_RUN=10 \
    PR_NUMBER=$number PR_TITLE=${PR_TITLE:-"Faster b"} PR_BODY=${PR_BODY:-"It is faster."} \
    PR_LABELS=${PR_LABELS:-enhancement} PR_COMMITS=${PR_COMMITS:-$pr_commits} PR_BASE=$c2 \
    PR_HEAD=${PR_HEAD_GONE:-$pr_head} PR_HEAD_REF=feature \
    run_action "$name" "$select_action" "$work/$name/ws" shards=3 "$@" || { show "$name"; fail "$name: the select action failed"; }
  [ "$(get "$name" steps.2.failures)" = "[]" ] || { show "$name"; fail "$name: the select step failed"; }
}
selected_of() { sort "$(get "$1" outputs.tests-file)"; }

# Pull request 1: two commits on lib/b.sh.
g -C "$dev" checkout -q -b feature main
echo 'b() { echo B; }  # faster' > "$dev/lib/b.sh"
g -C "$dev" commit -q -a -m "feature: b is faster"
echo 'b() { echo B; }  # faster still' > "$dev/lib/b.sh"
g -C "$dev" commit -q -a -m "feature: b is faster still"
g -C "$dev" checkout -q main
make_pr 1 feature
pr1_merge=$pr_merge pr1_head=$pr_head pr1_commits=$pr_commits

# a. the base commit's export.
pr_job pr 1
[ "$(get pr outputs.mode)" = subset ] || { show pr; fail "pr: mode $(get pr outputs.mode)"; }
[ "$(get pr steps.1.outputs.cache-hit)" = true ] || { show pr; fail "pr: no exact cache hit"; }
selected=$(selected_of pr)
[ "$selected" = "$(printf 'tests/test_b1.sh\ntests/test_b2.sh\ntests/test_b3.sh')" ] || fail "pr: selected $selected"
text="$work/pr.temp/ste-ci/change-text.txt"
for message in "feature: b is faster" "feature: b is faster still" "Merge $pr1_head" "Faster b" "It is faster." enhancement; do
  grep -qF "$message" "$text" || fail "pr: the change text lacks '$message': $(cat "$text")"
done
grep -q "ste select: subset" "$work/pr.md" || fail "pr: summary $(cat "$work/pr.md")"
# A full clone, with the same export and all the history (no change text:
# ste reads the commits itself), selects the same for the merge commit.
git clone -q "file://$origin" "$work/full"
git -C "$work/full" fetch -q origin refs/pull/1/merge
git -C "$work/full" checkout -q FETCH_HEAD
(cd "$work/full" && "$STE" baseline import --store "sqlite:$work/full.db" "$work/pr/ws/.ste-baseline/baseline.steb" > /dev/null &&
  "$STE" select --store "sqlite:$work/full.db" --base-commit "$c2" 2> "$work/full.err" | sort > "$work/full.txt") \
  || { cat "$work/full.err"; fail "the full clone's select"; }
[ "$(cat "$work/full.txt")" = "$selected" ] || fail "a full clone selects $(cat "$work/full.txt"), the PR job $selected"
# The matrix: each shard a fresh depth-1 checkout running its tests, passed
# as NUL-separated data (as pr.yml does).
get pr outputs.matrix > "$work/matrix.json"
: > "$work/ran"
for k in $(/usr/bin/python3 -c 'import json,sys; print(" ".join(str(i) for i in range(len(json.load(open(sys.argv[1]))["include"]))))' "$work/matrix.json"); do
  dir="$work/shard$k"
  checkout "$dir" "$pr1_merge" refs/remotes/pull/1/merge
  /usr/bin/python3 -c 'import json,sys; sys.stdout.write("".join(t + "\0" for t in json.load(open(sys.argv[1]))["include"][int(sys.argv[2])]["tests"]))' \
    "$work/matrix.json" "$k" > "$dir.nul"
  (cd "$dir" && xargs -0 -r -a "$dir.nul" sh -c 'for t; do sh "$t" || exit 1; echo "$t"; done' sh) >> "$work/ran" \
    || fail "shard $k: a test failed"
done
[ "$(sort "$work/ran")" = "$selected" ] || fail "the shards ran $(sort "$work/ran" | tr '\n' ' '), not the selection"
[ -z "$(sort "$work/ran" | uniq -d)" ] || fail "a test ran in two shards"
ok "a: depth-1 merge commit: subset {b1,b2,b3} = the full clone's; change text fetched; shards run each once"

# GitLab's way on the same merge commit: GIT_DEPTH 20, ste-ci.sh shard
# with the change's commits since the merge base.
git clone -q --depth 20 "file://$origin" "$work/gitlab"
git -C "$work/gitlab" fetch -q --depth 20 origin refs/pull/1/merge
git -C "$work/gitlab" checkout -q FETCH_HEAD
mkdir -p "$work/gitlab/.ste-baseline"
cp "$work/pr/ws/.ste-baseline/baseline.steb" "$work/gitlab/.ste-baseline/"
: > "$work/gitlab.ran"
for k in 1 2 3; do
  args=$(cd "$work/gitlab" && TMPDIR="$work/gitlab.tmp$k" && mkdir -p "$TMPDIR" && export TMPDIR &&
    STE_SHARD=$k/3 STE_BASE_COMMIT=$c2 STE_CHANGE_BASE=$c2 STE_CHANGE_TITLE="Faster b" "$ci" shard 2> "$work/gitlab$k.log") \
    || { cat "$work/gitlab$k.log"; fail "gitlab shard $k"; }
  grep -qF "feature: b is faster" "$work/gitlab.tmp$k/ste-ci/change-text.txt" || fail "gitlab: no change text"
  eval "set -- $args"
  for t in "$@"; do echo "$t" >> "$work/gitlab.ran"; done
done
[ "$(sort "$work/gitlab.ran")" = "$selected" ] || fail "gitlab's shards: $(sort "$work/gitlab.ran" | tr '\n' ' ')"
ok "a: GitLab's way (depth 20, STE_CHANGE_BASE, 3 shard jobs) runs the same tests"

# b. only the older export (main's record of the base commit is missing).
older="$work/cache-older"
cp -r "$cache" "$older"
grep -l "ste-baseline-main-$c2" "$older"/entries/*/meta.json | xargs -n1 dirname | xargs rm -rf
CTX_CACHE=$older pr_job older 1
[ "$(get older steps.1.outputs.cache-matched-key)" = "ste-baseline-main-$c1" ] || { show older; fail "older: restored $(get older steps.1.outputs)"; }
[ "$(get older outputs.mode)" = subset ] || { show older; fail "older: mode $(get older outputs.mode): $(get older outputs.reason)"; }
# lib/a.sh changed on main since, lib/b.sh in the change; lib/c.sh in neither
[ "$(selected_of older | tr '\n' ' ')" = "tests/test_a1.sh tests/test_a2.sh tests/test_a3.sh tests/test_b1.sh tests/test_b2.sh tests/test_b3.sh " ] \
  || fail "older: selected $(selected_of older | tr '\n' ' ')"
reason=$(get older outputs.reason)
case "$reason" in *"has no baseline"*"${c1:0:12}"*) ;; *) fail "older: the reason does not name the older baseline: $reason" ;; esac
ok "b: an older export only: subset ($(selected_of older | tr '\n' ' ')), reason: $reason"

# c. force tags: in a commit of the change (not the merge commit's).
g -C "$dev" checkout -q -b feature2 main
echo 'b() { echo B; }  # tagged' > "$dev/lib/b.sh"
g -C "$dev" commit -q -a -m "feature2: b [test all]"
echo 'b() { echo B; }  # tagged again' > "$dev/lib/b.sh"
g -C "$dev" commit -q -a -m "feature2: b again"
g -C "$dev" checkout -q main
make_pr 2 feature2
git -C "$dev" log -1 --format=%B "$pr_merge" | grep -qF '[test all]' && fail "the merge commit's message has the tag"
pr_job tagged 2
[ "$(get tagged outputs.mode)" = all ] || { show tagged; fail "tag in a commit: mode $(get tagged outputs.mode)"; }
case "$(get tagged outputs.reason)" in *"force tag"*) ;; *) fail "tag in a commit: reason $(get tagged outputs.reason)" ;; esac
# ... in the title, the body, a label of pull request 1.
pr_merge=$pr1_merge pr_head=$pr1_head pr_commits=$pr1_commits
PR_TITLE="Faster b [test all]" pr_job title 1
PR_BODY=$'Faster.\n\n[no filter] please' pr_job body 1
PR_LABELS=$'enhancement\n[test all]' pr_job label 1
for name in title body label; do
  [ "$(get $name outputs.mode)" = all ] || { show $name; fail "tag in the $name: mode $(get $name outputs.mode)"; }
  case "$(get $name outputs.reason)" in *"force tag"*) ;; *) fail "tag in the $name: reason $(get $name outputs.reason)" ;; esac
done
# ... and a head the origin does not have (a force-push since the
# event): the fetch fails, no change text, ste cannot read the change's
# commits in the depth-1 clone: all, saying why.
PR_HEAD_GONE=$(printf 'f%.0s' $(seq 1 40)) pr_job gone 1
[ "$(get gone outputs.mode)" = all ] || { show gone; fail "unfetchable head: mode $(get gone outputs.mode)"; }
grep -q "could not fetch the pull request's commits" "$work/gone.log" || { show gone; fail "unfetchable head: not said"; }
ok "c: a force tag in a PR commit, the title, the body or a label: all; a head that cannot be fetched: all ($(get gone outputs.reason))"

# d. forged names: files under run_all and tests named to break outputs.
g -C "$dev" checkout -q -b feature3 main
evil_config=($'config/a\nmode=none\nz.cfg' 'config/p|b`c<<EOF%0A%25.cfg' $'config/\xff\xfe bytes.cfg' $'config/x\n::set-output name=mode::none')
for f in "${evil_config[@]}"; do echo 'y = 2' > "$dev/$f"; done
# (0 first: they sort before the long names, into the part of the summary
# that is shown)
evil_tests=($'tests/test_0n\nmode=none\n.sh' $'tests/test_0x\n::set-output name=forged::x\n.sh' 'tests/test_0##[set-output name=forged;]x.sh'
  'tests/test_0p|b`c<d>&<<EOF%25.sh')
not_utf8_test=$'tests/test_0\xff\xfe.sh'
echo 'true' > "$dev/$not_utf8_test"
for f in "${evil_tests[@]}"; do echo 'true' > "$dev/$f"; done
long=$(printf 'l%.0s' $(seq 1 200))
for i in $(seq 1 5000); do echo 'true' > "$dev/tests/test_${long}_$i.sh"; done
g -C "$dev" add -A
g -C "$dev" commit -q -m "feature3: configuration"
g -C "$dev" checkout -q main
make_pr 3 feature3
pr_job forged 3
[ "$(get forged outputs.mode)" = all ] || { show forged; fail "forged names: mode $(get forged outputs.mode)"; }
[ "$(get forged steps.2.outputs | /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin))))')" = \
  "matrix mode reason tests_file" ] || fail "forged names: the select step's outputs are $(get forged steps.2.outputs)"
/usr/bin/python3 - "$work/forged.md" "$work/forged.json" "${evil_tests[@]}" <<'PY' || fail "forged names: the summary or the matrix (above)"
import json, os, re, sys
data = open(sys.argv[1], "rb").read()
assert 0 < len(data) < 1024 * 1024, "summary of %d bytes" % len(data)
text = data.decode("utf-8")
rows = [l for l in text.split("\n") if l.startswith("|")]
def cells(line):
    return len(re.findall(r"(?<!\\)\|", line))
assert rows and all(cells(r) == cells(rows[0]) for r in rows), [r for r in rows if cells(r) != cells(rows[0])][:3]
assert "more tests not shown" in text, text[-300:]
assert not any(l.startswith(("mode=", "::", "##[")) for l in text.split("\n")), "a forged line in the summary"
result = json.load(open(sys.argv[2]))
matrix = json.loads(result["outputs"]["matrix"])
listed = {t for e in matrix["include"] for t in e["tests"]}
missing = [t for t in sys.argv[3:] if t not in listed]
assert not missing, "the matrix lacks %r" % missing
# A name that is not UTF-8 cannot be a JSON string: it must not vanish
# (its shard then fails to find it, rather than skip it).
assert len(listed) == 9 + len(sys.argv[3:]) + 1 + 5000, len(listed)
# Each odd name is one row of its own (the newlines spelled \n).
odd_rows = [r for r in rows if "test\\_0" in r]
assert len(odd_rows) == len(sys.argv[3:]) + 1, odd_rows
assert any("0n\\\\nmode=none\\\\n" in r for r in odd_rows), odd_rows
print("summary %d bytes, %d table rows, matrix %d tests" % (len(data), len(rows), len(listed)))
PY
ok "d: forged names: mode all as the runner reads it, no output added, table rows whole, summary < 1 MiB"

# e. a damaged export, no export, and a baseline file the change commits.
pr_merge=$pr1_merge pr_head=$pr1_head pr_commits=$pr1_commits
damaged="$work/cache-damaged"
cp "$work/pr/ws/.ste-baseline/baseline.steb" "$work/damaged.steb"
size=$(stat -c %s "$work/damaged.steb")
printf '\xff' | dd of="$work/damaged.steb" bs=1 seek=$((size / 2)) conv=notrunc status=none
mkdir -p "$work/damaged-ws/.ste-baseline" && cp "$work/damaged.steb" "$work/damaged-ws/.ste-baseline/baseline.steb"
/usr/bin/python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import actions_runner as a
a.CacheFolder(sys.argv[2]).save(sys.argv[3], [".ste-baseline/baseline.steb"], [sys.argv[4]], "refs/heads/main")' \
  "$here" "$damaged" "ste-baseline-main-$c2" "$work/damaged-ws/.ste-baseline/baseline.steb"
CTX_CACHE=$damaged pr_job damaged 1
[ "$(get damaged outputs.mode)" = all ] || { show damaged; fail "damaged export: mode $(get damaged outputs.mode)"; }
grep -q "refused" "$work/damaged.log" || { show damaged; fail "damaged export: not refused"; }
mkdir -p "$work/cache-empty"
CTX_CACHE=$work/cache-empty pr_job empty 1
[ "$(get empty outputs.mode)" = all ] || { show empty; fail "no export: mode $(get empty outputs.mode)"; }
case "$(get empty outputs.reason)" in *"no usable baseline"*) ;; *) fail "no export: reason $(get empty outputs.reason)" ;; esac
# The change commits main's real export itself (force-added past
# .gitignore): with no export in the cache it must not be imported.
g -C "$dev" checkout -q -b feature4 feature
mkdir -p "$dev/.ste-baseline"
cp "$work/pr/ws/.ste-baseline/baseline.steb" "$dev/.ste-baseline/baseline.steb"
g -C "$dev" add -f .ste-baseline/baseline.steb
g -C "$dev" commit -q -m "feature4: bring my own baseline"
g -C "$dev" checkout -q main
make_pr 4 feature4
CTX_CACHE=$work/cache-empty pr_job own 4
[ "$(get own outputs.mode)" = all ] || { show own; fail "a committed baseline file: mode $(get own outputs.mode) (it was imported)"; }
ok "e: damaged export: all; no export: all; a baseline file the change commits: not imported, all"

# f. a pytest project (kind = "pytest"): recorded by the action at depth
# 1, a pull request changing one module selects its test file, and the
# shard runs it the way pr.yml does (NUL-separated, xargs -0 -r, pytest).
dev="$work/pydev" origin="$work/py-origin.git" cache="$work/py-cache"
mkdir -p "$dev/pkg" "$dev/tests" "$cache"
echo 'def one(): return 1' > "$dev/pkg/one.py"
echo 'def two(): return 2' > "$dev/pkg/two.py"
touch "$dev/pkg/__init__.py"
printf 'from pkg.one import one\n\ndef test_one():\n    assert one() == 1\n' > "$dev/tests/test_one.py"
printf 'from pkg.two import two\n\ndef test_two():\n    assert two() == 2\n' > "$dev/tests/test_two.py"
printf '[tests]\ninclude = ["tests/test_*.py"]\n[runner]\nkind = "pytest"\ncommand = "/usr/bin/python3 -m pytest -q -p no:cacheprovider -p ste_pytest {tests}"\n[inventory]\nignore = ["**/__pycache__/**"]\n' \
  > "$dev/ste.toml"
printf '.ste/\n.ste-baseline/\n__pycache__/\n' > "$dev/.gitignore"
g init -q "$dev"
g -C "$dev" add -A
g -C "$dev" commit -q -m "main: a pytest project"
g init -q --bare "$origin"
g -C "$dev" remote add origin "file://$origin"
g -C "$dev" push -q origin main
c2=$(git -C "$dev" rev-parse HEAD)
push_record pypush "$c2" main 1 || { show pypush; fail "pytest: the record action failed"; }
grep -q "2 tests, 2 passed" "$work/pypush.log" || { show pypush; fail "pytest: not recorded"; }
grep -q "Cache saved with key: ste-baseline/fingerprints/main/$c2" "$work/pypush.log" \
  || { show pypush; fail "pytest: the sources' fingerprints were not kept"; }
# The next push's record restores them: only the source that changed is
# fingerprinted again.
echo '# one, as it was' >> "$dev/pkg/one.py"
g -C "$dev" commit -q -a -m "main: a comment"
g -C "$dev" push -q origin main
c2=$(git -C "$dev" rev-parse HEAD)
push_record pypush2 "$c2" main 2 || { show pypush2; fail "pytest: the second record failed"; }
grep -q "Cache restored from key: ste-baseline/fingerprints/main/" "$work/pypush2.log" \
  || { show pypush2; fail "pytest: the last record's fingerprints were not restored"; }
grep -Eq "ste record: definitions of [0-9]+ sources: 1 fingerprinted, [1-9][0-9]* kept" "$work/pypush2.log" \
  || { show pypush2; fail "pytest: the second record fingerprinted more than pkg/one.py"; }
g -C "$dev" checkout -q -b pyfeature main
echo 'def two(): return 1 + 1' > "$dev/pkg/two.py"
g -C "$dev" commit -q -a -m "pyfeature: two, computed"
g -C "$dev" checkout -q main
make_pr 1 pyfeature
pr_job pypr 1
if [ "$(get pypr outputs.mode)" != subset ] || [ "$(selected_of pypr)" != tests/test_two.py ]; then
  show pypr; fail "pytest: mode $(get pypr outputs.mode), selected $(selected_of pypr)"
fi
checkout "$work/pyshard" "$pr_merge" refs/remotes/pull/1/merge
get pypr outputs.matrix | /usr/bin/python3 -c 'import json,sys; sys.stdout.write("".join(t + "\0" for e in json.load(sys.stdin)["include"] for t in e["tests"]))' \
  > "$work/pyshard.nul"
(cd "$work/pyshard" && xargs -0 -r -a "$work/pyshard.nul" /usr/bin/python3 -m pytest -q -p no:cacheprovider --) > "$work/pyshard.log" 2>&1 \
  || { cat "$work/pyshard.log"; fail "pytest: the shard failed"; }
grep -q "1 passed" "$work/pyshard.log" || { cat "$work/pyshard.log"; fail "pytest: the shard did not run the one test"; }
ok "f: pytest: recorded at depth 1, the sources' fingerprints kept for the next push's record (1 fingerprinted again); a change to pkg/two.py selects tests/test_two.py; the shard runs it as pr.yml does"

echo "ci_day: all cases passed"
