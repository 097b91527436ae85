# Shell test: bin/slugify.sh against every fixtures/slugs/*.txt (a shell
# glob: ste records the listing of fixtures/slugs). Lines: text|slug.
. bin/slugify.sh
n=0
for f in fixtures/slugs/*.txt; do
  while IFS='|' read -r text want; do
    got=$(slugify "$text")
    if [ "$got" != "$want" ]; then
      echo "FAIL $f: slugify '$text' = '$got', want '$want'"
      exit 1
    fi
    n=$((n + 1))
  done < "$f"
done
[ "$n" -gt 0 ] || { echo "FAIL: no fixtures/slugs/*.txt"; exit 1; }
echo "ok: $n slugs"
