# frozen_string_literal: true

# ste_defs.rb: ste's definition tracker for Ruby processes (the Ruby twin of
# integrations/python/ste_site/ste_defs.py; docs/concepts.md, "Definitions").
#
# With `[selection] granularity = "definition"`, ste sets STE_DEFINITIONS to
# the repository's absolute root and RUBYOPT=-r<this file> for every test
# (generic and batch runners), so every Ruby process of a test loads this
# before its script, before any file of the repository. It tells ste,
# through the interceptor, which code of the repository's files the process
# ran, each as a stat of a path that never exists (recorded as `absent` in
# the scope the process is in; outside ste a failing stat):
#
#   <abs file>/\x01ste-code:<line>  a method whose `def` starts at <line>
#                                   ran (Coverage's method start line);
#   <abs file>/\x01ste-code:0       <file> was loaded (its top-level code
#                                   ran): every repo file Coverage saw;
#   <abs file>/\x01ste-data         <file> (a .rb under the root) was read
#                                   through File/IO/Kernel#open, read,
#                                   binread, readlines, foreach, new or
#                                   IO.copy_stream: its bytes matter, not
#                                   only its code (require/load never go
#                                   through those); or it is the main
#                                   script (`ruby test/x.rb`), which
#                                   Coverage does not see;
#   /\x01ste-defs-begin:<pid>[.<n>] this process (forked child, scope it
#                                   entered) is tracked from here on;
#   /\x01ste-defs-scope:<pid>.<n>   made in a scope a runner just entered
#                                   (n counts the process's scope pushes):
#                                   every method that runs in this scope
#                                   is recorded in it, even one an earlier
#                                   scope recorded (a test case's own
#                                   part: docs/concepts.md, "Test cases");
#   /\x01ste-defs-end:<pid>         everything it ran is accounted for;
#   /\x01ste-defs-v2:<pid>          this tracker makes the records below
#                                   and the constants' (without it ste
#                                   gives every method that ran its place
#                                   and its file's every constant);
#   /\x01ste-refs:<pid>             ... and the ref records
#                                   (ste_const_reads.rb);
#   <abs file>/\x01ste-name:<name>  code that ran may read the simple
#   <abs file>/\x01ste-namespace    constant <name> of <file> / any of
#                                   them (ste_const_reads.rb says which
#                                   code and how); or the parameters of
#                                   <file>'s methods named <name>;
#   /\x01ste-positions:<pid>.<n>    code that ran in this scope read line
#                                   numbers of running code (frames:
#                                   ste_positions.rb, loaded by this: the
#                                   move rule below); each method that ran
#                                   in the scope is then recorded there,
#                                   even if an earlier scope recorded it;
#   /\x01ste-code-lines:<pid>.<n>   code that ran in this scope read the
#                                   line of code that need not have run
#                                   (Method#source_location, a warning
#                                   naming a definition): every method of
#                                   every file loaded, with its place.
#
# The move rule. A method's `unit` fingerprint has no position
# (ste_fingerprint.rb): a method that only moved changes only its `at`
# fingerprint, and ste selects for that the tests whose scopes read line
# numbers (caller, caller_locations, an exception's backtrace or
# full_message, source_location, a Proc's or Method's inspect, warn with
# uplevel:, an uncaught exception, tracing) and ran the method. The first
# such read in a scope stats the record above; <n> is new after each scope
# push and pop, so each scope gets its own. The hooks never change what
# the program sees (caller's forms answer as without them); the test
# framework's own reads (minitest's, RSpec's, the forking runner's) count
# only when they can reach a test's outcome. ste_positions.rb lists every
# read, what is not seen, and why the framework's reads may be left out.
#
# ste trusts a process's code records only when it made both markers. A
# process gives no `end` when: it leaves by exit! or a signal (the forking
# runner calls finish first for its own children), another thread is still
# alive at the end (it may run code after the last emission), or the
# program used Coverage itself (setup, start, resume, suspend, result or
# clear: its counts and ours cannot both be right; peek_result and
# running? are harmless). Its tests then fall back to file level.
#
# How: the built-in Coverage with methods: true (process-wide: every
# thread), started here. Counts are read and cleared
# (Coverage.result(stop: false, clear: true)) and emitted:
#   - before a fork (Process._fork, Ruby 3.1+: Kernel#fork, Process.fork,
#     IO.popen("-"); and Process.daemon), in the parent's scope, so the
#     child starts at zero;
#   - when the forking runner pushes or pops a scope (scope_changed), so
#     that what ran in a test file's or a case's scope is recorded there;
#     then what was recorded is forgotten, but for the files loaded (their
#     top-level code runs once, in the scope that loaded them), so that the
#     next scope records again every method it runs;
#   - at exit (at_exit, registered first: it runs after every other
#     handler, minitest/autorun's included) and in the forking runner's
#     child before exit! (finish).
# Ruby 3.1's Coverage does not see eval'd code: a method made by
# class_eval of a string runs unrecorded; the string is in the module-level
# code or in the body of the method that evaluates it, which ran when it
# made it (ste_fingerprint.rb), so a change to it is still seen.
#
# Nothing here raises into the program: a failure stops the tracking
# (no `end`: file level, honest).

module SteDefs
  CODE = "\x01ste-code:"
  DATA = "\x01ste-data"
  BEGIN_MARK = "/\x01ste-defs-begin:"
  END_MARK = "/\x01ste-defs-end:"
  V2_MARK = "/\x01ste-defs-v2:" # this tracker makes positions and constants records
  REFS_MARK = "/\x01ste-refs:" # ... and ref records (ste_const_reads.rb)
  SCOPE_MARK = "/\x01ste-defs-scope:" # this scope's records are made afresh

  @root = nil # "<abs root>/" while tracking
  @emitted = {} # [file, line] => true, already recorded by this process
  @scope_ran = {} # [file, line] => true, ran in the current scope
  @scope_recorded = {} # [file, line] => true, recorded in the current scope
  @data_files = {} # abs paths read as data, not yet recorded
  @main = nil # the main script: an absolute path, :e (-e code) or :unseen
  @broken = false
  @finished = false
  @scopes_entered = 0
  @inside = false # our own Coverage calls (not the program's)
  POSITIONS_MARK = "/\x01ste-positions:"
  CODE_LINES_MARK = "/\x01ste-code-lines:"
  @positions_n = 0 # the <n> of this scope's positions and code-lines records
  @positions_recorded = false # in this scope, by this process
  @code_lines_recorded = false
  @positions_pending = false # read, not yet recorded (at the next emit)
  @code_lines_pending = false
  @in_hook = false # a position hook's own work (not the program's)

  class << self
    attr_reader :root

    def stat(path)
      File.exist?(path)
    rescue StandardError
      nil
    end

    def broken!
      @broken = true
    end

    def broken?
      @broken
    end

    def inside?
      @inside
    end

    # Records what ran since the last emission (and the data reads).
    def emit
      return if @root.nil?

      emit_positions
      unless @broken
        @inside = true
        begin
          result = Coverage.result(stop: false, clear: true)
        ensure
          @inside = false
        end
        main_script if @main
        result.each do |file, data|
          next unless file.is_a?(String)

          unless file.start_with?(@root)
            SteConstReads.outside(file)
            next
          end
          record(file, 0)
          SteConstReads.loaded(file)
          methods = data.is_a?(Hash) ? data[:methods] : nil
          if methods.nil?
            broken! # no method counts: not what we started
            next
          end
          methods.each do |key, count|
            next unless count.to_i.positive?

            record(file, key[2])
            SteConstReads.ran(file, key[2])
          end
        end
        SteConstReads.resolve(method(:stat))
      end
      until @data_files.empty?
        file, = @data_files.shift
        stat("#{file}/#{DATA}")
      end
    end

    # The main script (`ruby test/x.rb`): Coverage does not see it, so what
    # of it ran is unknown. In the repository it is read as data (file
    # level: any change of it counts) and every constant it names, in any
    # of its methods, is a use; outside, its words are names, as a gem's
    # file's; a script on stdin cannot be read: every constant of
    # every loaded file, but for -e, whose words are in the process's
    # command line. Once per process tree (a forked child's parent recorded
    # it).
    def main_script
      main = @main
      @main = nil
      if main == :e
        SteConstReads.command_line
      elsif main == :unseen
        SteConstReads.doubt!
      elsif main.start_with?(@root)
        @data_files[main] = true
        SteConstReads.main_script(main)
      else
        SteConstReads.outside(main)
      end
    end

    # A record is made once per process (what an outer scope recorded
    # holds for the scopes in it, and a test's case scopes are one test),
    # except in a scope that read line numbers: there each method that ran
    # in it is recorded in it, since ste gives the positions record the
    # places of the methods recorded in its own scope.
    def record(file, line)
      key = [file, line]
      @scope_ran[key] = true
      return if @scope_recorded.key?(key) || (@emitted.key?(key) && !@positions_recorded)

      @emitted[key] = true
      @scope_recorded[key] = true
      stat("#{file}/#{CODE}#{line}")
    end

    # Emits what ran so far in the current scope (before a scope push or
    # pop, before a fork).
    def flush
      emit
    rescue Exception # rubocop:disable Lint/RescueException -- never into the program
      broken!
    end

    # Before a runner pushes or pops a scope: emits what ran so far in the
    # current scope, then forgets which methods were recorded (Coverage's
    # counts were cleared by the emission), so that the next scope records
    # every method it runs. A file's load (line 0) stays recorded: its
    # top-level code ran once, in the scope that loaded it.
    def scope_changed
      emit
      @emitted.delete_if { |(_file, line), _| line != 0 } if @root
    rescue Exception # rubocop:disable Lint/RescueException -- never into the program
      broken!
    end

    # After a scope push: this scope is tracked (its own `begin` marker: the
    # interceptor records a path once per process), and records all it runs
    # (the `scope` marker: scope_changed ran before the push).
    def entered_scope
      return if @root.nil?

      @scopes_entered += 1
      stat("#{BEGIN_MARK}#{Process.pid}.#{@scopes_entered}")
      stat("#{SCOPE_MARK}#{Process.pid}.#{@scopes_entered}")
      new_positions_scope
    end

    # After a scope pop: the outer scope needs its own positions record
    # (the interceptor records a path once per process, whatever the scope).
    def left_scope
      new_positions_scope if @root
    end

    # Emits the rest and, when nothing escaped Coverage, `end`.
    def finish
      return if @root.nil? || @finished

      @finished = true
      begin
        broken! unless Coverage.running?
        broken! if Thread.list.count { |t| t != Thread.current && t.alive? }.positive?
        # An uncaught exception: ruby prints its backtrace after this.
        positions_read if $! && !$!.is_a?(SystemExit)
        emit
        stat("#{END_MARK}#{Process.pid}") unless @broken
      rescue Exception # rubocop:disable Lint/RescueException
        nil
      end
    end

    # A forked child: a new process, its log starts here. The parent
    # emitted what it ran before the fork; Coverage's counts were cleared.
    def after_fork_in_child
      @finished = false
      @scopes_entered = 0
      stat("#{BEGIN_MARK}#{Process.pid}")
      stat("#{V2_MARK}#{Process.pid}")
      stat("#{REFS_MARK}#{Process.pid}")
      new_positions_scope
    end

    def note_read(path, mode = "r")
      return if @root.nil?
      return if path.is_a?(Integer) || path.is_a?(IO)

      if mode.is_a?(String)
        return unless mode.include?("r") || mode.include?("+")
      elsif mode.is_a?(Integer)
        return if (mode & (File::WRONLY | File::RDWR)) == File::WRONLY
      end
      path = path.to_path if path.respond_to?(:to_path)
      return unless path.is_a?(String)

      full = File.expand_path(path)
      @data_files[full] = true if full.end_with?(".rb") && full.start_with?(@root)
    rescue StandardError
      nil
    end

    def start
      root = ENV.fetch("STE_DEFINITIONS", "")
      return if !@root.nil? || !root.start_with?("/")
      return unless defined?(RUBY_ENGINE) && RUBY_ENGINE == "ruby"
      return unless Process.respond_to?(:_fork, true) # Ruby 3.1+

      begin
        require "coverage"
        return if Coverage.running? # someone started it before us: not ours

        @root = root.chomp("/") + "/"
        # The main script is compiled before this runs: Coverage never sees
        # it (main_script, at the first emission).
        script = $PROGRAM_NAME.to_s
        @main = if script == "-e" then :e
                elsif script == "-" || !File.file?(script) then :unseen
                else File.expand_path(script)
                end
        stat("#{BEGIN_MARK}#{Process.pid}")
        stat("#{V2_MARK}#{Process.pid}")
        stat("#{REFS_MARK}#{Process.pid}")
        install_hooks
        @inside = true
        begin
          Coverage.start(methods: true)
        ensure
          @inside = false
        end
        at_exit { SteDefs.finish }
      rescue Exception # rubocop:disable Lint/RescueException
        broken!
      end
    end

    private

    def install_hooks
      Process.singleton_class.prepend(ForkHook)
      Coverage.singleton_class.prepend(CoverageGuard)
      File.singleton_class.prepend(ReadHooks)
      IO.singleton_class.prepend(ReadHooks)
      File.prepend(FileNew)
      Kernel.prepend(KernelOpen)
      require_relative "ste_positions"
      install_position_hooks
      require_relative "ste_const_reads"
      Module.prepend(SteConstReads::Hooks)
      Kernel.prepend(SteConstReads::MethodHooks)
      SteConstReads.arity_errors(@root)
    end
  end

  module ForkHook
    def _fork
      SteDefs.flush
      pid = super
      SteDefs.after_fork_in_child if pid.zero?
      pid
    end

    # daemon(3) forks without _fork; it returns in the child (the parent
    # ended inside it without its `end`: its scopes fall back to file level).
    def daemon(*args)
      SteDefs.flush
      result = super
      SteDefs.after_fork_in_child
      result
    end
  end

  # The program's own use of Coverage: our counts are no longer the whole
  # story. What we have is emitted, the program gets Coverage as if we were
  # not there (ours is stopped before its setup/start).
  module CoverageGuard
    %i[setup start resume suspend result clear].each do |name|
      define_method(name) do |*args, **kw|
        unless SteDefs.inside?
          unless SteDefs.broken?
            SteDefs.flush
            SteDefs.broken!
            if %i[setup start].include?(name) && running?
              super_result = method(:result).super_method
              super_result&.call
            end
          end
        end
        super(*args, **kw)
      end
    end
  end

  module ReadHooks
    def read(path, *args, **kw)
      SteDefs.note_read(path)
      super
    end

    def binread(path, *args, **kw)
      SteDefs.note_read(path)
      super
    end

    def readlines(path, *args, **kw)
      SteDefs.note_read(path)
      super
    end

    def foreach(path, *args, **kw, &block)
      SteDefs.note_read(path)
      super
    end

    def open(path, *args, **kw, &block)
      SteDefs.note_read(path, args.first.nil? ? kw.fetch(:mode, "r") : args.first)
      super
    end

    def copy_stream(src, *args, **kw)
      SteDefs.note_read(src)
      super
    end
  end

  module FileNew
    def initialize(path, *args, **kw, &block)
      SteDefs.note_read(path, args.first.nil? ? kw.fetch(:mode, "r") : args.first)
      super
    end
  end

  module KernelOpen
    private

    def open(path, *args, **kw, &block)
      SteDefs.note_read(path, args.first.nil? ? kw.fetch(:mode, "r") : args.first) unless path.is_a?(String) && path.start_with?("|")
      super
    end
  end
end

SteDefs.start
