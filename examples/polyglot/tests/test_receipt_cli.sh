# Shell test of a Python program: runs bin/receipt.py on a sample order and
# compares with the expected receipt. ste follows the python child, so this
# test depends on bin/receipt.py, the modules it imports, the default
# config and both fixture files.
out=$(/usr/bin/python3 bin/receipt.py fixtures/orders/sample.txt) || {
  echo "FAIL: receipt.py exited with $?"; exit 1; }
want=$(cat fixtures/orders/sample.expected)
if [ "$out" != "$want" ]; then
  echo "FAIL: receipt differs:"
  printf '%s\n' "$out"
  exit 1
fi
echo "ok: receipt"
