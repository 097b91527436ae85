# frozen_string_literal: true

# ste_const_reads.rb: which simple constants (ste_consts.rb) a Ruby
# process's code may have read, for ste_defs.rb (loaded by it; docs/
# concepts.md, "Definitions"). A simple constant's value is a part of its
# own (ste_fingerprint.rb's `const` lines), not module-level code: a test
# depends on it where code that ran names it. Records (stats of paths that
# never exist, made by ste_defs.rb's emission, once per process):
#
#   <abs file>/\x01ste-name:<Full::Name>  code that ran may read the
#                                         constant <file> names so;
#   <abs file>/\x01ste-namespace          any of <file>'s constants.
#   /\x01ste-ref:<Name>                   code that ran names <Name> (a last
#                                         segment, see below), whether or not a
#                                         loaded file binds it: a simple
#                                         constant added since is one it may
#                                         read (ste selects the tests that
#                                         loaded its file and named it);
#   <abs file>/\x01ste-name:<method>      (format 10 of the fingerprints)
#                                         code that ran holds the name of a
#                                         method <file> defines, without a
#                                         final ?, ! or =: it may read that
#                                         method's parameters (ste gives it
#                                         the `sig` part of each unit of
#                                         <file> so named);
#   /\x01ste-ref:*                        any name: Module#constants ran on a
#                                         module the loaded repository files
#                                         open, or one with such an ancestor,
#                                         Object or an anonymous one (its
#                                         answer holds the constants added
#                                         since), or the doubt below.
#
# What counts as naming (the names are last segments: `X` of `A::X`,
# matched against every constant named in every repository file the
# process loaded, whatever module it is in: a constant found through
# inheritance, an include or its module's alias is found too):
#   - the code of each method that ran (Coverage's method keys: the `def`
#     at that line in the file's syntax tree, blocks and nested defs
#     included): its constant references and constant-shaped string and
#     symbol literals (SteConsts.references);
#   - the module-level code of each repository file loaded (class bodies
#     run at load and may read another file's constants; blocks made at
#     load time, which may run later: `define_method`, `included do`);
#   - every identifier-shaped word starting with a capital in each file
#     outside the repository that was loaded (a gem's code that reads a
#     constant of the repository by name: its files are not parsed, their
#     words are enough);
#   - every constant name in the main script (`ruby test/x.rb`, which
#     Coverage does not see: all its methods count as run);
#   - names given at run time to Module#const_get, and the names
#     Module#constants returns (which a program may then read by any
#     means).
# The method names: the same code's every name a method could have (calls,
# `super`'s def, symbols, identifier-shaped strings, locals:
# SteConsts.references), the names given to Kernel#method,
# public_method, singleton_method, Module#instance_method and
# public_instance_method at run time (the ways to a Method, whose
# parameters and arity a program can read without calling it), and the
# method an ArgumentError was raised entering (a call that failed on
# arity, which Coverage does not count as a run: arity_errors), matched
# against the methods the loaded repository files define. Not the words
# of files outside the repository: their code reaches a method's
# parameters only through a call (which runs it or fails on arity) or a
# Method. Not seen: a C extension's rb_obj_method_arity on a name, with
# no call after it.
# Code given by -e: the words of the process's command line. Any doubt (a
# repository file that does not parse now, a script on stdin, a method
# that ran
# with neither a `def` nor a module-level block at its line: code made by
# eval) makes every loaded
# repository file's namespace a dependency. Not seen: a constant read
# only by code eval'd from a string built at run time whose name no code
# that ran holds.
require_relative "ste_consts"

module SteConstReads
  NAME = "\x01ste-name:"
  NAMESPACE = "\x01ste-namespace"
  REF = "/\x01ste-ref:"
  ANY_REF = "/\x01ste-ref:*"
  OWN_DIR = "#{File.dirname(File.expand_path(__FILE__))}/"
  WORD = /\b[A-Z]\w*/.freeze
  METHOD_WORD = /\b[A-Za-z_]\w*/.freeze

  @files = {} # repo file => [[[full, last]], {line => [names]}, [names], {block line => true}], or nil (unparsed)
  @new_files = [] # loaded since the last resolve
  @outside = {} # non-repo files scanned
  @index = {} # last name => [[file, full name]] of the loaded repo files
  @seen = {} # last names referenced so far in this process
  @fresh = {} # referenced since the last resolve, not seen before
  @methods = {} # method name (METHOD_NAME) => [file] of the loaded repo files defining one so
  @mseen = {} # method names code held so far in this process
  @mfresh = {} # ... since the last resolve, not seen before
  @recorded = {} # record paths stat'ed
  @doubt = false
  @any = false # Module#constants ran on a module the repository opens
  @listed = {}.compare_by_identity # modules whose constants were listed, not yet told

  class << self
    # A repository file whose module-level code ran (Coverage saw it).
    def loaded(file)
      return if @files.key?(file)

      analysis = analyze(file)
      @files[file] = analysis
      @new_files << file
      if analysis.nil?
        @doubt = true
      else
        note(analysis[2])
        mnote(analysis[6])
      end
    end

    # The process's main script, in the repository (ste_defs.rb's
    # main_script): Coverage says nothing of it, so each name it holds is
    # a use, its methods' too.
    def main_script(file)
      analysis = analyze(file)
      if analysis.nil?
        @doubt = true
      else
        note(analysis[2])
        analysis[1].each_value { |names| note(names) }
        mnote(analysis[6])
        analysis[5].each_value { |names| mnote(names) }
      end
    end

    # Code that cannot be read ran (a script on stdin).
    def doubt!
      @doubt = true
    end

    # Code given by -e: every constant-shaped word of the command line is a
    # name (its arguments hold the code); unreadable: doubt.
    def command_line
      line = File.binread("/proc/self/cmdline")
      note(line.scan(WORD).uniq)
      mnote(line.scan(METHOD_WORD).uniq)
    rescue StandardError
      @doubt = true
    end

    # A method of a loaded repository file whose `def` is at `line` ran.
    def ran(file, line)
      analysis = @files[file]
      return if analysis.nil? # @doubt already

      names = analysis[1][line]
      if names
        note(names)
        mnote(analysis[5][line])
      elsif !analysis[3].key?(line) # a module-level block's names are noted
        @doubt = true
      end
    end

    # A file outside the repository that was loaded (not ste's own).
    def outside(file)
      return if @outside.key?(file) || file.start_with?(OWN_DIR)

      @outside[file] = true
      note(File.binread(file).scan(WORD).uniq)
    rescue StandardError
      nil
    end

    # (format 10) A call that fails on arity raises ArgumentError before its
    # method runs, and Coverage does not count it: the method's parameters
    # mattered to code that may hold no word of its name (a gem's, a C
    # extension's). The ArgumentError's first frame is the method's own: a
    # TracePoint on raise gives its name at run time, however the call was
    # made. (Its backtrace is read through Exception's own method, not the
    # position hooks': no line was read by the program.)
    def arity_errors(root)
      locations = Exception.instance_method(:backtrace_locations)
      locations = locations.super_method while locations && locations.owner != Exception
      return if locations.nil?

      @arity_errors = TracePoint.new(:raise) do |tp|
        error = tp.raised_exception
        next unless error.is_a?(ArgumentError)

        first = locations.bind_call(error)&.first
        path = first && (first.absolute_path || first.path)
        dynamic_method(first.base_label) if path&.start_with?(root)
      rescue Exception # rubocop:disable Lint/RescueException -- never into the program
        nil
      end
      @arity_errors.enable
    end

    # Module#constants ran on `mod`: a constant added since to a module of
    # the repository among its ancestors (or at the top, for Object) is in
    # its answer. Told at the next resolve, when more files may be loaded.
    def listed(mod)
      @listed[mod] = true unless @any
    end

    # A name given at run time (const_get's argument, constants' answer).
    def dynamic(name)
      name = name.to_s
      last = name.include?(":") ? name.split("::").last : name
      @fresh[last] = true if last && !@seen.key?(last)
    rescue StandardError
      nil
    end

    # A method name given at run time (Kernel#method's argument...).
    def dynamic_method(name)
      m = name.to_s.match(SteConsts::METHOD_NAME)
      @mfresh[m[1]] = true if m && !@mseen.key?(m[1])
    rescue StandardError
      nil
    end

    # Records what the names seen so far may read, through `stat`.
    def resolve(stat)
      @new_files.each do |file|
        @files[file]&.[](0)&.each { |full, last| (@index[last] ||= []) << [file, full] }
        @files[file]&.[](7)&.each { |m| (@methods[m] ||= []) << file }
      end
      mfresh = @mfresh.keys
      @mfresh.clear
      mfresh.each do |m|
        @mseen[m] = true
        @methods[m]&.each { |file| record(stat, "#{file}/#{NAME}#{m}") }
      end
      @new_files.each do |file|
        @files[file]&.[](7)&.each { |m| record(stat, "#{file}/#{NAME}#{m}") if @mseen.key?(m) }
      end
      fresh = @fresh.keys
      @fresh.clear
      fresh.each do |name|
        @seen[name] = true
        record(stat, "#{REF}#{name}") if name.match?(/\A\w+\z/)
        @index[name]&.each { |file, full| record(stat, "#{file}/#{NAME}#{full}") }
      end
      @new_files.each do |file|
        @files[file]&.[](0)&.each { |full, last| record(stat, "#{file}/#{NAME}#{full}") if @seen.key?(last) }
      end
      @new_files.clear
      @files.each_key { |file| record(stat, "#{file}/#{NAMESPACE}") } if @doubt
      any_listed(@files.each_value.flat_map { |a| a ? a[4] : [] }) unless @listed.empty?
      record(stat, ANY_REF) if @doubt || @any
    end

    private

    # Whether a listed module is one the loaded repository files open (or
    # has one among its ancestors; Object: any top-level constant; a
    # module without a name: any).
    def any_listed(opened)
      opened = opened.to_h { |m| [m, true] }
      @listed.each_key do |mod|
        names = mod.ancestors.map { |a| Module.instance_method(:name).bind_call(a) }
        if mod.equal?(Object) || names.first.nil? || names.any? { |n| n && opened.key?(n) }
          @any = true
          break
        end
      end
      @listed.clear if @any
    end

    def note(names)
      names.each { |n| @fresh[n] = true unless @seen.key?(n) }
    end

    def mnote(names)
      names&.each { |n| @mfresh[n] = true unless @mseen.key?(n) }
    end

    def record(stat, path)
      return if @recorded.key?(path)

      @recorded[path] = true
      stat.call(path)
    end

    # [named constants [[full, last]], {def line => names}, module-level
    # names]; nil when the file does not parse (any more).
    def analyze(file)
      verbose = $VERBOSE
      $VERBOSE = nil # a parse's warnings are not the program's
      tree = RubyVM::AbstractSyntaxTree.parse_file(file)
      named = []
      SteConsts.each_named(tree.children[2]) { |full, _| named << [full, full.split("::").last] }
      methods, top, blocks, calls, calls_top, defined = SteConsts.references(tree)
      opened = []
      SteConsts.each_module(tree.children[2]) { |full| opened << full }
      [named, methods, top, blocks, opened, calls, calls_top, defined]
    rescue StandardError, SyntaxError
      nil
    ensure
      $VERBOSE = verbose
    end
  end

  # Names read at run time.
  module Hooks
    def const_get(name, *args)
      SteConstReads.dynamic(name)
      super
    end

    def const_defined?(name, *args)
      SteConstReads.dynamic(name)
      super
    end

    def const_source_location(name, *args)
      SteConstReads.dynamic(name)
      super
    end

    def constants(*args)
      names = super
      SteConstReads.listed(self)
      names.each { |n| SteConstReads.dynamic(n) }
      names
    end

    # (format 10) A method's parameters are seen through its Method or
    # UnboundMethod: the names these are given.
    def instance_method(name)
      SteConstReads.dynamic_method(name)
      super
    end

    def public_instance_method(name)
      SteConstReads.dynamic_method(name)
      super
    end
  end

  # Kernel's ways to a Method (format 10).
  module MethodHooks
    def method(name)
      SteConstReads.dynamic_method(name)
      super
    end

    def public_method(name)
      SteConstReads.dynamic_method(name)
      super
    end

    def singleton_method(name)
      SteConstReads.dynamic_method(name)
      super
    end
  end
end
