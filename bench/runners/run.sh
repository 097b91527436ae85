#!/usr/bin/env bash
# bench/runners/run.sh BUILD_DIR — the runner integrations (issue 6): a
# synthetic pytest suite and a synthetic minitest suite, each run plainly,
# recorded with the generic one-process-per-file runner, and recorded with
# the forking batch runner. See python.sh and ruby.sh for the knobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/python.sh" "$1"
"$here/ruby.sh" "$1"
