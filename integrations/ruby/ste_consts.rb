# frozen_string_literal: true

# ste_consts.rb: what ste_fingerprint.rb and ste_defs.rb both need to know
# of a Ruby file's constants (docs/concepts.md, "Definitions"): which
# constant assignments are named by the file's lexical nesting, which of
# them are *simple* (their value is a part of its own, `const` lines), and
# which constant names a method's code or the module-level code holds.
# Both sides run it on the same bytes, so the tracker's names are the
# fingerprinter's. It uses RubyVM::AbstractSyntaxTree only (built in): the
# tracker loads it into a test's process, which must see nothing new.
#
# A constant assignment is *named* when it is `NAME = value` directly in
# the file's body or directly in the body of a `class`/`module` named by a
# constant path that is itself named so (the units' rule: "Geo::LIMIT",
# "LIMIT" at the top). It is *simple* when, in addition, its value is a
# literal (LITERAL?: a string without interpolation, a symbol, a number,
# a regexp without interpolation (made as the file is parsed: one that
# does not compile is a SyntaxError, the file's), nil, true, false, an
# array or hash of literals, nested, each optionally `.freeze`d) or a
# *pure* expression of them (PURE?, fingerprint format 9: a range of
# literals, a string interpolating pure expressions, calls of the
# PURE_CALLS methods of the core classes on pure receivers with pure
# arguments, a block whose body is pure over its own plain parameters,
# `h[k] = v` in one: `%w[by for].map { |n| [n, n.to_sym] }.to_h.freeze`,
# `(100..199).to_a << 204`; no constant, no method of self, no local of
# the body around it, nothing that sets `$~`: it computes a value from its
# own text and touches nothing else; in a file with no `using`), and
# nothing else in the file may bind the name: no other
# assignment of that last name anywhere in the file (`X ||=`, a second
# `X =`, one in a block), no `const_set`/`remove_const` naming it.
# Anything else (`X = Foo.new`, `A::X = 1`, `X = 1 if c`, `class << self`
# constants) stays module-level code, as before. Unlike a literal, a pure
# expression can fail as the file loads (`[1].map { |x| x + "a" }`): the
# fingerprinter keeps one simple only when it computes (SIMPLE's
# `computes` argument; ste_fingerprint.rb evaluates it in a child process
# with limits). The tracker needs no such answer: it names every named
# constant (ste_const_reads.rb).
#
# References (REFERENCES): the last segment of every constant a piece of
# code names (`X`, `A::X`, `::X`, `defined?(X)`, `self.class::X`) and of
# every string or symbol literal shaped like a constant path
# (`const_get(:X)`, `"A::X"`): by the method whose `def` starts at a line,
# and for the module-level code (everything outside any def: class bodies,
# blocks passed at load time, `define_method` blocks). The tracker matches
# last segments against every named constant of the loaded files: a
# constant found through inheritance, an include or an alias of its module
# is still found (more names than read, never fewer).
module SteConsts
  Node = RubyVM::AbstractSyntaxTree::Node
  CONST_SHAPED = /\A(?:::)?[A-Z]\w*(?:::[A-Z]\w*)*\z/.freeze
  # A method's name as ste matches it (without a final ?, ! or =: `x=` is
  # called as `self.x = 1`, whose words hold `x`).
  METHOD_NAME = /\A([A-Za-z_]\w*)[?!=]?\z/.freeze
  # Calls whose constant-shaped arguments name no constant's value.
  NAMING_ONLY = %i[private_constant public_constant deprecate_constant autoload].freeze
  BINDING = %i[const_set remove_const].freeze
  # Methods of the core classes (Array, Hash, String, Symbol, Integer,
  # Float, Range) that compute a value and touch nothing outside it (none
  # sets `$~`, reads or prints): PURE? calls them on pure receivers only.
  PURE_CALLS = %i[
    freeze dup map collect flat_map collect_concat each_with_object each_with_index each_slice
    select filter reject filter_map partition group_by zip product to_a to_h to_s to_sym to_i to_f
    keys values invert transform_values transform_keys merge sort sort_by uniq reverse compact
    flatten first last min max sum count size length join downcase upcase capitalize swapcase
    strip lstrip rstrip chomp chars bytes ord chr succ pred abs tr include? key? with_index
    + - * / % ** | & << == != < > <= >= <=> !
  ].freeze

  module_function

  # "A::B" for a constant path node, nil otherwise.
  def const_path(node)
    return nil unless node.is_a?(Node)

    case node.type
    when :CONST then node.children[0].to_s
    when :COLON3 then node.children[0].to_s
    when :COLON2
      scope, name = node.children
      return name.to_s if scope.nil?

      prefix = const_path(scope)
      prefix && "#{prefix}::#{name}"
    end
  end

  def statements(body)
    return [] if body.nil?
    return body.children.compact if body.type == :BLOCK

    [body]
  end

  # Yields (full name, CDECL node) for each named constant assignment, in
  # file order.
  def each_named(body, prefix = nil, &block)
    statements(body).each do |node|
      case node.type
      when :CDECL
        name = node.children[0]
        yield(prefix.nil? ? name.to_s : "#{prefix}::#{name}", node) if name.is_a?(Symbol)
      when :CLASS, :MODULE
        path = const_path(node.children[0])
        next if path.nil?

        each_named(node.children.last.children[2], prefix.nil? ? path : "#{prefix}::#{path}", &block)
      end
    end
  end

  # Yields the full name of each class or module body named so (the
  # units' rule), in file order: where a simple constant may be added.
  def each_module(body, prefix = nil, &block)
    statements(body).each do |node|
      next unless %i[CLASS MODULE].include?(node.type)

      path = const_path(node.children[0])
      next if path.nil?

      full = prefix.nil? ? path : "#{prefix}::#{path}"
      yield full
      each_module(node.children.last.children[2], full, &block)
    end
  end

  # The value of a CDECL (its last child).
  def value(cdecl)
    cdecl.children.last
  end

  def literal?(node)
    return false unless node.is_a?(Node)

    case node.type
    when :STR, :NIL, :TRUE, :FALSE, :ZLIST then true
    when :LIT
      v = node.children[0]
      v.is_a?(Numeric) || v.is_a?(Symbol) || v.is_a?(String) || v.is_a?(Regexp)
    when :LIST
      node.children.all? { |c| c.nil? || literal?(c) }
    when :HASH
      list = node.children[0]
      list.nil? || (list.type == :LIST && list.children[0..-2].all? { |c| literal?(c) })
    when :CALL
      recv, mid, args = node.children
      mid == :freeze && args.nil? && literal?(recv)
    else false
    end
  end

  # A literal (LITERAL?), or an expression that computes a value from
  # literals alone (see the top). `block`: inside a block of the
  # expression, whose own parameters (DVAR) hold values it made.
  def pure?(node, block = false)
    return true if literal?(node)
    return false unless node.is_a?(Node)

    case node.type
    when :LIT then node.children[0].is_a?(Range) && literal_range?(node.children[0])
    when :DOT2, :DOT3, :LIST then node.children.all? { |c| c.nil? || pure?(c, block) }
    when :DVAR then block
    when :HASH
      list = node.children[0]
      list.nil? || (list.type == :LIST && list.children[0..-2].all? { |c| pure?(c, block) })
    when :DSTR then node.children[1..].all? { |c| c.nil? || pure?(c, block) }
    when :EVSTR then pure?(node.children[0], block)
    when :CALL, :OPCALL
      recv, mid, args = node.children
      PURE_CALLS.include?(mid) && pure?(recv, block) && (args.nil? || pure?(args, block))
    when :ATTRASGN
      recv, mid, args = node.children
      block && mid == :[]= && pure?(recv, block) && pure?(args, block)
    when :ITER
      call, scope = node.children
      call.is_a?(Node) && %i[CALL OPCALL].include?(call.type) && pure?(call, block) &&
        plain_block?(scope) && (scope.children[2].nil? || pure?(scope.children[2], true))
    when :BLOCK then block && node.children.all? { |c| pure?(c, block) }
    else false
    end
  end

  def literal_range?(range)
    [range.begin, range.end].all? { |v| v.nil? || v.is_a?(Numeric) || v.is_a?(String) }
  end

  # A block's SCOPE whose parameters are plain names (no defaults, no
  # destructuring, no keywords: nothing in them runs).
  def plain_block?(scope)
    return false unless scope.is_a?(Node) && scope.type == :SCOPE

    args = scope.children[1]
    return true if args.nil?

    _pre_num, pre_init, opt, _first_post, _post_num, post_init, _rest, kw, kwrest, blk = args.children
    [pre_init, opt, post_init, kw, kwrest, blk].all?(&:nil?)
  end

  # Whether the file refines anything (`using`): a refinement changes what
  # a core method does there.
  def refines?(tree)
    found = false
    walk(tree) { |n| found ||= n.type == :FCALL && n.children[0] == :using }
    found
  end

  # The last names that something in the tree other than one named
  # assignment may bind (see the top): every CDECL/OP_CDECL counted, plus
  # const_set/remove_const with a literal name.
  def rebound(tree)
    count = Hash.new(0)
    walk(tree) do |node|
      case node.type
      when :CDECL
        n = node.children[0]
        n = n.children.last if n.is_a?(Node) # A::X = ...
        count[n.to_s] += 1 if n.is_a?(Symbol)
      when :OP_CDECL
        n = node.children[0]
        count[n.children.last.to_s] += 2 if n.is_a?(Node) && n.children.last.is_a?(Symbol)
      when :CALL, :FCALL
        next unless BINDING.include?(node.type == :FCALL ? node.children[0] : node.children[1])

        args = node.type == :FCALL ? node.children[1] : node.children[2]
        first = args.is_a?(Node) && args.type == :LIST ? args.children[0] : nil
        count[shaped(first).to_s] += 2 if shaped(first)
      end
    end
    count.select { |_, n| n > 1 }.keys
  end

  # The simple constants: [[full name, CDECL node]], in file order. A pure
  # value that is no literal counts when `computes` (given the CDECLs of
  # such values, in file order) says it computes: [true/false, ...].
  def simple(tree, computes = nil)
    again = rebound(tree)
    candidates = []
    each_named(tree.children[2]) do |name, node|
      candidates << [name, node] unless again.include?(node.children[0].to_s)
    end
    literals = candidates.select { |_, node| literal?(value(node)) }
    pure = computes.nil? || refines?(tree) ? [] : candidates.select { |_, node| !literal?(value(node)) && pure?(value(node)) }
    ok = pure.empty? ? [] : computes.call(pure.map { |_, node| node })
    kept = literals + pure.each_with_index.select { |_, i| ok[i] == true }.map(&:first)
    candidates.select { |c| kept.include?(c) }
  end

  # The last segment of a literal shaped like a constant path, or nil.
  def shaped(node)
    return nil unless node.is_a?(Node)

    v = case node.type
        when :STR, :LIT then node.children[0]
        end
    v = v.to_s if v.is_a?(Symbol)
    # (A literal of bytes that are no text, "\xFF", names nothing: matching
    # it would raise, and the file's analysis would be lost to doubt.)
    return nil unless v.is_a?(String) && v.valid_encoding? && v.match?(CONST_SHAPED)

    v.split("::").last
  end

  def walk(node, &block)
    return unless node.is_a?(Node)

    yield node
    node.children.each { |c| walk(c, &block) }
  end

  # [{def line => [last names]}, [module-level last names], {line => true}
  # where a block of the module-level code starts, {def line => [method
  # names]}, [module-level method names]] (see the top). A def
  # inside a def counts for both (the outer one defines it). The block
  # lines: where Coverage may see a method that is no def (a block given
  # to define_method), whose names are the module-level code's. The
  # method names (format 10 of the fingerprints: a method's parameters are
  # its `sig` part) are every name the code holds that a method could have,
  # without a final ?, ! or = (METHOD_NAME): the methods it calls (a call,
  # `super`: its def's own name, an attribute assignment), its symbols and
  # identifier-shaped strings (`method(:area)`, `instance_method("area")`),
  # and its locals (more, never fewer). Last: the names of the methods the
  # file defines (its defs, anywhere), the same way.
  def references(tree)
    methods = Hash.new { |h, k| h[k] = [[], []] }
    top = [[], []]
    blocks = {}
    defined = []
    scan = lambda do |node, into|
      return unless node.is_a?(Node)

      if into.equal?(top) && %i[ITER LAMBDA].include?(node.type)
        blocks[node.first_lineno] = true
        node.children.each { |c| blocks[c.first_lineno] = true if c.is_a?(Node) && c.type == :SCOPE }
      end
      case node.type
      when :DEFN, :DEFS
        mine = methods[node.first_lineno]
        defined << node.children[node.type == :DEFS ? 1 : 0]
        node.children.each do |c|
          if c.is_a?(Symbol) || c.is_a?(String) then mine[1] << c
          else scan.call(c, mine)
          end
        end
        unless into.equal?(top)
          into[0].concat(mine[0])
          into[1].concat(mine[1])
        end
        return
      when :CONST, :COLON3 then into[0] << node.children[0].to_s
      when :COLON2 then into[0] << node.children[1].to_s
      when :STR, :LIT
        s = shaped(node)
        into[0] << s if s
        into[1] << node.children[0]
        return
      when :FCALL, :CALL
        mid = node.type == :FCALL ? node.children[0] : node.children[1]
        if NAMING_ONLY.include?(mid)
          # The receiver and other arguments are code; the literal names
          # are not read.
          scan.call(node.children[0], into) if node.type == :CALL
          args = node.type == :FCALL ? node.children[1] : node.children[2]
          if args.is_a?(Node) && args.type == :LIST
            args.children.each { |c| scan.call(c, into) unless c.is_a?(Node) && %i[STR LIT].include?(c.type) }
          else
            scan.call(args, into)
          end
          return
        end
      end
      node.children.each do |c|
        if c.is_a?(Symbol) || c.is_a?(String) then into[1] << c
        else scan.call(c, into)
        end
      end
    end
    scan.call(tree, top)
    [methods.transform_values { |m| m[0].uniq }, top[0].uniq, blocks,
     methods.transform_values { |m| method_names(m[1]) }, method_names(top[1]), method_names(defined)]
  end

  # The names a method could have among `values` (Symbols, Strings and
  # other literals' values), without a final ?, ! or =, once each.
  def method_names(values)
    values.uniq.filter_map { |v| METHOD_NAMES[v] }.uniq
  end

  # A value's method name (METHOD_NAME), or nil; computed once per value.
  METHOD_NAMES = Hash.new do |h, v|
    text = v.is_a?(Symbol) ? v.to_s : v
    m = text.is_a?(String) && text.valid_encoding? && text.match(METHOD_NAME)
    h[v.is_a?(String) ? v.dup.freeze : v] = m ? m[1].freeze : nil
  end
end
