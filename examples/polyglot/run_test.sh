#!/bin/sh
# Runs one test file of this example. ste.toml's runner.command is
# "sh run_test.sh {test}": one command for every test, so it dispatches on
# the file's extension. It runs in the repository root.
set -e
test="$1"

# Python finds the product's modules in src/, and writes no __pycache__
# into the tree (the debian interpreter, not whatever python3 is on PATH).
export PYTHONPATH="$PWD/src" PYTHONDONTWRITEBYTECODE=1

# The EU pricing test reads another config file, chosen by the environment:
# ste sees only the file the test really opened.
case "$test" in
  *_eu.py) export POLY_CONFIG=config/eu.ini ;;
esac

case "$test" in
  *.py) exec /usr/bin/python3 "$test" ;;
  *.sh) exec sh "$test" ;;
  *) echo "run_test.sh: no runner for $test" >&2; exit 2 ;;
esac
