#!/usr/bin/env bash
# bench/inventory/run.sh BUILD_DIR — P6 and P7 (see README.md here).
#
#   P6: cold inventory (no stat cache), 2 threads, vs `hashdeep -r -c md5 -j2`
#       on the same tree. Target: ste >= 5x faster.
#   P7: warm re-inventory (previous inventory read from its file, every
#       file a stat-cache hit) vs `git status` on the same tree.
#       Target: ste / git <= 1.0x.
#
# The tree (FILES files, seeded) is generated once and cached under
# $STE_BENCH_DIR (default /tmp/ste-bench-inventory), with its git directory
# beside it (--git-dir outside the tree, so hashdeep and ste see exactly the
# same files). Both tools run with a warm page cache: one untimed run each
# first, then RUNS alternating timed runs; medians are compared.
#
# Environment: FILES (200000), SEED (1), RUNS (5), RUNS_WARM (15),
# THREADS (2), STE_BENCH_DIR.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
bench=$build/bench/inventory_bench
files=${FILES:-200000}
seed=${SEED:-1}
runs=${RUNS:-5}            # P6 pairs (each ~15 s)
runs_warm=${RUNS_WARM:-15} # P7 pairs (each ~1 s)
threads=${THREADS:-2}
work=${STE_BENCH_DIR:-/tmp/ste-bench-inventory}
tree=$work/tree-$files-s$seed
gitdir=$tree.git
inv=$tree.inventory
# ste's default ignores (ste.toml [inventory] ignore); nothing matches here
# (the git directory is outside the tree) but the matching is paid for.
scan_args=(scan --root "$tree" --threads "$threads" --ignore '.git/**' --ignore '.ste/**')
scan_cmd="$bench scan --root $tree --threads $threads --ignore '.git/**' --ignore '.ste/**'"

for tool in "$bench" hashdeep git; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
mkdir -p "$work"

if [ ! -f "$tree.done" ]; then
  echo "== generating $tree (once; cached)"
  rm -rf "$tree" "$gitdir" "$gitdir.done" "$inv"
  "$bench" gen "$tree" "$files" "$seed"
  touch "$tree.done"
fi
git_() { git --git-dir="$gitdir" --work-tree="$tree" "$@"; }
if [ ! -f "$gitdir.done" ]; then
  echo "== git init + add + commit (untimed, once; cached)"
  rm -rf "$gitdir"
  git_ init -q
  git_ config gc.auto 0  # no background repack of 1.5 GB during the runs
  git_ add -A
  GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com \
    GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com \
    git_ commit -q -m "bench tree"
  touch "$gitdir.done"
fi
# Files must be older than the index (git) and than the previous inventory
# (ste) for either cache to apply: wait out the timestamp tick, refresh.
sleep 1
git_ update-index -q --refresh >/dev/null || true
git_ status >/dev/null

echo "== machine"
echo "nproc=$(nproc) kernel=$(uname -r) mem=$(free -g | awk '/Mem:/{print $2}')G"
echo "$(hashdeep -V | head -1 | sed 's/^/hashdeep /'), $(git --version)"
echo "tree: $tree: $(find "$tree" -type f | wc -l) files," \
  "$(find "$tree" -type d | wc -l) directories, $(du -sh "$tree" | cut -f1)"
echo

echo "== P6: cold inventory (no stat cache), $threads threads, vs hashdeep -c md5 -j$threads"
echo "   (page cache warm for both: one untimed run each first)"
"$bench" "${scan_args[@]}" | sed 's/^/   ste: /'
"$bench" compare "$runs" \
  "ste inventory (cold)" "$scan_cmd" \
  "hashdeep" "hashdeep -r -c md5 -j$threads $tree"
echo

echo "== P7: warm re-inventory (previous inventory read from its file) vs git status"
"$bench" "${scan_args[@]}" --write "$inv" >/dev/null
sleep 1
"$bench" "${scan_args[@]}" --previous "$inv" | sed 's/^/   ste: /'
"$bench" compare "$runs_warm" \
  "git status" "git --git-dir=$gitdir --work-tree=$tree status" \
  "ste inventory (warm)" \
  "$scan_cmd --previous $inv"
echo "   (warm + writing the new inventory:)"
"$bench" compare "$runs_warm" \
  "git status" "git --git-dir=$gitdir --work-tree=$tree status" \
  "ste inventory (warm+write)" \
  "$scan_cmd --previous $inv --write $inv.new"
