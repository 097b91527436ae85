# frozen_string_literal: true

# ste_positions.rb: which scopes' code read line numbers, for the
# definition tracker (ste_defs.rb, which loads this; docs/concepts.md,
# "Definitions", the move rule).
#
# A method's `unit` fingerprint is its text without its position
# (ste_fingerprint.rb): a method that only moved keeps it, and the tests
# that ran it are not selected for the move. Code can still see where a
# method is, and a test comparing what it sees can fail when the method
# moves. So every way Ruby hands out line numbers at run time is wrapped
# here (Module#prepend, calling the original; cheap, never raising, never
# changing a result). A read counts when what it shows is inside a method
# of a repository file (a frame whose label is a method's, a block or
# method whose code is): top-level and class-body code are module-level
# code, whose position no fingerprint has (the module rule's known
# limit), and other files do not move with the repository's. The first
# read in a scope of the lines of running code (frames, blocks) stats
# `/\x01ste-positions:<pid>.<n>`: ste makes that scope depend on the `at`
# view (text and position) of each unit recorded in it, and the tracker
# records there again every method that ran in the scope (ste_defs.rb,
# record). The first read of a definition's line, which needs no run
# (Method#source_location, a Method's inspect, ruby's warnings, code
# objects), stats `/\x01ste-code-lines:<pid>.<n>`: every unit of every
# file the scope loaded, with its place. <n> changes at each scope push
# and pop (and in a forked child), so each scope gets its own records.
#
# What reads positions (Ruby 3.1):
#   Kernel#caller, #caller_locations    the frames returned; the wrapper
#                                       adds a frame: it calls the original
#                                       one level deeper (a range: slices
#                                       the whole stack), so every form
#                                       returns what it would without it;
#   Exception#backtrace,                the frames, once set; full_message,
#     #backtrace_locations              the printer of an uncaught exception
#                                       (also at exit in a tracked child,
#                                       whose stderr its parent may read)
#                                       and of a dying thread all call
#                                       #backtrace once it is redefined (so
#                                       does `raise e`, right after calling
#                                       e.exception: that read is ruby's,
#                                       left out; a program's `e.exception`
#                                       then `e.backtrace` is left out too);
#   Proc, Binding #source_location,     where the code is;
#     Proc, Thread, Fiber #inspect,
#     #to_s
#   Method, UnboundMethod               a definition's line (code-lines);
#     #source_location, #inspect, #to_s
#   Warning.warn                        a message naming a line: Kernel#warn
#                                       with uplevel: (a frame), ruby's own
#                                       warnings (definitions: code-lines);
#   TracePoint#lineno, #inspect,        tracing;
#     Kernel#set_trace_func,
#     Thread#set_trace_func, #add_trace_func
#   RubyVM::InstructionSequence.of,     code objects with their lines
#     RubyVM::AbstractSyntaxTree.of     (code-lines).
# A C method's frame (each, tap) carries its caller's file and line: of
# frames on one line, the outermost says whose line it is. `__LINE__` is
# in the code itself: a unit whose text holds it keeps its position in its
# `unit` fingerprint (ste_fingerprint.rb). `__method__`, `__FILE__`,
# `__dir__` name no line.
#
# Not seen (a miss if a test compares what it shows of a moved method):
# Thread#backtrace and #backtrace_locations (on the current thread a
# wrapper's frame cannot be taken out of the Location objects), the
# `Kernel.caller` module function (not the usual private method),
# Exception#== (compares two backtraces without calling #backtrace; a pure
# move shifts the frames of one method alike),
# ObjectSpace.allocation_sourceline, Coverage's line counts (a program
# using Coverage is file level anyway).
#
# The test framework's own reads. A read whose caller is the framework's
# code (minitest, rspec-*: a file under a `minitest/` or `rspec/` folder or
# named minitest.rb, outside the repository) or ste's runner is not the
# test's:
#   - exception reads, Method reads, inspect and warnings: failure, error,
#     skip and pending reports and deprecations (a failed test is always
#     selected next time; a report changes no outcome) and minitest's
#     result of a test that has already run: ignored;
#   - caller/caller_locations: the framework notes or prints where its
#     caller is (RSpec, for each example, group and expectation; a test can
#     read that back: `RSpec.current_example.location`): counted by the
#     first frame past the framework's own, when it is in a method of a
#     repository file (a helper that defines examples);
#   - Proc#source_location (RSpec's example blocks): by the block's code,
#     like anyone's.
# Without that, every RSpec scope would read positions (RSpec calls
# `caller` for each example) and a move would select every spec that ran
# the method, as before. error_highlight (NameError#message) reads the
# raising frame to quote the expression's text and columns, not its line:
# ignored.

module SteDefs
  CALLER_LOCATIONS = ::Kernel.instance_method(:caller_locations)
  SOURCE_LOCATION = [Method, UnboundMethod, Proc, Binding].to_h { |k| [k, k.instance_method(:source_location)] }
  OWN_FILE = File.expand_path(__FILE__)
  INTEGRATIONS_DIR = File.dirname(OWN_FILE) + "/"
  FRAMEWORK_PATH = %r{/(?:minitest|rspec)(?:/|\.rb\z)}.freeze

  class << self
    # True while a read (of `target`: :positions, :code_lines, nil: either)
    # would be recorded: tracking, not recorded in this scope yet, not
    # inside a hook.
    def watching?(target = nil)
      return false if @root.nil? || @finished || @in_hook

      case target
      when :positions then !@positions_recorded
      when :code_lines then !@code_lines_recorded
      else !(@positions_recorded && @code_lines_recorded)
      end
    end

    # Code in this scope read the lines of running code. Recorded at the
    # next emission (ste_defs.rb: before a scope push or pop, a fork, the
    # end), with the methods that ran in this scope recorded in it again
    # (record): a hook may run inside ruby's raise, where IO must wait.
    def positions_read
      return if @root.nil? || @positions_recorded

      @positions_recorded = true
      @positions_pending = true
    end

    # Code in this scope read the line of code that need not have run.
    def code_lines_read
      return if @root.nil? || @code_lines_recorded

      @code_lines_recorded = true
      @code_lines_pending = true
    end

    # The reads noted since the last emission (ste_defs.rb, emit).
    def emit_positions
      if @positions_pending
        @positions_pending = false
        stat("#{POSITIONS_MARK}#{Process.pid}.#{@positions_n}")
        @scope_ran.each_key { |file, line| record(file, line) }
      end
      return unless @code_lines_pending

      @code_lines_pending = false
      stat("#{CODE_LINES_MARK}#{Process.pid}.#{@positions_n}")
    end

    # A new scope (after a push or pop: the flush before it emitted the
    # last one's), a forked child.
    def new_positions_scope
      emit_positions # (a scope change without a flush: late rather than lost)
      @positions_n += 1
      @positions_recorded = false
      @code_lines_recorded = false
      @scope_ran = {}
      @scope_recorded = {}
    end

    # A read seen by a hook: `kind` says what was read, `from` is the
    # Location of the hook's caller, `what` the object or value read.
    def note_positions(kind, from, what = nil)
      return unless watching?

      @in_hook = true
      begin
        case counts?(kind, from, what)
        when :positions then positions_read
        when :code_lines then code_lines_read
        end
      ensure
        @in_hook = false
      end
    rescue Exception # rubocop:disable Lint/RescueException -- never into the program
      nil
    end

    # The source location [path, line] of a Method, UnboundMethod, Proc or
    # Binding, without going through the hooks.
    def source_of(object)
      SOURCE_LOCATION.each { |klass, m| return m.bind_call(object) if object.is_a?(klass) }
      nil
    end

    # A repository file's path. A relative one may be (a script run as
    # `ruby test/x.rb`); ruby's own (<internal:...>) and eval's without a
    # file are not: their lines do not move with a repository file's.
    def repo_path?(path)
      return false unless path.is_a?(String)
      return path.start_with?(@root) if path.start_with?("/")

      !(path.start_with?("<internal:", "(eval") || path == "-e")
    end

    private

    # What a read can show of the units (see top): :positions (the lines
    # of running code: frames, a block), :code_lines (the line of code that
    # need not have run: a method's definition), nil (no unit's line).
    def counts?(kind, from, what)
      return nil if quoting?(from)

      target = case kind
               when :stack
                 shown = frames(what)
                 # The framework notes or prints where its caller is: the
                 # first frame past its own (RSpec's example locations, a
                 # deprecation).
                 shown = shown.drop_while { |path, _, _| path == OWN_FILE || framework_path?(path) }.first(1) if framework?(from)
                 :positions if shows_a_method?(shown)
               when :exception
                 :positions if !framework?(from) && shows_a_method?(frames(what))
               when :source, :inspect
                 method = what.is_a?(Method) || what.is_a?(UnboundMethod)
                 # The framework's: minitest's result of a test that ran,
                 # failure messages.
                 if (kind == :inspect || method) && framework?(from) then nil
                 elsif what.nil? then :positions # a Thread's or Fiber's block
                 elsif in_a_method?(what) then method ? :code_lines : :positions
                 end
               when :warning
                 # Kernel#warn (`what`: called from <internal:warning>)
                 # names a frame's line (uplevel:); ruby's own warnings name
                 # definitions' (method redefined, indentation).
                 what ? :positions : :code_lines unless framework?(from)
               when :code then :code_lines
               else :positions
               end
      return nil if (target == :positions && @positions_recorded) || (target == :code_lines && @code_lines_recorded)

      target
    end

    # error_highlight (NameError#message) reads the raising frame's location
    # and its code object to quote the expression's text and columns, not
    # its line number: a pure move leaves the message as it was.
    def quoting?(location)
      path = location && (location.absolute_path || location.path)
      path.is_a?(String) && !path.start_with?(@root) && path.include?("/error_highlight/")
    end

    # [path, line, base label] of each frame of a backtrace (Locations or
    # strings); an unreadable string counts as a method's frame.
    def frames(trace)
      return [] unless trace.is_a?(Array)

      trace.map do |f|
        next [f.absolute_path || f.path, f.lineno, f.base_label] if f.is_a?(Thread::Backtrace::Location)

        m = /\A(.*?):(\d+):in [`'](.*)'\z/.match(f.to_s)
        m ? [m[1], m[2].to_i, m[3].sub(/\A(?:(?:block|rescue|ensure)(?: \(\d+ levels\))? in )+/, "")] : ["?", 0, "?"]
      end
    end

    # True when a frame is in a method (not top-level, class-body code or
    # its blocks) of a repository file: a unit, whose move shows. A C
    # method's frame (each, instance_exec) has its caller's file and line
    # and its own name: of frames on one line, the outermost says whose
    # line it is.
    def shows_a_method?(frames)
      frames.each_with_index.any? do |(path, line, label), i|
        after = frames[i + 1]
        next false if after && after[1] == line && after[0] == path

        path != OWN_FILE && repo_path?(path) && method_label?(label)
      end
    end

    # Whether the code of a Proc, Method, UnboundMethod or Binding is in a
    # method of a repository file (a define_method block in a class body
    # is that body's code).
    def in_a_method?(object)
      location = source_of(object)
      return false unless location.is_a?(Array) && repo_path?(location[0])
      return true if object.is_a?(Binding)

      iseq = RubyVM::InstructionSequence.of(object)
      iseq.nil? || method_label?(iseq.base_label)
    rescue StandardError
      true
    end

    def framework?(location)
      !location.nil? && framework_path?(location.absolute_path || location.path)
    end

    def framework_path?(path)
      return false unless path.is_a?(String)
      return true if path.start_with?(INTEGRATIONS_DIR) && path != OWN_FILE

      path.start_with?("/") && !path.start_with?(@root) && FRAMEWORK_PATH.match?(path)
    end

    def method_label?(label)
      !label.is_a?(String) || !label.start_with?("<")
    end
  end

  # caller/caller_locations's arguments for the original called from the
  # hook, one frame deeper; nil for a range (the hook slices the stack).
  # Arguments the original rejects are passed unchanged: it raises the same.
  def self.deeper(args)
    args = args[0, 1] if args.size == 2 && args[1].nil?
    return [2] if args.empty?
    return args if args.size > 2

    level = args[0]
    return nil if args.size == 1 && level.is_a?(Range)

    level = level.to_int if !level.is_a?(Integer) && level.respond_to?(:to_int)
    return args unless level.is_a?(Integer) && level >= 0

    [level + 1, *args[1..]]
  end

  # Prepended to Kernel.
  module StackHooks
    private

    def caller(*args)
      deeper = SteDefs.deeper(args)
      result = deeper ? super(*deeper) : super(1)[args[0]]
      SteDefs.note_positions(:stack, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first, result) if SteDefs.watching?(:positions)
      result
    end

    def caller_locations(*args)
      deeper = SteDefs.deeper(args)
      result = deeper ? super(*deeper) : super(1)[args[0]]
      SteDefs.note_positions(:stack, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first, result) if SteDefs.watching?(:positions)
      result
    end

    def set_trace_func(*args)
      SteDefs.note_positions(:trace, nil) if SteDefs.watching?(:positions)
      super
    end
  end

  module ExceptionHooks
    # `raise e` (a bare `raise` too) calls e.exception, then ruby reads the
    # result's backtrace to see whether it has one: that read is ruby's,
    # not the program's (a re-raise in a rescue clause is common).
    def exception(*args)
      result = super
      Thread.current[:__ste_raising] = result if SteDefs.watching?(:positions)
      result
    end

    def backtrace
      if (raising = Thread.current[:__ste_raising])
        Thread.current[:__ste_raising] = nil
        return super if raising.equal?(self)
      end
      result = super
      SteDefs.note_positions(:exception, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first, result) if result && SteDefs.watching?(:positions)
      result
    end

    def backtrace_locations
      result = super
      SteDefs.note_positions(:exception, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first, result) if result && SteDefs.watching?(:positions)
      result
    end
  end

  # Method, UnboundMethod, Proc, Binding.
  module SourceHooks
    def source_location
      result = super
      if SteDefs.watching? && result.is_a?(Array)
        SteDefs.note_positions(:source, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first, self)
      end
      result
    end
  end

  # Method, UnboundMethod, Proc: "#<Proc:0x... file:line>".
  module InspectHooks
    def inspect
      SteDefs.note_positions(:inspect, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first, self) if SteDefs.watching?
      super
    end

    def to_s
      SteDefs.note_positions(:inspect, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first, self) if SteDefs.watching?
      super
    end
  end

  # Thread, Fiber: their block's file and line.
  module BlockInspectHooks
    def inspect
      SteDefs.note_positions(:inspect, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first) if SteDefs.watching?
      super
    end

    def to_s
      SteDefs.note_positions(:inspect, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first) if SteDefs.watching?
      super
    end
  end

  module ThreadTraceHooks
    def set_trace_func(*args)
      SteDefs.note_positions(:trace, nil) if SteDefs.watching?(:positions)
      super
    end

    def add_trace_func(*args)
      SteDefs.note_positions(:trace, nil) if SteDefs.watching?(:positions)
      super
    end
  end

  module TracePointHooks
    def lineno
      SteDefs.note_positions(:trace, nil) if SteDefs.watching?(:positions)
      super
    end

    def inspect
      SteDefs.note_positions(:trace, nil) if SteDefs.watching?(:positions)
      super
    end
  end

  # RubyVM::InstructionSequence.of, RubyVM::AbstractSyntaxTree.of.
  module CodeOfHooks
    def of(*args, **kw)
      result = super
      SteDefs.note_positions(:code, CALLER_LOCATIONS.bind_call(self, 2, 1)&.first) if result && SteDefs.watching?(:code_lines)
      result
    end
  end

  # Warning.warn: a message naming a line ("file:12: warning: ...").
  # ruby passes `category:` only to a warn that takes keywords (it looks at
  # the first method it finds, this one): an override below taking one
  # argument gets the message alone, as without the tracker.
  module WarningHooks
    def warn(message, *args, **kw)
      if SteDefs.watching? && message.is_a?(String) && message.match?(/:\d+:/)
        # Past Kernel#warn (ruby code in <internal:warning>).
        stack = CALLER_LOCATIONS.bind_call(self, 2, 4) || []
        internal = stack.first&.path.to_s.start_with?("<internal:")
        SteDefs.note_positions(:warning, stack.find { |l| !l.path.to_s.start_with?("<internal:") }, internal)
      end
      if !kw.empty? && args.empty?
        below = method(:warn).super_method
        return super(message) if below && below.arity == 1
      end
      super
    end
  end

  def self.install_position_hooks
    ::Kernel.prepend(StackHooks)
    ::Exception.prepend(ExceptionHooks)
    [::Method, ::UnboundMethod, ::Proc, ::Binding].each { |k| k.prepend(SourceHooks) }
    [::Method, ::UnboundMethod, ::Proc].each { |k| k.prepend(InspectHooks) }
    [::Thread, ::Fiber].each { |k| k.prepend(BlockInspectHooks) }
    ::Thread.prepend(ThreadTraceHooks)
    ::TracePoint.prepend(TracePointHooks)
    ::RubyVM::InstructionSequence.singleton_class.prepend(CodeOfHooks)
    ::RubyVM::AbstractSyntaxTree.singleton_class.prepend(CodeOfHooks)
    ::Warning.singleton_class.prepend(WarningHooks)
  end
end
