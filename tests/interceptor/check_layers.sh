#!/bin/sh
# Fails if a file of libste_preload.so includes a header of a layer above
# its own, or is in no layer. The layers are the "layer <name>: <files>"
# lines at the top of interceptor/src/preload.c, top to bottom; a file may
# include headers of its own layer and of the layers below. Public headers
# (ste/...) are contracts, in no layer. Then checks itself: a copy of the
# tree with an upward #include planted must be rejected.
#
# Usage: check_layers.sh <interceptor/src>
set -eu
src=${1:?usage: check_layers.sh <interceptor/src>}

check() {
  dir=$1
  table=$(sed -n 's/^ \*   layer [a-z_]*: *//p' "$dir/preload.c")
  if [ -z "$table" ]; then
    echo "$dir/preload.c: no layer lines"
    return 1
  fi
  failed=0
  for path in "$dir"/*.c "$dir"/*.h; do
    file=${path##*/}
    mine=$(echo "$table" | awk -v f="$file" '{for (i = 1; i <= NF; i++) if ($i == f) {print NR; exit}}')
    if [ -z "$mine" ]; then
      echo "$file: in no layer of preload.c"
      failed=1
      continue
    fi
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$path"); do
      case $inc in ste/*) continue ;; esac
      theirs=$(echo "$table" | awk -v f="$inc" '{for (i = 1; i <= NF; i++) if ($i == f) {print NR; exit}}')
      if [ -z "$theirs" ]; then
        echo "$file includes \"$inc\", which is in no layer"
        failed=1
      elif [ "$theirs" -lt "$mine" ]; then
        echo "$file (layer $mine) includes \"$inc\" (layer $theirs, above it)"
        failed=1
      fi
    done
  done
  return $failed
}

check "$src"

planted=$(mktemp -d)
trap 'rm -rf "$planted"' EXIT
cp "$src"/*.c "$src"/*.h "$planted"/
echo '#include "process.h"' >> "$planted/sys.h"
if check "$planted" > /dev/null; then
  echo "check_layers.sh: an upward #include (sys.h -> process.h) went unnoticed"
  exit 1
fi
echo "layers ok: $(sed -n 's/^ \*   layer \([a-z_]*\):.*/\1/p' "$src/preload.c" | tr '\n' ' ')"
