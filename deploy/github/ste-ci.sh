#!/usr/bin/env bash
# ste in CI, the steps of the GitHub actions in deploy/github/ (and of any
# other CI: every input is an environment variable, every output a file).
#
#   ste-ci.sh select   restore the baseline file if there is one, select,
#                      write mode / reason / tests-file / matrix outputs
#                      and a job summary
#   ste-ci.sh record   record a baseline of this checkout and export it to
#                      the baseline file (for the CI cache to save)
#   ste-ci.sh shard    print shard K of N of the selection as runner
#                      arguments (for a matrix job)
#
# Environment (all optional):
#   STE                ste binary (default: ste on PATH)
#   STE_BASELINE_FILE  the exported baseline the CI cache restores and saves
#                      (default .ste-baseline/baseline.steb, outside .ste/)
#   STE_SHARDS         shards for the matrix output (default 1)
#   STE_BASE_COMMIT    the commit the change is based on (a pull request's
#                      base SHA): the baseline recorded there is compared with
#   STE_ARGS           more flags for `ste select` (select, shard) or `ste
#                      record` (record), split on spaces
#   STE_SHARD          K/N for `shard`
#   STE_STORE          the store select and shard import into and read
#                      (default sqlite:$RUNNER_TEMP/ste-ci/ste.db, else under
#                      $TMPDIR): outside the checkout, never the one the
#                      change's ste.toml or tree names, which a pull request
#                      controls (docs/SECURITY.md)
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY   where outputs and the summary go
#                      (GitHub sets them; elsewhere point them at files)
#
# Fail safe: a missing or damaged baseline file is not an error: ste select
# then has no baseline, or keeps the one it had, and selects all with the
# reason (printed, and in the outputs). Only usage errors stop the job.
set -euo pipefail

ste=${STE:-ste}
baseline_file=${STE_BASELINE_FILE:-.ste-baseline/baseline.steb}
shards=${STE_SHARDS:-1}

output() {  # NAME VALUE: one line of $GITHUB_OUTPUT (if set)
  if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"; fi
}

store=${STE_STORE:-sqlite:${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ste-ci/ste.db}

import_baseline() {
  case "$store" in sqlite:*) mkdir -p "$(dirname "${store#sqlite:}")" ;; esac
  if [ ! -e "$baseline_file" ]; then
    echo "ste-ci: no baseline file at $baseline_file (the cache had none): every test runs" >&2
    return 0
  fi
  if ! "$ste" baseline import --store "$store" "$baseline_file" >&2; then
    echo "ste-ci: the baseline file $baseline_file was refused (above): it is ignored" >&2
  fi
}

base_flags=()
if [ -n "${STE_BASE_COMMIT:-}" ]; then base_flags=(--base-commit "$STE_BASE_COMMIT"); fi
# shellcheck disable=SC2206  # split on spaces, as documented
extra=(${STE_ARGS:-})

case "${1:-}" in
  select)
    import_baseline
    mkdir -p .ste
    tests_file=${STE_TESTS_FILE:-.ste/selected-tests.txt}
    # --format github writes mode=, reason=, tests_file=, matrix= and the
    # summary itself; stdout is the test list.
    status=0
    "$ste" select --store "$store" --format github --tests-file "$tests_file" --shards "$shards" \
      "${base_flags[@]}" "${extra[@]}" > /dev/null || status=$?
    if [ "$status" != 0 ]; then
      # No test list (exit 3: the tree could not be read) or bad usage:
      # nothing may pass as "no test needed".
      output mode all
      output reason "ste select failed (exit $status): run every test"
      echo "ste-ci: ste select failed (exit $status): run every test" >&2
      exit "$status"
    fi
    echo "ste-ci: $(wc -l < "$tests_file") tests selected ($tests_file)" >&2
    ;;
  shard)
    [ -n "${STE_SHARD:-}" ] || { echo "ste-ci shard: set STE_SHARD=K/N" >&2; exit 2; }
    import_baseline
    "$ste" select --store "$store" --shard "$STE_SHARD" --format runner "${base_flags[@]}" "${extra[@]}"
    ;;
  record)
    "$ste" record --progress plain "${extra[@]}" >&2
    mkdir -p "$(dirname "$baseline_file")"
    "$ste" baseline export latest -o "$baseline_file" >&2
    output baseline-file "$baseline_file"
    echo "ste-ci: exported the baseline to $baseline_file" >&2
    ;;
  *)
    echo "usage: ste-ci.sh select|shard|record (read the top of this file)" >&2
    exit 2
    ;;
esac
