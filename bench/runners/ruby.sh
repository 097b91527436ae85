#!/usr/bin/env bash
# bench/runners/ruby.sh BUILD_DIR — what recording a minitest suite costs,
# with the generic runner and with the forking runner (runner.kind
# "minitest", integrations/ruby/ste_forking_runner.rb).
#
#   (i)   plain: one ruby process loads every test file and runs them
#         (`ruby -Ilib -Itest -e 'Dir[...].each { require }'`), untraced
#   (ii)  `ste record`, kind "generic": `ruby -Ilib -Itest {test}`, one
#         process per test file, each paying for ruby, minitest and the
#         shared preload again
#   (iii) `ste record`, kind "minitest", preload test/test_helper.rb: the
#         preload once, a forked child per test file
#   (iv)  for reference: the forking runner alone, untraced (its own cost:
#         a fork per file)
#
# Prints medians of wall time (and CPU: user+sys of the process tree) and
# the ratios (ii)/(i), (iii)/(i), (iv)/(i). Target: (iii)/(i) <= 1.05.
# A record includes hashing the tree, the index and the store (.ste/ is
# removed before each, so every record starts alike).
#
# The suite (generated, cached under $STE_BENCH_DIR, default
# /tmp/ste-bench-ruby): FILES test files of CASES test cases each; each
# file requires its own lib/unit_N.rb; test/test_helper.rb requires
# minitest/autorun, some standard library and lib/app.rb, which loads
# MODELS generated classes (the "moderately heavy" shared preload); each
# case does WORK iterations of arithmetic.
#
# The forking runner costs a few ms per test file whatever the file does
# (fork, copy-on-write faults, exit, one Minitest.run), so the ratio
# depends on how heavy the files are: the default WORK makes a file take
# ~55 ms here (10 cases of ~5 ms); WORK=20000 (~6 ms per file) shows the
# fixed cost. The last lines print it per file, which does not depend on
# WORK.
#
# Environment: FILES (100), CASES (10), WORK (200000), MODELS (300),
# RUNS (3, after one untimed warm-up of each variant), JOBS (1: test
# processes, resp. forked children, at a time; the plain run is one
# process), VARIANTS ("plain generic minitest alone"), STE_BENCH_DIR.
set -euo pipefail
runners_dir=$(cd "$(dirname "$0")" && pwd)

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
ste=$build/ste
here=$(cd "$(dirname "$0")" && pwd)
integrations=$(cd "$here/../../integrations" && pwd)
runner=$integrations/ruby/ste_forking_runner.rb
files=${FILES:-100}
cases=${CASES:-10}
work=${WORK:-200000}
models=${MODELS:-300}
runs=${RUNS:-3}
jobs=${JOBS:-1}
suite=${STE_BENCH_DIR:-/tmp/ste-bench-ruby}/suite-f$files-c$cases-w$work-m$models

for tool in "$ste" ruby; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
[ -f "$runner" ] || { echo "$0: $runner not found" >&2; exit 1; }

if [ ! -f "$suite/.done" ]; then
  echo "== generating $suite (once; cached)"
  rm -rf "$suite"
  mkdir -p "$suite"
  ruby - "$suite" "$files" "$cases" "$work" "$models" <<'RUBY'
dir, files, cases, work, models = ARGV[0], *ARGV[1..].map(&:to_i)
def write(path, text)
  require "fileutils"
  FileUtils.mkdir_p(File.dirname(path))
  File.write(path, text)
end
requires = (1..models).map { |m| format("require \"app/model_%03d\"", m) }
write("#{dir}/lib/app.rb", "require \"json\"\nrequire \"set\"\nrequire \"time\"\n" \
      "require \"securerandom\"\nrequire \"ostruct\"\nrequire \"erb\"\n#{requires.join("\n")}\n")
(1..models).each do |m|
  methods = (1..20).map { |k| "    def m#{k}(x) = (x * #{k} + #{m}) % 97\n" }.join
  write(format("%s/lib/app/model_%03d.rb", dir, m),
        "module App\n  class Model#{m}\n    ATTRS = %i[#{(1..20).map { |k| "a#{k}" }.join(' ')}].freeze\n" \
        "    attr_accessor(*ATTRS)\n#{methods}  end\nend\n")
end
write("#{dir}/test/test_helper.rb", "require \"minitest/autorun\"\nrequire \"app\"\n")
(1..files).each do |n|
  name = format("unit_%03d", n)
  mod = "Unit#{format('%03d', n)}"
  write("#{dir}/lib/#{name}.rb",
        "module #{mod}\n  def self.compute(k)\n    s = 0\n    #{work}.times { |i| s += (i * k) % 7 }\n" \
        "    s\n  end\nend\n")
  tests = (1..cases).map do |k|
    "  def test_#{k}\n    assert_kind_of Integer, #{mod}.compute(#{k})\n" \
      "    assert_equal #{k % 97}, App::Model1.new.m1(#{k}) - 1 if #{k} < 96\n  end\n"
  end.join("\n")
  write("#{dir}/test/#{name}_test.rb",
        "require \"test_helper\"\nrequire \"#{name}\"\n\nclass #{mod}Test < Minitest::Test\n#{tests}end\n")
end
RUBY
  printf '[tests]\ninclude = ["test/**/*_test.rb"]\n[runner]\ncommand = "ruby -Ilib -Itest {test}"\njobs = %s\n' \
    "$jobs" >"$suite/ste-generic.toml"
  printf '[tests]\ninclude = ["test/**/*_test.rb"]\n[runner]\nkind = "minitest"\npreload = ["test/test_helper.rb"]\njobs = %s\n' \
    "$jobs" >"$suite/ste-minitest.toml"
  touch "$suite/.done"
fi
# The configs carry JOBS: rewrite the line (the suite is shared by JOBS values).
sed -i "s/^jobs = .*/jobs = $jobs/" "$suite/ste-generic.toml" "$suite/ste-minitest.toml"
cd "$suite"
test_files=$(cd "$suite" && ls test/*_test.rb | sort)

export STE_INTEGRATIONS=$integrations
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Runs a variant (a function below) once: "wall cpu" on stdout; its output
# in $out/<name>.log. bash's `time`: CPU of the waited-for process tree.
measure() {
  local name=$1 status=0
  rm -rf "$suite/.ste"
  TIMEFORMAT='%R %U %S'
  { time "$name" >"$out/$name.log" 2>&1 || status=$?; } 2>"$out/$name.time"
  if [ "$status" != 0 ]; then
    echo "$0: variant '$name' failed (exit $status)" >&2
    tail -20 "$out/$name.log" >&2
    return 1
  fi
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$out/$name.time"
}
plain() { ruby -Ilib -Itest -e 'Dir["test/*_test.rb"].sort.each { |f| require "./" + f }'; }
generic() { "$ste" record --progress none --config "$suite/ste-generic.toml"; }
minitest() { "$ste" record --progress none --config "$suite/ste-minitest.toml"; }
# shellcheck disable=SC2086
alone() { ruby "$runner" --framework minitest --jobs "$jobs" --preload test/test_helper.rb $test_files; }

read -r -a variants <<<"${VARIANTS:-plain generic minitest alone}"
[ "${variants[0]}" = plain ] || { echo "$0: VARIANTS must start with plain" >&2; exit 2; }
echo "== machine"
echo "nproc=$(nproc) kernel=$(uname -r) load=$(cut -d' ' -f1-3 /proc/loadavg) $(ruby --version)"
echo "suite: $files files x $cases cases, WORK=$work, ${models} models; JOBS=$jobs; RUNS=$runs"
echo
echo "== warm-up (untimed) and checks"
for v in "${variants[@]}"; do
  measure "$v" >/dev/null
done
tail -1 "$out/plain.log" | sed 's/^/   plain: /'
tail -1 "$out/alone.log" | sed 's/^/   alone: /'
for v in generic minitest; do
  [[ " ${variants[*]} " == *" $v "* ]] || continue
  "$ste" record --progress none --config "$suite/ste-$v.toml" >/dev/null 2>&1
  recorded=$("$ste" index dump --json --config "$suite/ste-$v.toml" 2>/dev/null | wc -l || true)
  echo "   $v: $recorded tests in the index (expected $files)"
done
echo

kind=minitest
# shellcheck source=report.sh
. "$runners_dir/report.sh"
run_and_report
