#!/usr/bin/env bash
# ste in CI, the steps of the GitHub actions in deploy/github/ (and of any
# other CI: every input is an environment variable, every output a file).
#
#   ste-ci.sh select   restore the baseline file if there is one, select,
#                      write mode / reason / tests_file / matrix outputs
#                      and a job summary
#   ste-ci.sh record   record a baseline of this checkout, export it to the
#                      baseline file (for the CI cache to save), write
#                      outputs and a summary; exit as `ste record` did
#   ste-ci.sh shard    print shard K of N of the selection as runner
#                      arguments (for a matrix job)
#
# Environment (all optional):
#   STE                ste binary (default: ste on PATH)
#   STE_BASELINE_FILE  the exported baseline the CI cache restores and saves
#                      (default .ste-baseline/baseline.steb). select and
#                      shard ignore it when the change itself tracks it or
#                      it is a symbolic link: only the cache may put it there
#   STE_SHARDS         shards for the matrix output (default 1)
#   STE_BASE_COMMIT    the commit the change is based on (a pull request's
#                      base SHA): the baseline recorded there is compared
#                      with (ste falls back to the nearest recorded
#                      ancestor it can see, else the newest, and says so)
#   STE_ARGS           more flags for `ste select` (select, shard) or `ste
#                      record` (record), split on spaces
#   STE_SHARD          K/N for `shard`
#   STE_STORE          the store select and shard import into and read
#                      (default sqlite:$RUNNER_TEMP/ste-ci/ste.db, else under
#                      $TMPDIR): outside the checkout, never the one the
#                      change's ste.toml or tree names, which a pull request
#                      controls (docs/SECURITY.md)
#   STE_TESTS_FILE     where select writes the test list (default
#                      ste-ci/selected-tests.txt under $RUNNER_TEMP/$TMPDIR)
#   record only:
#   STE_RUN_NUMBER     the CI's run number (GitHub github.run_number, GitLab
#                      CI_PIPELINE_IID): the MRI of a record in a shallow
#                      clone (below)
#   STE_MRI            the MRI, given (ste reads it too)
#   STE_JUNIT          write JUnit XML of the run there (ste record --junit)
#   select and shard, the change as the CI knows it (force tags, below):
#   STE_CHANGE_HEAD    the pull request's head commit (GitHub)
#   STE_CHANGE_COMMITS how many commits the pull request has (GitHub)
#   STE_CHANGE_BASE    or: the change's commits are those since this merge
#                      base (GitLab's CI_MERGE_REQUEST_DIFF_BASE_SHA)
#   STE_CHANGE_TITLE, STE_CHANGE_BODY, STE_CHANGE_LABELS (one a line)
#   STE_CHANGE_REMOTE  the remote to fetch the head's commits from (origin)
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY   where outputs and the summary go
#                      (GitHub sets them; elsewhere point them at files)
#
# The MRI of a record in a shallow clone. ste orders baselines by their
# MRI, by default `git rev-list --count HEAD`, which a shallow clone
# (actions/checkout's default depth 1, GitLab's GIT_DEPTH) cannot count:
# ste record refuses it there. So in a shallow clone, unless STE_MRI or
# --mri / --base-commit in STE_ARGS gives it, ste-ci.sh passes
# --mri "$STE_RUN_NUMBER": run numbers grow with every later run of the
# workflow, as MRIs must. No run number either: an error (exit 2). A
# workflow that switches between full and shallow clones mixes two scales
# (commit counts, often thousands; run numbers, from 1): a select that
# names its base commit still finds that commit's baseline (the lookup is
# by commit), but the fallbacks that take "the newest" baseline (no base
# commit given, or its baseline missing) may prefer an older one of the
# other scale. That costs tests (an older baseline sees more changes),
# never a wrong selection: a baseline is always compared with the tree it
# recorded.
#
# Force tags on a pull request. A force tag ([test all], [no filter])
# counts anywhere in the change's commit messages, the merge commit's
# message, or the pull request's title, body or labels. A CI's checkout
# of a pull request holds none of its commits but the one checked out
# (GitHub checks out the merge commit at depth 1); given the change's facts
# (STE_CHANGE_*), select fetches the change's commits (GitHub: `git fetch
# --depth=<commits> origin <head>`, enough to hold them all; GitLab: the
# commits since the merge base, when the clone holds all of them), writes
# their messages with HEAD's, the title, body and labels to one file and
# passes `ste select --change-text FILE`: ste looks for force tags there
# instead of in what git can reach. When the commits cannot all be read,
# no --change-text is passed and ste, unable to read them itself, selects
# all (and says a force tag could be missed): never fewer tests.
#
# Outputs a change cannot forge. Every value written to $GITHUB_OUTPUT
# here is in GitHub's multi-line form with a fresh random delimiter, so no
# value (a reason naming a file of the change) can end its entry and start
# another; ste writes its own outputs the same way. GitHub also reads
# `::set-output` and `##[set-output` lines a step prints (stdout and
# stderr), and ste prints the change's file names: each command here
# first stops workflow commands for the step (`::stop-commands::` with a
# random token that is never printed again). Markdown written here escapes
# what could break a table and stays under GitHub's 1 MiB summary limit.
#
# Fail safe: a missing or damaged baseline file is not an error: ste select
# then has no baseline, or keeps the one it had, and selects all with the
# reason (printed, and in the outputs). Only usage errors stop the job.
set -euo pipefail

ste=${STE:-ste}
baseline_file=${STE_BASELINE_FILE:-.ste-baseline/baseline.steb}
shards=${STE_SHARDS:-1}
store=${STE_STORE:-sqlite:${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ste-ci/ste.db}
# Files of this job that the checkout (the change) must not choose.
work_dir=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ste-ci
mkdir -p "$work_dir"

say() { echo "ste-ci: $*" >&2; }

random_hex() {  # 32 hex digits from the kernel's random source
  local hex
  hex=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  if [ "${#hex}" != 32 ]; then say "cannot read /dev/urandom"; exit 2; fi
  printf '%s' "$hex"
}

# Stops GitHub reading workflow commands from what this step prints from
# here on (the token is not printed again, so nothing can resume them).
# On both streams: GitHub reads them apart, either may come first.
stop_workflow_commands() {
  [ "${GITHUB_ACTIONS:-}" = true ] || return 0
  local token
  token=$(random_hex)
  if [ "${1:-}" != stderr-only ]; then echo "::stop-commands::$token"; fi
  echo "::stop-commands::$token" >&2
}

output() {  # NAME VALUE: one entry of $GITHUB_OUTPUT (if set), multi-line form
  [ -n "${GITHUB_OUTPUT:-}" ] || return 0
  local delimiter
  delimiter="ghadelimiter_$(random_hex)"
  # The value cannot know the delimiter; should it hold it all the same,
  # draw another.
  while [[ $2 == *"$delimiter"* ]]; do delimiter="ghadelimiter_$(random_hex)"; done
  printf '%s<<%s\n%s\n%s\n' "$1" "$delimiter" "$2" "$delimiter" >> "$GITHUB_OUTPUT"
}

# One line of text as Markdown prose, safe in a table cell or a list item:
# a line that is not UTF-8 has its bytes >= 0x80 spelled \xNN, control
# characters become '?', and what could start HTML, end a cell, open code
# or a link is an entity or escaped.
markdown_text() {
  local text=$1
  if ! printf '%s' "$text" | iconv -f UTF-8 -t UTF-8 > /dev/null 2>&1; then
    text=$(printf '%s' "$text" | LC_ALL=C awk '
      BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
      { out = ""
        for (i = 1; i <= length($0); i++) {
          c = substr($0, i, 1)
          out = out (ord[c] >= 128 ? sprintf("\\x%02x", ord[c]) : c)
        }
        printf "%s", out }')
  fi
  printf '%s' "$text" | LC_ALL=C tr '\000-\037\177' '?' | LC_ALL=C sed -e 's/&/\&amp;/g' \
    -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/|/\\|/g' -e 's/`/\&#96;/g' -e 's/\[/\\[/g' \
    -e 's/\]/\\]/g' -e 's/\*/\\*/g' -e 's/_/\\_/g'
}

# Markdown for $GITHUB_STEP_SUMMARY (if set), kept under GitHub's 1 MiB
# limit per step: lines past the cap are counted, not written.
summary_bytes=0
summary_left_out=0
summary_cap=$((1024 * 1024 - 64 * 1024))
summary() {  # TEXT: one line
  [ -n "${GITHUB_STEP_SUMMARY:-}" ] || return 0
  local LC_ALL=C   # ${#1} in bytes
  local size=$((${#1} + 1))
  if [ $((summary_bytes + size)) -gt "$summary_cap" ]; then
    summary_left_out=$((summary_left_out + 1))
    return 0
  fi
  summary_bytes=$((summary_bytes + size))
  printf '%s\n' "$1" >> "$GITHUB_STEP_SUMMARY"
}
summary_end() {  # WHAT: the count of lines left out, if any
  [ -n "${GITHUB_STEP_SUMMARY:-}" ] || return 0
  if [ "$summary_left_out" -gt 0 ]; then
    printf '\n… and %d more %s not shown (the summary is capped at %d KiB)\n' \
      "$summary_left_out" "$1" $((summary_cap / 1024)) >> "$GITHUB_STEP_SUMMARY"
  fi
}

# The baseline file, if only the CI cache can have put it there: a change
# that tracks it (or a link on its way) would choose the baseline its own
# selection is compared with.
baseline_file_is_trusted() {
  # A link anywhere on the way inside the checkout (the change's tree can
  # hold links; outside it, only the CI's own paths).
  local path=$baseline_file
  case "$path" in /*) case "$path" in "$PWD"/*) path=${path#"$PWD"/} ;; *) path=. ;; esac ;; esac
  while [ "$path" != . ] && [ "$path" != / ]; do
    if [ -L "$path" ]; then
      say "$path is a symbolic link: the baseline file $baseline_file is ignored, every test runs"
      return 1
    fi
    path=$(dirname "$path")
  done
  if [ -n "$(git ls-files -- "$baseline_file" 2> /dev/null | head -1)" ]; then
    say "$baseline_file is part of the change (tracked by git): ignored, every test runs"
    return 1
  fi
  return 0
}

import_baseline() {
  case "$store" in sqlite:*) mkdir -p "$(dirname "${store#sqlite:}")" ;; esac
  if [ ! -e "$baseline_file" ]; then
    say "no baseline file at $baseline_file (the cache had none): every test runs"
    return 0
  fi
  baseline_file_is_trusted || return 0
  if ! "$ste" baseline import --store "$store" "$baseline_file" >&2; then
    say "the baseline file $baseline_file was refused (above): it is ignored"
  fi
}

# --change-text: the change's text as the CI knows it (the top of this
# file). Sets change_text_flags; leaves them empty when the change's
# commits cannot all be read (ste then selects all).
change_text_flags=()
build_change_text() {
  local file="$work_dir/change-text.txt" remote=${STE_CHANGE_REMOTE:-origin}
  if [ -n "${STE_CHANGE_HEAD:-}" ]; then
    local count=${STE_CHANGE_COMMITS:-}
    case "$count" in
      '' | *[!0-9]* | 0)
        say "STE_CHANGE_COMMITS is '$count', not the pull request's commit count: no --change-text" \
          "(ste reads what git can reach; if it cannot, it selects all)"
        return 0 ;;
    esac
    # Every commit of the pull request is within <count> of its head (a
    # path from the head to one of them runs through its commits only),
    # so this depth holds them all; commits of the base it also brings
    # can only add force tags.
    if ! git fetch -q --no-tags --depth="$count" "$remote" "$STE_CHANGE_HEAD" >&2; then
      say "could not fetch the pull request's commits ($STE_CHANGE_HEAD, depth $count):" \
        "no --change-text; ste reads the commits git can reach, and selects all if it cannot"
      return 0
    fi
    local got
    got=$(git rev-list --count "$STE_CHANGE_HEAD" 2> /dev/null || echo 0)
    if [ "$got" -lt "$count" ]; then
      say "only $got commits of the pull request's $count could be read: no --change-text;" \
        "ste reads the commits git can reach, and selects all if it cannot"
      return 0
    fi
    git log --format=%B "$STE_CHANGE_HEAD" > "$file"
  elif [ -n "${STE_CHANGE_BASE:-}" ]; then
    if ! git cat-file -e "$STE_CHANGE_BASE^{commit}" 2> /dev/null; then
      say "the merge base $STE_CHANGE_BASE is not in this clone (deepen it): no --change-text;" \
        "ste selects all unless it can read the commits itself"
      return 0
    fi
    # Every commit since the merge base must be here with its parents: a
    # commit at the clone's shallow edge hides those before it.
    local shallow_file
    shallow_file=$(git rev-parse --git-path shallow)
    if [ -s "$shallow_file" ] &&
       git rev-list "$STE_CHANGE_BASE..HEAD" | grep -qxFf "$shallow_file"; then
      say "the commits since $STE_CHANGE_BASE reach past this shallow clone (deepen it):" \
        "no --change-text; ste selects all unless it can read them itself"
      return 0
    fi
    if git rev-list --parents "$STE_CHANGE_BASE..HEAD" | tr ' ' '\n' | sort -u |
       git cat-file --batch-check | grep -q ' missing$'; then
      say "a parent of a commit since $STE_CHANGE_BASE is missing: no --change-text"
      return 0
    fi
    git log --format=%B "$STE_CHANGE_BASE..HEAD" > "$file"
  else
    return 0   # no facts given: ste reads the commits git can reach
  fi
  {
    git log -1 --format=%B HEAD   # the merge commit's own message
    printf '%s\n' "${STE_CHANGE_TITLE:-}" "${STE_CHANGE_BODY:-}" "${STE_CHANGE_LABELS:-}"
  } >> "$file"
  change_text_flags=(--change-text "$file")
}

base_flags=()
if [ -n "${STE_BASE_COMMIT:-}" ]; then base_flags=(--base-commit "$STE_BASE_COMMIT"); fi
# shellcheck disable=SC2206  # split on spaces, as documented
extra=(${STE_ARGS:-})

has_flag() {  # FLAG...: is one of them in STE_ARGS (as --flag or --flag=...)?
  local arg flag
  for arg in "${extra[@]}"; do
    for flag in "$@"; do
      case "$arg" in "$flag" | "$flag"=*) return 0 ;; esac
    done
  done
  return 1
}

select_tests() {
  stop_workflow_commands
  import_baseline
  build_change_text
  local tests_file=${STE_TESTS_FILE:-$work_dir/selected-tests.txt}
  # --format github writes mode, reason, tests_file, matrix and the summary
  # itself; stdout is the test list.
  local status=0
  "$ste" select --store "$store" --format github --tests-file "$tests_file" --shards "$shards" \
    "${base_flags[@]}" "${change_text_flags[@]}" "${extra[@]}" > /dev/null || status=$?
  if [ "$status" != 0 ]; then
    # No test list (exit 3: the tree could not be read) or bad usage:
    # nothing may pass as "no test needed".
    output mode all
    output reason "ste select failed (exit $status): run every test"
    summary "### ste select failed (exit $status): every test runs"
    say "ste select failed (exit $status): run every test"
    exit "$status"
  fi
  say "$(wc -l < "$tests_file") tests selected ($tests_file)"
}

shard_tests() {
  [ -n "${STE_SHARD:-}" ] || { say "shard: set STE_SHARD=K/N"; exit 2; }
  # stdout is the runner arguments the caller reads: stop commands on
  # stderr only (stdout is not shown to the CI).
  stop_workflow_commands stderr-only
  import_baseline
  build_change_text
  "$ste" select --store "$store" --shard "$STE_SHARD" --format runner \
    "${base_flags[@]}" "${change_text_flags[@]}" "${extra[@]}"
}

record_baseline() {
  stop_workflow_commands
  local mri_flags=() junit_flags=()
  if [ "$(git rev-parse --is-shallow-repository 2> /dev/null)" = true ] &&
     [ -z "${STE_MRI:-}" ] && ! has_flag --mri --base-commit; then
    if [ -z "${STE_RUN_NUMBER:-}" ]; then
      say "this clone is shallow, so ste cannot count commits for the baseline's MRI: set" \
        "STE_RUN_NUMBER (github.run_number, CI_PIPELINE_IID) or STE_MRI, or fetch the whole history"
      exit 2
    fi
    mri_flags=(--mri "$STE_RUN_NUMBER")
    say "shallow clone: the baseline's MRI is the run number $STE_RUN_NUMBER"
  fi
  if [ -n "${STE_JUNIT:-}" ]; then junit_flags=(--junit "$STE_JUNIT"); fi

  local out="$work_dir/record.out" status=0
  "$ste" record --progress plain "${mri_flags[@]}" "${junit_flags[@]}" "${extra[@]}" > "$out" || status=$?
  cat "$out" >&2

  # `ste record: baseline N (mri M, commit C): T tests, P passed, F failed,
  # E errors, O opaque`: there when a baseline was stored (exit 0; 1 a test
  # failed; 3 when only the JUnit file could not be written).
  local line re id mri commit tests passed failed errors opaque
  line=$(grep -m1 '^ste record: baseline ' "$out" || true)
  re='^ste record: baseline ([0-9]+) \(mri (-?[0-9]+)(, commit ([0-9a-f]+))?\): ([0-9]+) tests, ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) errors, ([0-9]+) opaque$'
  if [[ $line =~ $re ]]; then
    id=${BASH_REMATCH[1]} mri=${BASH_REMATCH[2]} commit=${BASH_REMATCH[4]}
    tests=${BASH_REMATCH[5]} passed=${BASH_REMATCH[6]} failed=${BASH_REMATCH[7]}
    errors=${BASH_REMATCH[8]} opaque=${BASH_REMATCH[9]}
  else
    if [ "$status" = 0 ]; then
      say "ste record stored no baseline here (a build started on a scheduler?): nothing to export"
    else
      say "ste record stored no baseline (exit $status): nothing to export"
      summary "### ste record: no baseline recorded (exit $status)"
    fi
    exit "$status"
  fi

  # The export reads the store record wrote to: the same ste.toml.
  local export_flags=() i
  for ((i = 0; i < ${#extra[@]}; i++)); do
    case "${extra[i]}" in
      --config) export_flags=(--config "${extra[i + 1]:-}") ;;
      --config=*) export_flags=("${extra[i]}") ;;
    esac
  done
  mkdir -p "$(dirname "$baseline_file")"
  if ! "$ste" baseline export "$id" "${export_flags[@]}" -o "$baseline_file" >&2; then
    say "could not export baseline $id to $baseline_file"
    exit 3
  fi
  say "exported baseline $id to $baseline_file"
  output baseline-file "$baseline_file"
  output baseline-id "$id"
  output tests "$tests"
  output passed "$passed"
  output failed "$failed"
  output errors "$errors"
  output exit-status "$status"

  if [ "$status" = 0 ]; then
    summary "### ste record: baseline $id stored, every test passed"
  else
    summary "### ste record: baseline $id stored, $((failed + errors)) tests failed"
  fi
  summary ""
  summary "| baseline | mri | commit | tests | passed | failed | errors | opaque |"
  summary "|---|---|---|---|---|---|---|---|"
  summary "| $id | $mri | ${commit:-none} | $tests | $passed | $failed | $errors | $opaque |"
  if [ $((failed + errors)) -gt 0 ]; then
    summary ""
    summary "They are selected by every change until they pass:"
    summary ""
    local failing
    while IFS= read -r failing; do
      summary "- $(markdown_text "${failing#  }")"
    done < <(grep -E '^  (failed|error) ' "$out" || true)
    summary_end "failing tests"
  fi
  exit "$status"
}

case "${1:-}" in
  select) select_tests ;;
  shard) shard_tests ;;
  record) record_baseline ;;
  *)
    echo "usage: ste-ci.sh select|shard|record (read the top of this file)" >&2
    exit 2
    ;;
esac
