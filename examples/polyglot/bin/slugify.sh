# slugify TEXT: the URL slug of a product name. Lower case; every run of
# other bytes (accented letters too) becomes one '-'; no '-' at either end.
slugify() {
  printf '%s\n' "$1" |
    LC_ALL=C tr 'A-Z' 'a-z' |
    LC_ALL=C sed -e 's/[^a-z0-9][^a-z0-9]*/-/g' -e 's/^-//' -e 's/-$//'
}
