# frozen_string_literal: true

# ste_forking_runner.rb: a forking batch runner for minitest and RSpec,
# the Ruby side of the batch protocol (integrations/README.md).
#
#   ruby ste_forking_runner.rb --framework minitest|rspec [--jobs N]
#       [--preload FILE]... [-I DIR]... [--case-scopes]
#       TEST_FILE[::CASE]... [-- FRAMEWORK_ARGS...]
#
# A TEST_FILE may also be given as FILE.rb::CASE, as `ste select` prints a
# test case with `[tests] unit = "case"` (docs/concepts.md, "Test cases"):
# the child of FILE.rb then runs only the cases given for it (minitest:
# CASE is "Class#test_name", handed to minitest as -n with an anchored
# regex of them; RSpec: the example's full description, handed as -e, a
# substring: it may run more, never fewer), in the framework's own order.
# A file given whole and with cases runs whole.
#
# The parent loads the framework, its plugins and the preload files once,
# in the scope it was started in (under `ste record`: the root scope, so
# what they read is a dependency of every test file). Then, for each test
# file, it forks; the child enters the file's scope (`ste_scope_push`
# through Fiddle; absent when not under ste, and then it carries on
# unscoped), loads that file only, runs it and exits 0 (passed), 1 (a test
# failed) or 2 (the file could not be loaded). Every child starts from the
# parent's state, so a `require` made by one test file cannot hide another
# file's dependency on the same library. The parent runs --jobs children at
# a time, appends `outcome\texit\tseconds\tpath` to $STE_RESULTS when a file
# is done, prints each child's report (as it comes with one job; whole,
# when the child ends, with several) and a one-line summary, and exits 0
# when every file passed, 1 otherwise (130 when interrupted).
#
# Defaults from the environment (ste sets them, see the protocol):
# STE_JOBS (--jobs), STE_PRELOAD_FILES (--preload, one file per line),
# STE_CASE_SCOPES=1 (--case-scopes: a scope per test case, beneath the
# file's: "Class#test_name" for minitest, the full description for RSpec).
# A case scope is pushed only where the cases' order is the next run's too
# (ste selects a case with every case that ran after it, in that order):
# minitest with a seed given (--seed N after --, or $SEED; minitest's
# random order is then the same at every run, a filtered run's the same
# but for the cases left out); RSpec where the example's groups and the
# run are in defined order (no random or custom ordering). Elsewhere the
# records stay in the file's scope: the file is selected whole.
#
# minitest: "lib" and "test" are put on the load path (as rake's and
# minitest's test tasks do) unless -I is given; autorun is disabled in the
# parent, each child requires its file and calls Minitest.run (with one
# --seed for the whole run unless --seed or $SEED is given), then the
# Minitest.after_run hooks. RSpec: the parent applies what .rspec/SPEC_OPTS
# say to load (-I, --require) and the preload files; each child calls
# RSpec::Core::Runner.run with its file.
#
# Children leave with exit!: at_exit handlers registered before the fork
# run once, in the parent (as in a single-process run), not per file. With
# ste's definition tracker (ste_defs.rb) in the process, what ran is
# emitted before each scope push and pop, and a child's account is
# finished before its exit!.
# Test cases that minitest runs in threads (parallelize_me!) get no case
# scope: the scope is per process, their records stay in the file's scope.

require "optparse"

module SteForkingRunner
  PROGRAM = "ste_forking_runner"

  # Per-file counts a child reports to the parent through a pipe.
  Counts = Struct.new(:tests, :assertions, :failures, :errors, :skips) do
    def self.zero
      new(0, 0, 0, 0, 0)
    end

    def self.parse(line)
      values = line.to_s.split.map(&:to_i)
      values.size == 5 ? new(*values) : nil
    end

    def add(other)
      each_pair { |name, value| self[name] = value + other[name] }
    end

    def to_line
      "#{to_a.join(' ')}\n"
    end
  end

  # The runner API of libste_preload.so (interceptor/include/ste/scope.h),
  # or nil when this process is not under ste.
  class ScopeApi
    # Longest case name pushed (bytes); the whole scope is at most 4096.
    MAX_NAME = 512

    def self.resolve
      require "fiddle"
      handle = Fiddle::Handle::DEFAULT
      push = Fiddle::Function.new(handle["ste_scope_push"], [Fiddle::TYPE_VOIDP], Fiddle::TYPE_INT)
      pop = Fiddle::Function.new(handle["ste_scope_pop"], [], Fiddle::TYPE_INT)
      new(push, pop)
    rescue LoadError, StandardError # no fiddle, or Fiddle::DLError: not under ste
      nil
    end

    def initialize(push, pop)
      @push = push
      @pop = pop
    end

    # Enters current scope + "/" + name. True on success; on failure warns
    # and returns false (the scope is unchanged: records stay in the outer
    # scope, which over-selects but never hides a dependency).
    def push(name)
      c_string = "#{name}\0"
      SteForkingRunner.definitions(:scope_changed)
      if @push.call(Fiddle::Pointer[c_string]).zero?
        SteForkingRunner.definitions(:entered_scope)
        return true
      end

      errno = Fiddle.respond_to?(:last_error) ? Fiddle.last_error : 0
      reason = errno.to_i.positive? ? SystemCallError.new(nil, errno).message : "error"
      warn "#{PROGRAM}: ste_scope_push(#{name.inspect}): #{reason}"
      false
    end

    def pop
      SteForkingRunner.definitions(:scope_changed)
      @pop.call
      SteForkingRunner.definitions(:left_scope)
    end

    # A test case's name as a scope name, by the rule of integrations/
    # README.md ("Case scope names"): its bytes with '%', '/', 0x00-0x1F and
    # 0x7F percent-encoded; "" -> "%"; over MAX_NAME bytes: a prefix of at
    # most MAX_NAME - 18 bytes, not cut inside an escape or a UTF-8
    # sequence, + "%~" + the FNV-1a 64 hash of the name's bytes.
    def self.case_name(name)
      raw = name.to_s.b
      return +"%" if raw.empty?

      out = raw.gsub(/[\x00-\x1F%\/\x7F]/n) { |c| format("%%%02X", c.ord) }
      return out.force_encoding(Encoding::UTF_8) if out.bytesize <= MAX_NAME

      cut = MAX_NAME - 18
      cut -= 1 while cut.positive? && (out.getbyte(cut) & 0xC0 == 0x80 ||
                                       out.byteslice([cut - 2, 0].max...cut).include?("%"))
      hash = 0xcbf29ce484222325 # FNV-1a 64
      raw.each_byte { |b| hash = ((hash ^ b) * 0x100000001b3) & 0xffff_ffff_ffff_ffff }
      (out.byteslice(0, cut) + format("%%~%016x", hash)).force_encoding(Encoding::UTF_8)
    end
  end

  Options = Struct.new(:framework, :jobs, :preload, :libs, :case_scopes, :files, :framework_args, :cases)

  # TEST_FILE arguments as (files, cases): the files in the order first
  # given, once each; cases[file] the cases given for it in their order, or
  # nil when it runs whole (given whole at least once). "FILE.rb::CASE" is
  # a case; any other argument a file.
  def self.split_cases(args)
    files = []
    cases = {}
    args.each do |arg|
      at = arg.index(".rb::")
      file = at ? arg[0, at + 3] : arg
      unless cases.key?(file)
        files << file
        cases[file] = []
      end
      if at.nil?
        cases[file] = nil
      elsif cases[file]
        name = arg[(at + 5)..]
        cases[file] << name unless cases[file].include?(name)
      end
    end
    [files, cases]
  end

  def self.parse_options(argv)
    argv = argv.dup
    framework_args = []
    if (dash = argv.index("--"))
      framework_args = argv[(dash + 1)..]
      argv = argv[0...dash]
    end
    env_preload = ENV.fetch("STE_PRELOAD_FILES", "").split("\n").map(&:strip).reject(&:empty?)
    env_jobs = [Integer(ENV.fetch("STE_JOBS", "1"), exception: false) || 1, 1].max
    opts = Options.new(nil, env_jobs, [], [], ENV["STE_CASE_SCOPES"] == "1", [], framework_args, {})
    parser = OptionParser.new do |o|
      o.banner = "Usage: ruby #{File.basename(__FILE__)} --framework minitest|rspec [options] " \
                 "TEST_FILE[::CASE]... [-- FRAMEWORK_ARGS...]\n" \
                 "  FILE.rb::CASE runs only the CASEs given for FILE.rb (minitest: Class#test_name; " \
                 "RSpec: a full description)"
      o.on("--framework NAME", %w[minitest rspec], "minitest or rspec") { |v| opts.framework = v }
      o.on("-j", "--jobs N", Integer, "children at a time (default $STE_JOBS, else 1)") do |v|
        opts.jobs = v
      end
      o.on("--preload FILE", "load FILE in the parent, before forking (repeatable; " \
                             "default: $STE_PRELOAD_FILES, one per line)") { |v| opts.preload << v }
      o.on("-I DIR", "put DIR on the load path (minitest default: lib, test)") { |v| opts.libs << v }
      o.on("--[no-]case-scopes", "a scope per test case (default: $STE_CASE_SCOPES=1)") do |v|
        opts.case_scopes = v
      end
      o.on("-h", "--help", "this help") do
        puts o
        exit 0
      end
    end
    opts.files, opts.cases = split_cases(parser.parse(argv))
    raise OptionParser::MissingArgument, "--framework" unless opts.framework
    raise OptionParser::InvalidArgument, "--jobs must be at least 1" if opts.jobs < 1

    opts.preload = env_preload if opts.preload.empty?
    opts
  rescue OptionParser::ParseError => e
    warn "#{PROGRAM}: #{e.message}\n#{parser}"
    exit 2
  end

  # ---- frameworks: prepare in the parent, run_file in a child --------------

  class MinitestFramework
    def initialize(opts, scope)
      @opts = opts
      @scope = scope
      @args = opts.framework_args
    end

    def prepare
      libs = @opts.libs.empty? ? %w[lib test] : @opts.libs
      libs.reverse_each do |lib|
        dir = File.expand_path(lib)
        $LOAD_PATH.unshift(dir) unless $LOAD_PATH.include?(dir)
      end
      require "minitest"
      # A test_helper's `require "minitest/autorun"` must not run the suite
      # again when the parent exits: the children run it.
      ::Minitest.class_variable_set(:@@installed_at_exit, true)
      require "minitest/autorun"
      no_plugins = @args.include?("--no-plugins") || ENV["MT_NO_PLUGINS"]
      ::Minitest.load_plugins unless no_plugins
      install_plugin
      @opts.preload.each { |file| require File.expand_path(file) }
      seeded = @args.any? { |a| a == "-s" || a.start_with?("--seed") } || ENV["SEED"]
      @seed_args = seeded ? [] : ["--seed", (Random.new_seed % 0xFFFF).to_s]
      wanted = @opts.case_scopes && @scope
      @case_scopes = wanted && seeded
      return unless wanted && !seeded

      warn "#{PROGRAM}: no case scopes: minitest runs the cases in a random order without a " \
           "seed, and the next run's may differ (give one: -- --seed N); each file is selected whole"
    end

    def run_file(path, cases = nil)
      args = @args
      if cases && !cases.empty?
        names = cases.map { |c| Regexp.escape(c) }.join("|")
        args += ["-n", "/\\A(?:#{names})\\z/"]
      end
      ARGV.replace(args)
      begin
        require File.expand_path(path)
      rescue ScriptError, StandardError => e
        SteForkingRunner.report(e)
        return [2, Counts.zero]
      end
      passed = ::Minitest.run(@seed_args + args)
      ::Minitest.class_variable_get(:@@after_run).reverse_each(&:call)
      s = @summary
      counts = s ? Counts.new(s.count, s.assertions, s.failures, s.errors, s.skips) : Counts.zero
      [passed ? 0 : 1, counts]
    end

    def describe(c)
      "#{c.tests} runs, #{c.assertions} assertions, #{c.failures} failures, " \
        "#{c.errors} errors, #{c.skips} skips"
    end

    # Called by Minitest.run in the child (a plugin named ste_forking_runner).
    def plugin_init(reporter)
      @summary = reporter.reporters.find { |r| r.is_a?(::Minitest::SummaryReporter) }
      reporter << CaseScopeReporter.new(@scope) if @case_scopes
    end

    private

    def install_plugin
      framework = self
      ::Minitest.extensions << "ste_forking_runner"
      ::Minitest.define_singleton_method(:plugin_ste_forking_runner_init) do |_options|
        framework.plugin_init(::Minitest.reporter)
      end
    end

    # Pushes "Class#test" from prerecord to record: the whole of a test
    # case (setup, the test, teardown) runs in its scope.
    class CaseScopeReporter
      def initialize(scope)
        @scope = scope
        @pushed = false
      end

      def start; end

      def report; end

      def passed?
        true
      end

      def prerecord(klass, name)
        return if klass.respond_to?(:test_order) && klass.test_order == :parallel

        @pushed = @scope.push(ScopeApi.case_name("#{klass}##{name}"))
      end

      def record(_result)
        @scope.pop if @pushed
        @pushed = false
      end
    end
  end

  class RSpecFramework
    def initialize(opts, scope)
      @opts = opts
      @scope = scope
      @args = opts.framework_args
    end

    def prepare
      require "rspec/core"
      ::RSpec::Core::Runner.disable_autorun!
      install_case_scopes if @opts.case_scopes && @scope
      # What `rspec` would load before any spec file (.rspec, SPEC_OPTS and
      # the arguments: -I and --require), here once, in the parent. Each
      # child's Runner.run applies these options again: the requires are
      # then already loaded.
      options = ::RSpec::Core::ConfigurationOptions.new(@args.dup).options
      ::RSpec::Core::RubyProject.add_to_load_path("lib", options[:default_path] || "spec")
      @opts.libs.each { |lib| add_lib(File.expand_path(lib)) }
      Array(options[:libs]).each { |lib| add_lib(lib) }
      Array(options[:requires]).each { |file| require file }
      @opts.preload.each { |file| require File.expand_path(file) }
      ::RSpec.configuration.backtrace_exclusion_patterns << %r{/ste_forking_runner\.rb}
      warm_up unless @opts.preload.empty? && Array(options[:requires]).empty?
    end

    def run_file(path, cases = nil)
      ::RSpec.configuration.start_time = ::RSpec::Core::Time.now # "files took ... to load"
      examples = (cases || []).flat_map { |c| ["-e", c] }
      code = ::RSpec::Core::Runner.run(@args + examples + [path], $stderr, $stdout)
      reporter = ::RSpec.configuration.reporter
      world = ::RSpec.world
      outside = reporter.instance_variable_get(:@non_example_exception_count).to_i
      counts = Counts.new(reporter.examples.size, 0, reporter.failed_examples.size, outside,
                          reporter.pending_examples.size)
      return [0, counts] if code.to_i.zero?

      could_not_load = reporter.examples.empty? && (world.wants_to_quit || world.rspec_is_quitting)
      [could_not_load ? 2 : 1, counts]
    end

    # RSpec's own totals line (SummaryNotification#totals_line).
    def describe(c)
      plural = ->(n, word) { "#{n} #{word}#{'s' unless n == 1}" }
      line = "#{plural[c.tests, 'example']}, #{plural[c.failures, 'failure']}"
      line += ", #{c.skips} pending" if c.skips.positive?
      line += ", #{plural[c.errors, 'error']} occurred outside of examples" if c.errors.positive?
      line
    end

    private

    def add_lib(dir)
      $LOAD_PATH.unshift(dir) unless $LOAD_PATH.include?(dir)
    end

    # Loads in the parent what RSpec would otherwise load in every child:
    # the expectation and mock frameworks (included into example groups,
    # as the first `describe` would) and the default reporter's files.
    # Only after a spec_helper was loaded (preload or --require): it is
    # where `expect_with`/`mock_with` are configured.
    def warm_up
      ::RSpec::Core::ExampleGroup.ensure_example_groups_are_configured
      require "stringio"
      require "rspec/core/profiler"
      require "rspec/core/formatters/progress_formatter"
    end

    # True when `example` runs where it ran last time, but for the examples
    # left out: the run and each of its groups in defined order (RSpec's
    # default; a random order's seed may differ next run, a custom one may
    # be anything).
    def self.defined_order?(example)
      identity = ::RSpec::Core::Ordering::Identity
      return false unless ::RSpec.configuration.ordering_registry.fetch(:global).is_a?(identity)

      example.example_group.parent_groups.all? { |group| group.ordering_strategy.is_a?(identity) }
    rescue StandardError
      false
    end

    # Registered before any preload: the outermost around hook, so every
    # hook of an example runs in the example's scope.
    def install_case_scopes
      scope = @scope
      ::RSpec.configure do |config|
        config.around(:example) do |example|
          name = example.metadata[:full_description] || example.metadata[:description]
          pushed = RSpecFramework.defined_order?(example) && scope.push(ScopeApi.case_name(name))
          begin
            example.run
          ensure
            scope.pop if pushed
          end
        end
      end
    end
  end

  # ---- the parent: children N at a time -------------------------------------

  class Child
    attr_reader :path, :pid, :started, :report_r, :streams

    def initialize(path, pid, started, report_r, streams)
      @path = path
      @pid = pid
      @started = started
      @report_r = report_r
      @streams = streams # {io => [target, buffer]}, empty when not capturing
    end
  end

  class Pool
    def initialize(opts, framework, scope, results)
      @opts = opts
      @framework = framework
      @scope = scope
      @results = results
      # One job: children write to our stdout and stderr directly (as it
      # comes, colours kept). Several: each child's output is captured and
      # printed whole when it ends, never interleaved.
      @capture = opts.jobs > 1
      @running = {}
      @interrupted = false
      @totals = Counts.zero
      @outcomes = Hash.new(0)
      @not_passed = []
    end

    attr_reader :totals, :outcomes, :not_passed, :interrupted

    def run(files)
      queue = files.dup
      previous_int = trap("INT") { @interrupted = true }
      until queue.empty? && @running.empty?
        start(queue.shift) while !@interrupted && @running.size < @opts.jobs && !queue.empty?
        queue.clear if @interrupted
        break if @running.empty?

        @capture ? pump : wait_one
      end
    ensure
      trap("INT", previous_int || "DEFAULT")
    end

    private

    def start(path)
      $stdout.flush
      $stderr.flush
      report_r, report_w = IO.pipe
      pipes = @capture ? [IO.pipe, IO.pipe] : []
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      pid = Process.fork { child(path, report_r, report_w, pipes) }
      report_w.close
      streams = {}
      pipes.each_with_index do |(r, w), i|
        w.close
        streams[r] = [i.zero? ? $stdout : $stderr, +""]
      end
      @running[pid] = Child.new(path, pid, started, report_r, streams)
    end

    def child(path, report_r, report_w, pipes)
      code = 2
      counts = Counts.zero
      begin
        trap("INT", "DEFAULT")
        report_r.close
        @running.each_value do |c|
          c.report_r.close
          c.streams.each_key(&:close)
        end
        unless pipes.empty?
          $stdout.reopen(pipes[0][1])
          $stderr.reopen(pipes[1][1])
          pipes.flatten.each(&:close)
        end
        Process.setproctitle("#{PROGRAM}: #{path}")
        # The file's scope first: everything the child reads from here on
        # is the test file's dependency (the path exactly as given).
        @scope&.push(path)
        code, counts = @framework.run_file(path, @opts.cases[path])
      rescue SystemExit => e
        code = e.status
      rescue Exception => e # rubocop:disable Lint/RescueException -- a child must exit!
        SteForkingRunner.report(e)
        code = 2
      ensure
        begin
          report_w.write(counts.to_line)
          $stdout.flush
          $stderr.flush
        rescue StandardError
          nil
        end
        SteForkingRunner.definitions(:finish)
        exit!(code)
      end
    end

    def wait_one
      child = @running.values.first
      _, status = Process.wait2(child.pid)
      finish(child, status)
    rescue Errno::EINTR
      retry
    end

    # Reads what the children wrote; reaps those that ended.
    def pump
      ios = @running.values.flat_map { |c| c.streams.keys }
      ready = ios.empty? ? nil : IO.select(ios, nil, nil, 0.05)
      ready&.first&.each { |io| drain(io) }
      @running.values.each do |c|
        # Blocking once its pipes are closed (it is exiting); otherwise
        # polled (a grandchild may hold a pipe open after it exited).
        flags = c.streams.empty? ? 0 : Process::WNOHANG
        pid, status = Process.wait2(c.pid, flags)
        next unless pid

        c.streams.keys.each { |io| drain(io, final: true) }
        finish(c, status)
      end
    end

    def drain(io, final: false)
      child = @running.values.find { |c| c.streams.key?(io) }
      return unless child

      buffer = child.streams[io][1]
      loop do
        chunk = io.read_nonblock(65_536, exception: false)
        if chunk.nil? || (final && chunk == :wait_readable)
          child.streams.delete(io)&.then { |target, buf| target.write(buf) }
          io.close
          return
        end
        return if chunk == :wait_readable

        buffer << chunk
      end
    end

    def finish(child, status)
      @running.delete(child.pid)
      child.streams.each { |io, (target, buf)| target.write(buf) && io.close }
      $stdout.flush
      $stderr.flush
      seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - child.started
      code = status.exitstatus || 128 + status.termsig.to_i
      outcome = case code
                when 0 then "passed"
                when 1 then "failed"
                else "error"
                end
      report = child.report_r.read_nonblock(4096, exception: false)
      child.report_r.close
      counts = Counts.parse(report.is_a?(String) ? report : nil) || Counts.zero
      @totals.add(counts)
      @outcomes[outcome] += 1
      @not_passed << "#{child.path} (#{outcome}, exit #{code})" unless outcome == "passed"
      @results&.append(outcome, code, seconds, child.path)
    end
  end

  # $STE_RESULTS: one line per test file, appended when it is done.
  class ResultsFile
    def self.open(path)
      path.nil? || path.empty? ? nil : new(path)
    end

    def initialize(path)
      @file = File.open(path, "a")
      @file.sync = true
    end

    def append(outcome, code, seconds, path)
      @file.write(format("%<o>s\t%<c>d\t%<s>.3f\t%<p>s\n", o: outcome, c: code, s: seconds, p: path))
    end
  end

  # Calls SteDefs.<what> when the definition tracker runs in this process
  # (ste_defs.rb, loaded through RUBYOPT): what ran is recorded in the
  # scope it ran in, and a child's account ends before its exit!.
  def self.definitions(what)
    ::SteDefs.public_send(what) if defined?(::SteDefs)
  end

  # Prints an exception as ruby prints an uncaught one, without the
  # runner's own frames (and the require machinery's between them).
  def self.report(error)
    trace = error.backtrace
    if trace
      own = trace.index { |line| line.start_with?("#{__FILE__}:") }
      own -= 1 while own&.positive? && trace[own - 1].include?("kernel_require.rb")
      error.set_backtrace(trace[0...own]) if own&.positive?
    end
    $stderr.puts error.full_message(highlight: false)
  end

  def self.main(argv)
    opts = parse_options(argv)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    results = ResultsFile.open(ENV["STE_RESULTS"])
    scope = ScopeApi.resolve
    framework = (opts.framework == "rspec" ? RSpecFramework : MinitestFramework).new(opts, scope)
    begin
      framework.prepare
    rescue ScriptError, StandardError => e
      # Nothing can run: every file is an error (and is selected next time).
      report(e)
      $stderr.puts "#{PROGRAM}: could not load the framework or a preload file"
      opts.files.each { |f| results&.append("error", 2, 0.0, f) }
      exit 1
    end
    pool = Pool.new(opts, framework, scope, results)
    pool.run(opts.files)

    seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    n = pool.outcomes
    pool.not_passed.each { |line| puts "#{PROGRAM}: not passed: #{line}" }
    skipped = opts.files.size - n.values.sum
    puts format("%<p>s: %<f>d files in %<s>.2fs (jobs %<j>d): %<ok>d passed, %<ko>d failed, " \
                "%<er>d error%<sk>s; %<c>s",
                p: PROGRAM, f: opts.files.size, s: seconds, j: opts.jobs, ok: n["passed"],
                ko: n["failed"], er: n["error"],
                sk: skipped.positive? ? ", #{skipped} not run (interrupted)" : "",
                c: framework.describe(pool.totals))
    $stdout.flush
    exit 130 if pool.interrupted
    exit(n["passed"] == opts.files.size ? 0 : 1)
  end
end

SteForkingRunner.main(ARGV) if $PROGRAM_NAME == __FILE__
