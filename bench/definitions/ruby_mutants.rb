# frozen_string_literal: true

# Definition level (Ruby) on a real suite: record cost and seeded
# method-body mutants (bench/README.md, "Definition level (Ruby)").
#
#   ruby bench/definitions/ruby_mutants.rb SRC_REPO WORK_DIR [MUTANTS] [SEED]
#       [-- SHIM_DIR]
#
# SRC_REPO: a git repository of a pure-Ruby library whose tests are
# test/spec_*.rb or test/*_test.rb, run by minitest (rack). Two clones are
# recorded with the minitest forking runner (kind = "minitest", jobs 1):
# granularity "file" and "definition"; plain is the same runner without ste.
# CPU is user+sys of the whole process tree (Process.times of waited
# children). Then MUTANTS methods of lib/ are picked at random (SEED):
# `def ...` lines that end their parameters on the line, in a multi-line
# method, get `raise "ste mutant"; ` put at the start of their next line
# (inside the body; the lines do not move).
# For each: `ste select` in both clones, and the ground truth, every test
# file run alone without ste (`ruby -Ilib -Itest FILE`), compared with its
# outcome on the unchanged tree. missed = outcome changed and not selected.
#
# Environment: STE (the ste binary), STE_INTEGRATIONS (integrations/),
# RUBYLIB for what the suite needs that Debian lacks (SHIM_DIR is put on it).

require "fileutils"
require "json"
require "open3"

src, work, count, seed = ARGV.take_while { |a| a != "--" }
shim = ARGV.include?("--") ? ARGV[ARGV.index("--") + 1] : nil
count = Integer(count || 20)
seed = Integer(seed || 1)
STE = ENV.fetch("STE")
INTEGRATIONS = ENV.fetch("STE_INTEGRATIONS")
ENV["RUBYLIB"] = [shim, ENV["RUBYLIB"]].compact.reject(&:empty?).join(":") if shim

def run(cmd, dir, env = {})
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  c0 = Process.times
  out, err, status = Open3.capture3(env, *cmd, chdir: dir)
  c1 = Process.times
  wall = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  cpu = (c1.cutime - c0.cutime) + (c1.cstime - c0.cstime)
  [out, err, status, wall, cpu]
end

FileUtils.rm_rf(work)
FileUtils.mkdir_p(work)
tests = nil
clones = {}
%w[file definition].each do |g|
  dir = File.join(work, g)
  system("git", "clone", "-q", src, dir, exception: true)
  tests ||= Dir.chdir(dir) { (Dir["test/spec_*.rb"] + Dir["test/**/*_test.rb"]).sort }
  File.write(File.join(dir, "ste.toml"), <<~TOML)
    [tests]
    include = [#{tests.map(&:inspect).join(', ')}]
    [runner]
    kind = "minitest"
    jobs = 1
    [inventory]
    ignore = [".ste/**"]
    [selection]
    granularity = "#{g}"
  TOML
  system("git", "-C", dir, "add", "ste.toml", exception: true)
  system("git", "-C", dir, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "ste", exception: true)
  clones[g] = dir
end

runner = File.join(INTEGRATIONS, "ruby", "ste_forking_runner.rb")
_, _, plain_status, plain_wall, plain_cpu =
  run(["ruby", runner, "--framework", "minitest", *tests], clones["file"])
cost = { "plain" => [plain_wall, plain_cpu, plain_status.exitstatus] }
clones.each do |g, dir|
  out, err, status, wall, cpu = run([STE, "record", "--progress", "none"], dir, "STE_INTEGRATIONS" => INTEGRATIONS)
  warn "record #{g}: exit #{status.exitstatus}\n#{out.lines.last(2).join}#{err.lines.last(3).join}"
  cost[g] = [wall, cpu, status.exitstatus]
end

def alone(dir, tests)
  tests.to_h do |t|
    _, _, status = Open3.capture3("ruby", "-Ilib", "-Itest", t, chdir: dir)
    [t, status.success?]
  end
end

def select(dir)
  out, err, status = Open3.capture3({ "STE_INTEGRATIONS" => INTEGRATIONS }, STE, "select", chdir: dir)
  raise "select failed: #{err}" unless status.success?

  out.lines.map(&:chomp).reject { |l| l.empty? || l.start_with?(" ") }
end

base_outcome = alone(clones["definition"], tests)

# Candidate methods: from the fingerprinter (the units it finds).
fingerprinter = File.join(INTEGRATIONS, "ruby", "ste_fingerprint.rb")
files = Dir.chdir(clones["definition"]) { Dir["lib/**/*.rb"].sort }
input = files.map { |f| c = File.binread(File.join(clones["definition"], f)); "#{c.bytesize}\n#{c}" }.join
answer, = Open3.capture2("ruby", "--disable=all", fingerprinter, stdin_data: input)
candidates = []
current = nil
answer.each_line do |line|
  kind, *rest = line.split(" ", 5)
  current = files[Integer(rest[0])] if kind == "file"
  next unless kind == "unit"

  first, last, name = Integer(rest[1]), Integer(rest[2]), rest[3].chomp
  next if last - first < 2

  text, following = File.readlines(File.join(clones["definition"], current))[(first - 1), 2]
  next if following.match?(/\A\s*(rescue|ensure|end|else|elsif|when|in)\b/)
  next if text.include?("#") || text.match?(/\)\s*=/) || !text.match?(/\A\s*def\s/)
  next unless text.match?(/\)\s*\z/) || text.match?(/\A\s*def\s+[\w.?!]+\s*\z/)

  candidates << [current, first, name]
end
mutants = candidates.sample(count, random: Random.new(seed))

rows = mutants.map do |file, line, name|
  saved = {}
  clones.each_value do |dir|
    path = File.join(dir, file)
    saved[path] = File.binread(path)
    lines = saved[path].lines
    lines[line] = lines[line].sub(/\A(\s*)/) { "#{Regexp.last_match(1)}raise \"ste mutant\"; " }
    File.binwrite(path, lines.join)
  end
  selected = clones.transform_values { |dir| select(dir) }
  now = alone(clones["definition"], tests)
  changed = tests.select { |t| now[t] != base_outcome[t] }
  saved.each { |path, bytes| File.binwrite(path, bytes) }
  row = { "mutant" => "#{file}::#{name}", "changed" => changed.size,
          "def" => selected["definition"].size, "file" => selected["file"].size,
          "missed_def" => (changed - selected["definition"]), "missed_file" => (changed - selected["file"]) }
  warn row.to_json
  row
end

n = tests.size.to_f
mean = ->(k) { rows.sum { |r| r[k] } / n / [rows.size, 1].max }
puts format("tests %d, mutants %d (of %d candidates, seed %d)", tests.size, rows.size, candidates.size, seed)
puts format("missed: definition %d, file %d", rows.sum { |r| r["missed_def"].size }, rows.sum { |r| r["missed_file"].size })
puts format("mutants that changed an outcome: %d", rows.count { |r| r["changed"].positive? })
puts format("mean selected fraction: definition %.3f, file %.3f", mean["def"], mean["file"])
cost.each do |k, (wall, cpu, code)|
  puts format("%-10s wall %6.2fs cpu %6.2fs (exit %d)", k, wall, cpu, code)
end
puts format("cpu ratio: file/plain %.2f, definition/plain %.2f, definition/file %.2f",
            cost["file"][1] / cost["plain"][1], cost["definition"][1] / cost["plain"][1],
            cost["definition"][1] / cost["file"][1])
