# bench/runners/report.sh — sourced by python.sh and ruby.sh: runs the
# timed rounds and prints the medians and ratios.
#
# Needs: `measure VARIANT` (prints "wall cpu"), the array `variants` (the
# first is "plain"), $runs, $files, and $kind (the forking variant's name:
# pytest or minitest).

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

run_and_report() {
  declare -A wall cpu
  local r v w c pw pc label
  for ((r = 1; r <= runs; r++)); do
    for v in "${variants[@]}"; do
      read -r w c < <(measure "$v")
      wall[$v]+="$w "
      cpu[$v]+="$c "
    done
  done
  echo "== medians of $runs runs (wall s, CPU s = user+sys of the process tree)"
  printf '   %-15s %8s %8s %10s %10s\n' variant wall cpu "wall/(i)" "cpu/(i)"
  pw=$(echo "${wall[plain]}" | median)
  pc=$(echo "${cpu[plain]}" | median)
  for v in "${variants[@]}"; do
    w=$(echo "${wall[$v]}" | median)
    c=$(echo "${cpu[$v]}" | median)
    printf '   %-15s %8.2f %8.2f %9.2fx %9.2fx\n' "$v" "$w" "$c" \
      "$(awk -v a="$w" -v b="$pw" 'BEGIN { print a / b }')" "$(awk -v a="$c" -v b="$pc" 'BEGIN { print a / b }')"
  done
  echo
  for v in generic "$kind" alone; do
    [[ " ${variants[*]} " == *" $v "* ]] || continue
    w=$(echo "${wall[$v]}" | median)
    case $v in
      generic) label="(ii)/(i)  generic record / plain" ;;
      alone) label="(iv)/(i)  runner alone   / plain" ;;
      *) label="(iii)/(i) $v record / plain" ;;
    esac
    awk -v w="$w" -v p="$pw" -v l="$label" -v t="$v" -v k="$kind" 'BEGIN {
      printf "%s: %.2fx wall", l, w / p
      if (t == k) printf " (target <= 1.05: %s)", (w / p <= 1.05) ? "met" : "missed"
      printf "\n"
    }'
  done
  # A variant V beside V_listing: the import hook's cost (python.sh).
  for v in "${variants[@]}"; do
    [[ " ${variants[*]} " == *" ${v}_listing "* ]] || continue
    awk -v w="$(echo "${wall[$v]}" | median)" -v wl="$(echo "${wall[${v}_listing]}" | median)" \
      -v c="$(echo "${cpu[$v]}" | median)" -v cl="$(echo "${cpu[${v}_listing]}" | median)" -v t="$v" 'BEGIN {
      printf "import hook, %-8s names / listing: %.2fx wall, %.2fx CPU\n", t, w / wl, c / cl
    }'
  done
  # The cost per test file does not depend on how heavy the files are; the
  # ratio does (lighter files: a larger share of fork, CoW and exit).
  for v in "$kind" alone; do
    [[ " ${variants[*]} " == *" $v "* ]] || continue
    w=$(echo "${wall[$v]}" | median)
    c=$(echo "${cpu[$v]}" | median)
    awk -v w="$w" -v c="$c" -v pw="$pw" -v pc="$pc" -v n="$files" -v t="$v" 'BEGIN {
      printf "per file, %-8s - plain: %+.1f ms wall, %+.1f ms CPU (plain: %.1f ms wall per file)\n",
        t, (w - pw) * 1000 / n, (c - pc) * 1000 / n, pw * 1000 / n
    }'
  done
}
