# C test: compiles csrc/ean13.c with cc into build/ (ignored by ste.toml)
# and checks it. Only this test reads the C source.
set -e
mkdir -p build/tmp
# The compiler's scratch files go to build/tmp too: they stay out of /tmp,
# so what ste records for this test is the source, the compiler, its
# headers and libraries, not random temporary names.
TMPDIR="$PWD/build/tmp" cc -std=c99 -Wall -O0 -o build/ean13 csrc/ean13.c
check() {  # check DIGITS WANT_STDOUT WANT_STATUS
  status=0
  out=$(build/ean13 "$1") || status=$?
  if [ "$out" != "$2" ] || [ "$status" != "$3" ]; then
    echo "FAIL ean13 $1: printed '$out' exit $status, want '$2' exit $3"
    exit 1
  fi
}
check 400638133393 1 0
check 590123412345 7 0
check 978030640615 7 0
check 4006381333931 "" 0
check 4006381333932 "" 1
check 12345 "" 2
check 40063813339x "" 2
echo "ok: ean13"
