# frozen_string_literal: true

# The definition tracker's position reads (integrations/ruby/
# ste_positions.rb, loaded by ste_defs.rb; ctest RubyPositions):
#
#     ruby tests/integrations/ruby_positions_test.rb
#
# Each case is a fresh ruby process run as ste runs a test at definition
# level (STE_DEFINITIONS=<root>, -r ste_defs.rb) with a recorder loaded
# after it that appends each path the tracker stats to a file (outside ste
# those stats only fail). Checks: every form of caller/caller_locations and
# the program's Warning.warn override answer as without the tracker; each
# way of reading a line number records `/\x01ste-positions:<pid>.<n>`
# once per scope (a new <n> after a scope push or pop); code that reads
# none records none; the test framework's own reads count only when what
# they see is inside a method of a repository file.

require "minitest/autorun"
require "rbconfig"
require_relative "ruby_tracked_run"
require "tmpdir"

class RubyPositionsTest < Minitest::Test
  include RubyTrackedRun

  def setup
    @root = Dir.mktmpdir("ste-positions-")
    @outside = Dir.mktmpdir("ste-positions-outside-")
    Dir.mkdir(File.join(@root, "lib"))
    File.write(File.join(@root, "lib", "geo.rb"), <<~RUBY)
      module Geo
        def self.area(n)
          n * 2
        end

        def self.where
          caller_locations(0, 1).first.lineno
        end

        def self.boom
          raise ArgumentError, "bad"
        end

        def self.block
          proc { 1 }
        end

        def self.each_one
          yield 1
        end
      end
    RUBY
  end

  def teardown
    FileUtils.rm_rf(@root)
    FileUtils.rm_rf(@outside)
  end

  # Runs `code` (a script in the root) tracked; returns [stdout+stderr,
  # the paths stat'ed, the positions records among them].
  def run_tracked(code, tracked: true, extra: {})
    out, paths = run_script(@root, @outside, code, tracked: tracked, extra: extra)
    [out, paths, paths.grep(%r{\A/\x01ste-positions:}), paths.grep(%r{\A/\x01ste-code-lines:})]
  end

  # Runs `code`; expects `count` records of `kind` (positions, code-lines)
  # and none of the other.
  def assert_positions(code, count = 1, message = nil, kind: "positions")
    out, paths, positions, code_lines = run_tracked(code)
    got = { "positions" => positions.size, "code-lines" => code_lines.size }
    want = { "positions" => 0, "code-lines" => 0 }.merge(kind => count)
    assert_equal want, got, "#{message || code}\n#{out}\n#{paths.inspect}"
    assert(paths.any? { |p| p.start_with?("/\x01ste-defs-end:") }, "no end marker\n#{out}\n#{paths.inspect}")
    positions + code_lines
  end

  PREAMBLE = "require 'geo'\n"

  def test_caller_forms_answer_as_without_the_tracker
    code = <<~RUBY
      def f(*a) = caller(*a)
      def g(*a) = caller_locations(*a)&.map { |l| [l.to_s, l.path, l.absolute_path, l.label, l.base_label, l.lineno] }
      [[], [0], [1], [2], [50], [3], [0, 1], [1, 2], [0..0], [1..], [..1], [-2..-1], [1..-1], [1...2], [5..9],
       [100..], [0, 0], [1, nil], [1.7], [0..0, nil]].each { |a| p [a, f(*a), g(*a)] }
      [[-1], [0, -1], [nil], ["x"], [1, 2, 3], [(1..).step(2)]].each do |a|
        [:f, :g].each do |m|
          send(m, *a)
        rescue => e
          p [a, m, e.class, e.message]
        end
      end
      p(begin; raise "x"; rescue => e; [e.backtrace, e.backtrace_locations.map(&:to_s), e.full_message]; end)
    RUBY
    plain, = run_tracked(code, tracked: false)
    tracked, _, positions = run_tracked(code)
    assert_equal plain, tracked
    assert_equal 1, positions.size
    assert_includes plain, "negative level (-1)" # the script ran
  end

  def test_a_warning_override_taking_one_argument_still_gets_one
    code = <<~RUBY
      module Warning
        def self.warn(message)
          $stdout.print "W: " + message
        end
      end
      Warning[:deprecated] = true
      warn("plain", category: :deprecated)
      warn("placed", uplevel: 0)
      Warning.warn("direct\\n")
    RUBY
    plain, = run_tracked(code, tracked: false)
    tracked, _, positions, code_lines = run_tracked(code)
    assert_equal plain, tracked
    assert_includes plain, "W: plain"
    assert_equal [1, 0], [positions.size, code_lines.size], "warn(uplevel:) names a frame's line"
  end

  def test_code_that_reads_no_line_records_nothing
    assert_positions(PREAMBLE + <<~RUBY, 0)
      Geo.area(2)
      begin
        Geo.boom
      rescue ArgumentError => e
        e.message
      end
      Geo.method(:area).arity
      String.instance_method(:upcase).source_location
      proc { 1 }.call
      warn "no line here"
      begin
        begin
          Geo.boom
        rescue ArgumentError => e
          raise e
        end
      rescue ArgumentError
        begin
          raise
        rescue ArgumentError
          nil
        end
      end
      x = [1].map { |v| v + 1 }
      "\#{__method__} \#{__FILE__}"
    RUBY
  end

  def test_each_way_of_reading_a_line_records_once
    reads = {
      "caller" => "caller",
      "caller in a block" => "[1].each { caller }",
      "caller in a block a method yields to" => "Geo.each_one { caller_locations(1, 3) }",
      "caller(0, 1)" => "caller(0, 1)",
      "caller_locations" => "caller_locations(1..)",
      "a method that reads its own line" => "Geo.where",
      "backtrace" => "begin; Geo.boom; rescue => e; e.backtrace; end",
      "backtrace_locations" => "begin; Geo.boom; rescue => e; e.backtrace_locations; end",
      "full_message" => "begin; Geo.boom; rescue => e; e.full_message; end",

      "Proc#source_location" => "Geo.block.source_location",
      "Binding#source_location" => "binding.source_location",
      "Proc#inspect" => "Geo.block.inspect",
      "Thread#inspect" => "Thread.current.inspect",
      "a dying thread's report" => "$stderr = File.open(File::NULL, 'w'); t = Thread.new { Geo.boom }; Thread.pass while t.alive?",
      "warn uplevel" => "$stderr = File.open(File::NULL, 'w'); warn('x', uplevel: 0)",
      "TracePoint#lineno" => "t = TracePoint.new(:call) { |tp| tp.lineno }; t.enable { Geo.area(1) }",
      "set_trace_func" => "set_trace_func(nil)",
      "two reads, one record" => "caller; Geo.where",
    }
    # The line of a definition, which need not have run.
    definitions = {
      "Method#source_location" => "Geo.method(:area).source_location",
      "UnboundMethod#source_location" => "Geo.singleton_class.instance_method(:area).source_location",
      "Method#to_s" => "\"\#{Geo.method(:area)}\"",
      "InstructionSequence.of" => "RubyVM::InstructionSequence.of(Geo.method(:area))",
      "ruby's warning naming a definition" =>
        "$VERBOSE = true; $stderr = File.open(File::NULL, 'w'); Geo.singleton_class.class_eval { def area(n) = n }",
    }
    {"positions" => reads, "code-lines" => definitions}.each do |kind, table|
      table.each do |name, read|
        # In a method called by a method of a repository file: their lines
        # can show.
        assert_positions(PREAMBLE + "def check\n  #{read}\nend\n\ndef outer\n  check\nend\nGeo.area(1)\nouter\n", 1, name,
                         kind: kind)
      end
    end
  end

  # A method that ran in an earlier scope and runs again in one that reads
  # line numbers is recorded there too (ste gives the positions record the
  # places of the methods recorded in its scope).
  def test_a_scope_that_reads_lines_records_each_method_it_ran
    _, paths, positions = run_tracked(PREAMBLE + <<~RUBY)
      Geo.area(1)
      SteDefs.flush
      SteDefs.entered_scope
      Geo.area(2)
      SteDefs.flush
      SteDefs.left_scope
      SteDefs.entered_scope
      Geo.area(3)
      SteDefs.flush
      Geo.where
    RUBY
    assert_equal 1, positions.size
    area = paths.grep(%r{/lib/geo\.rb/\x01ste-code:2\z})
    assert_equal 2, area.size, paths.inspect
    assert_operator paths.rindex(area[1]), :>, paths.index(positions[0]), "recorded again after the positions record"
  end

  # What they show is top-level or class-body code (module-level: no unit's
  # `at` covers it) or outside the repository.
  def test_reads_that_show_no_method_record_nothing
    assert_positions(PREAMBLE + <<~RUBY, 0)
      require "forwardable"
      caller
      [1].each { caller_locations(0) }
      class Box
        extend Forwardable
        def_delegators :@items, :size, :first
        caller(0, 3)
        define_method(:made) { 1 }
      end
      Box.instance_method(:made).source_location
      Box.new.method(:made).inspect
      proc { 2 }.source_location
      begin
        raise "top"
      rescue => e
        e.backtrace
        e.full_message
      end
      require "set"
      Set.instance_method(:add).source_location
    RUBY
  end

  def test_an_uncaught_exception_records_before_the_end
    out, paths, positions = run_tracked(PREAMBLE + "Geo.boom\n")
    assert_includes out, "bad (ArgumentError)"
    assert_equal 1, positions.size, paths.inspect
    ending = paths.index { |p| p.start_with?("/\x01ste-defs-end:") }
    refute_nil ending, paths.inspect
    assert_operator paths.index(positions[0]), :<, ending
  end

  def test_each_scope_gets_its_own_record
    _, _, positions, code_lines = run_tracked(PREAMBLE + <<~RUBY)
      Geo.where
      Geo.where
      SteDefs.flush
      SteDefs.entered_scope
      Geo.method(:area).source_location
      SteDefs.flush
      SteDefs.left_scope
      Geo.where
      pid = fork { Geo.where; SteDefs.finish; exit!(0) }
      Process.wait(pid)
    RUBY
    assert_equal 3, positions.size, positions.inspect
    assert_equal 1, code_lines.size, code_lines.inspect
    assert_equal 4, (positions + code_lines).map { |p| p[/[\d.]+\z/] }.uniq.size
  end

  # A fake framework outside the repository (a `minitest/` folder) reads
  # the stack and a block's location, as RSpec does for each example.
  def test_the_frameworks_reads_count_only_inside_a_repository_method
    dir = File.join(@outside, "minitest")
    Dir.mkdir(dir)
    File.write(File.join(dir, "fake.rb"), <<~RUBY)
      module Fake
        def self.define(&block)
          [caller(1, 1), block&.source_location]
        end

        def self.deprecated
          warn "DEPRECATED from \#{caller.first}"
        end

        def self.report(error)
          [error.backtrace, error.full_message, error.backtrace_locations]
        end
      end
    RUBY
    top = "require '#{dir}/fake'\n#{PREAMBLE}"
    assert_positions(top + "Fake.define { 1 }\n[1].each { Fake.define { 2 } }\n", 0, "top-level blocks")
    assert_positions(top + "Fake.report((Geo.boom rescue $!))\n", 0, "a failure report")
    assert_positions(top + "$stderr = File.open(File::NULL, 'w')\nGeo.each_one { Fake.deprecated }\n", 0,
                     "a deprecation naming top-level code, with a method of the repository further down")
    File.write(File.join(@root, "lib", "helper.rb"), "module Helper\n  def self.it_works\n    Fake.define { 3 }\n  end\nend\n")
    assert_positions(top + "require 'helper'\nHelper.it_works\n", 1, "examples defined in a repository method")
    assert_positions(top + "Fake.define(&Geo.block)\n", 1, "a block made in a repository method")
  end
end
