# frozen_string_literal: true

# ste_fingerprint.rb: ste's fingerprints of Ruby definitions (docs/
# concepts.md, "Definitions"; the Ruby twin of integrations/python/
# ste_fingerprint.py, same protocol).
#
# Run by ste itself, never by a test: `ruby --disable=all
# ste_fingerprint.rb` (RUBYOPT and RUBYLIB removed from its environment) at
# record time and at select time (the changed files only). It loads nothing
# but ripper and digest from the standard library (and ste_consts.rb,
# beside it) and executes nothing of the files it reads: it parses them
# (RubyVM::AbstractSyntaxTree, Ripper) and compiles them without running
# them (RubyVM::InstructionSequence.compile: a file only the compiler
# rejects, such as a `break` outside a loop in a method, does not parse).
#
# Protocol. stdin: per file, one line with the byte count, then that many
# bytes. stdout, per file in order:
#
#     file <n>                              (n = 0, 1, ...)
#     error <one line>                      it does not parse
#   or
#     module <32 hex>                       the module-level fingerprint
#     unit <32 hex> <first> <last> <name>   one per definition: its text
#     at <32 hex>                           right after it: its text and
#                                           its position
#     const <32 hex> <name>                 one per simple constant: its
#                                           value and anchor
#     sig <32 hex> <name>                   one per unit whose name is an
#                                           identifier: its parameters
#                                           (format 10)
#     names <32 hex>                        the simple constants' names
#                                           in order (format 8)
#     end
# (indexer/include/ste/definitions.h reads it: an absent `at` line means
# the unit's hash, which then has the position.)
#
# A *definition* (unit) is a `def m` or `def self.m` statement directly in
# the file's body, directly in the body of a `class`/`module` that is
# itself directly in such a body (nesting qualifies), or directly in a
# `class << self` there; or such a def that is an argument of a call
# statement there: `private def m`, `protected def`, `public def`,
# `module_function def`, `private_class_method def self.m`, `memoize def
# m`, `obj.m def x`, nested (`private memoize def m`): a def's value is
# its name, the call gets that symbol; the method is defined as a plain
# def's, the call itself is module-level code; or such a def in a body of
# a statement there that runs where it stands: `if`/`elsif`/`else`,
# `unless`, `case`/`when`/`in`, `begin`/`rescue`/`else`/`ensure`, a call's
# block (`Point = Struct.new(:x) do`, `class_eval do`, `included do`): the
# def's body runs only when the method is called, the statement around it
# is module-level code (branches). A block assigned to a constant names
# its methods under it ("Geo::Point#norm"); any other keeps the enclosing
# name (a label: ste matches ran code to units by line). Names: "Geo::Polygon#area" (instance method),
# "Geo::Polygon.create" (singleton method, `def self.` or `class << self`),
# "helper" and "self.helper" in the file's body; "#<k>" is added to the
# k-th (k >= 2) repetition of a name; '%', '/' and control bytes of a name
# are %XX-escaped ("Vec#%2F" for `def /`). A class or module whose name is
# not a constant path (`class self::X`, `class expr::X`) makes no units.
# Definitions that share a line with another definition are not units
# (their code stays module-level). <first>..<last> are the lines of the
# `def` statement.
#
# The unit fingerprint (`unit`): the exact bytes of its lines (a comment
# or a blank inside it counts, and so do its lines' relative positions,
# which a pure move keeps), without its absolute position: a method that
# only moved (lines added or removed above it) keeps it. The `at`
# fingerprint: its first line and column and the same bytes: a move
# changes it. ste makes a scope depend on the `at` of the units it ran only
# when code in that scope read line numbers (caller, backtraces,
# source_location, inspect of a Proc or Method, warn with uplevel:...:
# ste_positions.rb says which and how); other tests are not selected for
# a move. A unit whose text holds `__LINE__` (the line is in the code
# itself: moved, it computes something else) keeps its position in its
# `unit` fingerprint too. (With EMIT_AT false, for a reader without `at`
# lines, the unit fingerprint is the `at` one: the protocol's meaning of
# an absent `at`.)
#
# The const fingerprint (`const`): a *simple constant*'s value
# (ste_consts.rb: `NAME = <literal>` directly in the file's, a class's or a
# module's body, a string, symbol, number, nil, true, false, or an array
# or hash of those, nested, optionally `.freeze`d, or (format 9) a pure
# value computed from such literals that `computes` evaluated without
# failure; bound nowhere else in the file), named like units ("Rack::Mime::MIME_TYPES", "LIMIT" at the
# top): the value's AST without positions and its tokens (the span after
# the `=`) and its anchor (format 8: how many other statements of its
# body come before it, simple constants not counted). The assignment
# itself (that the constant exists, its name) is no module-level code
# either (format 8): ste makes a test depend on the part where code that
# ran names it (ste_const_reads.rb), and selects for one added the tests
# that loaded the file and named its last segment (a constant of that
# name elsewhere, or none, may be what their code read; `ref` records).
# A value holding a heredoc (whose lines lie past the assignment) is not
# one: module-level code, as any other constant. (format 9) A
# `private_constant` naming only simple constants assigned above it in
# its body is folded into their parts (a mark in each; ANCHOR).
#
# The names fingerprint (`names`, format 8): the file's simple constants'
# names in order, each with its private mark, for the tests whose code
# listed a module's constants (Module#constants answers in that order,
# and without the private ones).
#
# The sig fingerprint (`sig`, format 10; SIG): a unit's parameters, named
# like the unit: the parameter node's AST without positions and the tokens
# from just past the method's name to the start of its body (the
# parenthesised list or bare parameters, an endless def's `=`). They are
# no module-level code: parameters matter only to a call of the method,
# which runs it (the tests that ran it depend on its unit, whose text
# holds them), and to code that reads them without a call (`method(:m)
# .arity`, `instance_method(name).parameters`, a C extension's
# rb_obj_method_arity): ste makes a test depend on the part where code that
# ran holds the method's name (ste_const_reads.rb: its calls, symbols,
# strings; a name given to Kernel#method or Module#instance_method at run
# time; a call that failed on arity, which Coverage does not count as a
# run). A unit whose
# name is no identifier (an operator, `[]`) or whose tokens are not the
# expected ones keeps its parameters in the module's fingerprint.
#
# The module fingerprint covers everything else:
#   - the AST of the file (node types and every child RubyVM::
#     AbstractSyntaxTree exposes: names, literals, constants, calls such as
#     include, attr_accessor, private, alias, define_method, their blocks)
#     without positions, each unit's `def` kept as its kind, receiver,
#     name and parameter node (arity, defaults, keywords, rest, block;
#     format 10: one marker instead when the unit has a `sig` part) with
#     its body (and local table) replaced by one marker, empty or not,
#     each simple constant's assignment and folded `private_constant`
#     left out;
#   - the token stream (Ripper.lex: type and text, no positions) of the
#     file outside the units' bodies, the simple constants' assignments
#     and the folded `private_constant` statements: a
#     unit's signature (`def`, `self.`,
#     the name, the parameters with their default values, unless they are
#     its `sig` part's; an endless
#     def's `=`) and its final `end`, and what the AST leaves out (regexp
#     flags of interpolated regexps, literal spelling); white space,
#     newlines (the AST has the statements) and comments are left out,
#     except magic comments where Ruby reads them (before the first token:
#     any comment naming coding, frozen_string_literal, warn_indent,
#     warn_past_scope or shareable_constant_value, or holding -*-; past
#     it: the last three, as Ruby spells them: MAGIC) and a #! first line;
#   - the bytes after __END__ (DATA).
# A unit's body, for the tokens, is everything from the end of its
# signature (after the parameter list's `)`; without parentheses, the
# first newline or `;` at bracket depth 0; an endless def: after its `=`)
# to its final `end` (an endless def: to its end), found from the def
# node's span and the tokens (hole). Not the span of the body node, which
# leaves out a leading `(`, the `begin`/`end` around a body wrapped in
# begin/rescue, a one-line def's `;` (issue 24).
# So a change confined to a unit's body, whatever its tokens, changes that
# unit only (and its parameters, its unit and its `sig` part); adding,
# removing or renaming a method, an operator's parameters, a constant other than a
# simple one (whose value, existence and place are its `const` line), an
# include, a
# visibility call, method_missing/respond_to_missing? (methods like the
# rest) all change the module's. Known limit, as for Python: the module
# fingerprint has no positions, so module-level code moved by a change in
# a body keeps its fingerprint (a test that depends on the line of
# module-level code, not of a method, is not selected for that).
#
# Each hash is SHA-256 truncated to 128 bits over a tag, the engine, Ruby's
# version and this format's version: another Ruby gives other fingerprints
# (every definition changes: file level, honest).

require "digest"
require "ripper"
require_relative "ste_consts"

module SteFingerprint
  # 2: bodies are the def's span past its signature (hole); 3: a unit's
  # hash is its text without its position, which is the `at` line's; 4:
  # a comment is code only where Ruby reads it as magic (MAGIC); 5: a
  # simple constant's value is its `const` line's, not the module's; 6:
  # defs in if/unless/case/begin bodies and in blocks are units (branches);
  # 7: a file only the compiler rejects does not parse; a regexp literal is a simple
  # constant's value (ste_consts.rb); 8: a simple constant's assignment is
  # no module-level code (its part holds its anchor; `names` lines); 9: a
  # pure value that computes is a simple constant's (ste_consts.rb), and a
  # `private_constant` of simple constants is their parts' (anchor); 10: a
  # unit's parameters are its `sig` part's, not the module's (SIG)
  FORMAT = 10
  EMIT_AT = true # false: no `at` lines, the unit's hash keeps its position (format 1 of the protocol)
  SALT = "ste-fingerprint/#{FORMAT} #{RUBY_ENGINE} #{RUBY_VERSION}"
  Node = RubyVM::AbstractSyntaxTree::Node
  # Magic comments (Ruby's parse.y): an encoding (`coding: x`, `coding=x`
  # anywhere in the comment: vim's `fileencoding=x`) only in the first
  # comment line, or the second after a `#!` one; frozen_string_literal
  # only before any token; shareable_constant_value (it affects the
  # constant assignments after it), warn_indent and warn_past_scope
  # anywhere, as a whole comment `# key: value` or in an Emacs `-*- ... -*-`
  # one. Comments before the first token are kept whenever they name one of
  # the keys or hold `-*-` (MAGIC, the loose test: no rule needed there);
  # past it, only the forms Ruby honours there (LATE_MAGIC): a comment that
  # merely says "encoding" in a method's documentation is not code.
  MAGIC = /coding|frozen[-_]string[-_]literal|warn[-_]indent|warn[-_]past[-_]scope|
           shareable[-_]constant[-_]value|-\*-/ix.freeze
  LATE_MAGIC = /\A\#\s*(?:[\w-]+\s*:\s*\S+\s*\z|.*-\*-.*-\*-)/mx.freeze
  LATE_KEYS = /shareable[-_]constant[-_]value|warn[-_]indent|warn[-_]past[-_]scope/i.freeze
  SKIPPED_TOKENS = %i[on_sp on_nl on_ignored_nl on_comment on_embdoc_beg on_embdoc on_embdoc_end
                      on_ignored_sp].freeze

  # sig: its parameters' token span (SIG), or nil; a unit has one when its
  # name is an identifier (SteConsts::METHOD_NAME, which the tracker's
  # names are matched by; an operator's parameters stay module-level code)
  Unit = Struct.new(:node, :name, :first, :last, :sig)

  module_function

  def digest(tag, text)
    d = Digest::SHA256.new
    d << SALT << "\0" << tag << "\0" << text
    d.hexdigest[0, 32]
  end

  def escape(name)
    name.b.gsub(%r{[\x00-\x1F%/\x7F]}n) { |c| format("%%%02X", c.ord) }
  end

  def collect(body, prefix, singleton, units)
    SteConsts.statements(body).each do |node|
      case node.type
      when :DEFN, :DEFS, :FCALL, :CALL, :QCALL
        definitions(node).each do |d|
          unit = definition(d, prefix, singleton)
          units << unit if unit
        end
      when :CLASS, :MODULE
        next if singleton

        path = SteConsts.const_path(node.children[0])
        next if path.nil?

        scope = node.children.last
        collect(scope.children[2], prefix.nil? ? path : "#{prefix}::#{path}", false, units)
      when :SCLASS
        next if singleton || prefix.nil? || node.children[0].type != :SELF

        collect(node.children[1].children[2], prefix, true, units)
      else
        branches(node).each { |inner, name| collect(inner, name ? qualify(prefix, name) : prefix, singleton, units) }
      end
    end
  end

  def qualify(prefix, name)
    prefix.nil? ? name.to_s : "#{prefix}::#{name}"
  end

  # The bodies inside a statement that runs where it stands, whose defs are
  # units like those directly in the body (a def's code runs only when the
  # method is called; the statement around it is module-level code):
  # `if`/`elsif`/`else`, `unless`, `case`/`when`, `begin`/`rescue`/`else`/
  # `ensure`, and the block of a call (`Struct.new(:a) do ... end`,
  # `class_eval do`, `included do`). [[body, name]]: name, a constant the
  # statement assigns the call's value to (`Point = Struct.new(:x) do`),
  # names the methods of its block ("M::Point#norm"); nil keeps the prefix.
  def branches(node)
    case node.type
    when :IF, :UNLESS then [[node.children[1], nil], [node.children[2], nil]]
    when :CASE, :CASE2, :CASE3 then branches(node.children.last)
    when :WHEN, :IN
      rest = node.children[2]
      [[node.children[1], nil]] + (rest.is_a?(Node) && %i[WHEN IN].include?(rest.type) ? branches(rest) : [[rest, nil]])
    when :BEGIN then [[node.children[0], nil]]
    when :RESCUE then [[node.children[0], nil]] + branches_of_rescue(node.children[1]) + [[node.children[2], nil]]
    when :ENSURE then [[node.children[0], nil], [node.children[1], nil]]
    when :ITER then block_body(node) ? [[block_body(node), nil]] : []
    when :CDECL
      value = node.children[1]
      name = node.children[0]
      return [] unless name.is_a?(Symbol) && value.is_a?(Node) && value.type == :ITER && block_body(value)

      [[block_body(value), name]]
    else []
    end
  end

  def branches_of_rescue(resbody)
    out = []
    while resbody.is_a?(Node) && resbody.type == :RESBODY
      out << [resbody.children[1], nil]
      resbody = resbody.children[2]
    end
    out
  end

  # The statements of a call's block (ITER: the call, then the block's
  # SCOPE), nil for a `for` loop or anything else.
  def block_body(iter)
    scope = iter.children[1]
    scope.is_a?(Node) && scope.type == :SCOPE ? scope.children[2] : nil
  end

  # The defs a statement makes: itself when it is a def; the defs among the
  # arguments of a call (`private def x`, `private_class_method def self.y`,
  # `memoize def z`, `obj.m def w`, nested: `private memoize def v`): a def
  # is an expression whose value is its name, the call gets that symbol.
  def definitions(node)
    return [node] if %i[DEFN DEFS].include?(node.type)

    args = node.type == :FCALL ? node.children[1] : node.children[2]
    return [] unless args.is_a?(Node) && args.type == :LIST

    args.children.compact.flat_map do |a|
      %i[DEFN DEFS FCALL CALL QCALL].include?(a.type) ? definitions(a) : []
    end
  end

  # A def's unit, named by the rule at the top; nil for `def obj.x` (obj
  # not self).
  def definition(node, prefix, singleton)
    if node.type == :DEFN
      name = if prefix.nil? then (singleton ? "self.#{node.children[0]}" : node.children[0].to_s)
             else "#{prefix}#{singleton ? '.' : '#'}#{node.children[0]}"
             end
      return Unit.new(node, name, node.first_lineno, node.last_lineno)
    end
    return nil unless node.children[0].type == :SELF

    name = prefix.nil? ? "self.#{node.children[1]}" : "#{prefix}.#{node.children[1]}"
    Unit.new(node, name, node.first_lineno, node.last_lineno)
  end

  # Node objects are made anew by each #children: a unit's node is known by
  # its type and span.
  def key(node)
    [node.type, node.first_lineno, node.first_column, node.last_lineno, node.last_column]
  end

  def dump(node, stubs, out)
    unless node.is_a?(Node)
      out << node.inspect << "\0"
      return
    end
    # (format 8) A simple constant's assignment is no module-level code:
    # its value and anchor are its `const` part, that it exists the tests'
    # that named it (ref records). (format 9) Nor a `private_constant` of
    # simple constants only (anchor): their parts hold it.
    return if node.type == :CDECL && stubs[key(node)]
    return if stubs[key(node)] == :private

    if (stub = stubs[key(node)])
      scope = node.children.last
      out << "(" << node.type.to_s << " "
      dump(node.children[0], stubs, out) if node.type == :DEFS
      dump(node.type == :DEFS ? node.children[1] : node.children[0], stubs, out)
      # The parameters: (format 10) a unit's `sig` part when it has one.
      if stub.is_a?(Unit) && stub.sig
        out << "ste:sig\0"
      else
        dump(scope.children[1], stubs, out)
      end
      out << "ste:body)"
      return
    end
    out << "(" << node.type.to_s << " "
    node.children.each { |c| dump(c, stubs, out) }
    out << ")"
  end

  OPENING = %i[on_lparen on_lbracket on_lbrace on_tlambeg on_embexpr_beg].freeze
  CLOSING = %i[on_rparen on_rbracket on_rbrace on_embexpr_end].freeze
  BLANK = %i[on_sp on_ignored_sp on_comment].freeze

  # Appends to `text` the tokens (type and text) at positions in [from, to),
  # white space and comments left out. (Ripper.lex answers in position
  # order: the span's first token is found by a binary search.)
  def span_tokens(lexed, from, to, text)
    i = lexed.bsearch_index { |(pos, _, _, _)| (pos <=> from) >= 0 }
    return text if i.nil?

    lexed[i..].each do |(pos, type, tok, _state)|
      break if (pos <=> to) >= 0
      next if SKIPPED_TOKENS.include?(type)

      text << type.to_s << " " << tok << "\0"
    end
    text
  end

  # The index of the first token at or after i that is not white space.
  def skip_blank(lexed, i)
    i += 1 while i < lexed.size && BLANK.include?(lexed[i][1])
    i
  end

  # The body of a unit's `def` as a token span [from, to, params]: from just after
  # its signature to its final `end` (an endless def: to its end). The
  # signature is `def`, `self.` and the name, then either a parenthesised
  # parameter list (up to its `)`) or bare parameters (up to the first
  # newline or `;` at bracket depth 0); an endless def's ends at its `=`.
  # `params` is where the tokens past the name begin: [params, from) is the
  # parameter list (empty without one), an endless def's `=` included.
  # The body node's own span is not the body: a leading `(`, the
  # `begin`/`end` around a rescue, a heredoc's lines after the last node,
  # the `;` of a one-line def lie outside it. nil when the tokens are not
  # the expected ones (the whole def then stays module-level: every test
  # that loaded the file is selected for an edit in it, never fewer).
  def hole(node, lexed, at)
    i = at[[node.first_lineno, node.first_column]]
    return nil if i.nil? || lexed[i][1] != :on_kw || lexed[i][2] != "def"

    stop = [node.last_lineno, node.last_column]
    i = skip_blank(lexed, i + 1)
    if node.type == :DEFS # `self` and `.` (or `::`) before the name
      i = skip_blank(lexed, skip_blank(lexed, i + 1) + 1)
    end
    i = skip_blank(lexed, i + 1) # past the name
    return nil if i >= lexed.size

    params = lexed[i][0]

    depth = 0
    endless = false
    if lexed[i][1] == :on_lparen
      i += 1
      while i < lexed.size && (depth.positive? || lexed[i][1] != :on_rparen)
        depth += 1 if OPENING.include?(lexed[i][1])
        depth -= 1 if CLOSING.include?(lexed[i][1])
        i += 1
      end
      return nil if i >= lexed.size

      after = skip_blank(lexed, i + 1)
      endless = after < lexed.size && lexed[after][1] == :on_op && lexed[after][2] == "="
      i = after if endless
      line, column = lexed[i][0]
      from = [line, column + lexed[i][2].bytesize]
    elsif lexed[i][1] == :on_op && lexed[i][2] == "="
      endless = true
      line, column = lexed[i][0]
      from = [line, column + 1]
    else
      while i < lexed.size && (depth.positive? || !%i[on_nl on_semicolon].include?(lexed[i][1]))
        return nil if (lexed[i][0] <=> stop) >= 0

        depth += 1 if OPENING.include?(lexed[i][1])
        depth -= 1 if CLOSING.include?(lexed[i][1])
        i += 1
      end
      return nil if i >= lexed.size

      from = lexed[i][0]
    end
    return nil if (from <=> stop).positive?

    return [from, stop, params] if endless

    to = [node.last_lineno, node.last_column - 3]
    last = at[to]
    return nil if last.nil? || lexed[last][1] != :on_kw || lexed[last][2] != "end"

    [from, to, params]
  end

  # Whether a comment token is code (MAGIC, LATE_MAGIC): a magic comment
  # where Ruby honours one, or a `#!` first line.
  def magic?(text, pos, token_seen)
    return true if pos == [1, 0] && text.start_with?("#!")
    return text.match?(MAGIC) unless token_seen

    text.match?(LATE_MAGIC) && text.match?(LATE_KEYS)
  end

  def fingerprint(source)
    tree = RubyVM::AbstractSyntaxTree.parse(source)
    # What only the compiler rejects (`break`, `next`, `redo` or `retry`
    # where they cannot go: "Invalid break") the parser accepts, and then
    # no `require` can load the file: it does not parse either. Compiled,
    # never run.
    RubyVM::InstructionSequence.compile(source)
    lines = source.lines
    units = []
    collect(tree.children[2], nil, false, units)
    units.sort_by! { |u| [u.first, u.last] } # (collect's order is the file's; kept whatever a node's children's)
    # Units sharing a line with another unit stay module-level code.
    shared = {}
    units.each_cons(2) do |a, b|
      next if a.last < b.first

      shared[a] = shared[b] = true
    end
    units.reject! { |u| shared[u] }
    seen = Hash.new(0)
    out_units = units.map do |u|
      seen[u.name] += 1
      name = seen[u.name] > 1 ? "#{u.name}##{seen[u.name]}" : u.name
      text = lines[(u.first - 1)..(u.last - 1)].join
      placed = "#{u.first}:#{u.node.first_column}\n#{text}"
      # __LINE__ is the absolute line in the code itself: moved, the
      # method computes something else.
      # Without `at` lines (EMIT_AT false) the unit's hash keeps its
      # position: an absent `at` means the unit's hash (the protocol).
      [digest("unit", !EMIT_AT || text.include?("__LINE__") ? placed : text), digest("at", placed), u.first, u.last,
       escape(name)]
    end
    lexed = Ripper.lex(source)
    at = {}
    lexed.each_with_index { |(pos, _type, _text, _state), i| at[pos] ||= i }
    computes = ->(nodes) { computes(nodes.map { |n| value_text(n, source, lexed, at) }, frozen_literals?(lexed)) }
    consts = SteConsts.simple(tree, computes).filter_map do |name, node|
      span = value_hole(node, lexed, at)
      span && [name, node, span]
    end
    # (format 10) A unit's parameters are its `sig` part (SIG) when its
    # name is an identifier and its tokens are the expected ones.
    spans = units.to_h { |u| [u, hole(u.node, lexed, at)] }.compare_by_identity
    units.each do |u|
      span = spans[u]
      method = u.node.type == :DEFS ? u.node.children[1] : u.node.children[0]
      u.sig = [span[2], span[0]] if span && method.to_s.match?(SteConsts::METHOD_NAME)
    end
    stubs = units.to_h { |u| [key(u.node), u] }
    consts.each { |_, node, _| stubs[key(node)] = true }
    anchors = {}
    privates = {} # key of a simple constant's CDECL => its folded `private_constant`'s anchor
    folded = []
    anchor(tree.children[2], stubs, anchors, privates, folded)
    ast = +""
    dump(tree, stubs, ast)
    # Tokens outside the bodies and the constants' values: [line, column]
    # in [first, last).
    holes = units.filter_map { |u| spans[u] && [u.sig ? u.sig[0] : spans[u][0], spans[u][1]] } +
            (consts.map { |_, node, _| node } + folded).map do |node|
              [[node.first_lineno, node.first_column], [node.last_lineno, node.last_column]]
            end
    tokens = +""
    end_line = nil
    token_seen = false
    lexed.each do |(pos, type, text, _state)|
      if type == :on___end__
        end_line = pos[0]
        break
      end
      if type == :on_comment
        next unless magic?(text, pos, token_seen)
      elsif SKIPPED_TOKENS.include?(type)
        next
      else
        token_seen = true
      end
      next if holes.any? { |from, to| (pos <=> from) >= 0 && (pos <=> to).negative? }

      tokens << type.to_s << " " << text << "\0"
    end
    data = end_line ? lines[end_line..]&.join.to_s : ""
    module_text = +"ast\0" << ast << "\0tokens\0" << tokens << "\0data\0" << (end_line ? "1" : "0") << data
    out_consts = consts.map do |name, node, (from, to)|
      text = +""
      dump(SteConsts.value(node), {}, text)
      text << "\0"
      span_tokens(lexed, from, to, text)
      text << "\0anchor\0" << anchors.fetch(key(node)).to_s
      text << "\0private\0" << privates[key(node)].to_s if privates.key?(key(node))
      [digest("const", text), escape(name)]
    end
    out_sigs = units.each_with_index.filter_map do |u, i|
      next unless u.sig

      text = +""
      dump(u.node.children.last.children[1], {}, text)
      text << "\0"
      span_tokens(lexed, u.sig[0], u.sig[1], text)
      [digest("sig", text), out_units[i][4]]
    end
    # (Module#constants leaves private ones out: their mark is in the order.)
    names = digest("names", consts.map { |name, node, _| privates.key?(key(node)) ? "#{name} private" : name }.join("\0"))
    [digest("module", module_text), out_units, out_consts, names, out_sigs]
  end

  # Each simple constant's anchor (format 8): how many other statements
  # of its body (the file's, a class's or a module's) come before it,
  # simple constants not counted. Code of that body that runs as the file
  # loads and reads it fails before it and works after it: moved past
  # such code, the constant's part changes. Another constant added or
  # removed before it moves no anchor.
  #
  # (format 9) In the same walk, the `private_constant :A, :B` statements
  # whose names are all simple constants assigned above them in their body
  # are folded (`folded`, marked :private in `stubs`): no module-level
  # code, no statement counted by anchors; each of those constants gets
  # the statement's own anchor in `privates` (load-time code that reads
  # `Mod::A` works before it and fails after it). A test that reads one of
  # them from outside (`Mod::A`) named it and depends on its part; one
  # that listed constants, on the order (`names`), which holds the marks.
  # Any other (a name not simple, not yet assigned: NameError as the file
  # loads) stays module-level code.
  def anchor(body, stubs, anchors, privates, folded)
    others = 0
    assigned = {}
    SteConsts.statements(body).each do |node|
      if node.type == :CDECL && stubs[key(node)] == true
        anchors[key(node)] = others
        assigned[node.children[0]] = node
        next
      end
      if (names = private_names(node)) && names.all? { |n| assigned.key?(n) }
        names.each { |n| privates[key(assigned[n])] = others }
        stubs[key(node)] = :private
        folded << node
        next
      end
      others += 1
      next unless %i[CLASS MODULE].include?(node.type) && SteConsts.const_path(node.children[0])

      anchor(node.children.last.children[2], stubs, anchors, privates, folded)
    end
  end

  # The names of `private_constant :A, :B` (symbols only), or nil.
  def private_names(node)
    return nil unless node.type == :FCALL && node.children[0] == :private_constant

    args = node.children[1]
    syms = args.is_a?(Node) && args.type == :LIST ? args.children.compact : []
    names = syms.map { |a| a.type == :LIT && a.children[0].is_a?(Symbol) ? a.children[0] : nil }
    names.empty? || names.include?(nil) ? nil : names
  end

  # (format 9) Whether each of `texts`, pure values (ste_consts.rb), computes
  # without failing: [true/false, ...]. Evaluated, once per file, in a
  # child process that can touch nothing: limited to 2 s of CPU and 1 GiB,
  # its standard streams unused (the parent's answers are flushed before
  # the fork, and the child leaves by exit!). A value that raises (a
  # TypeError as the file loads would fail every test that loads it), or a
  # child that dies or exceeds a limit: false, and the constant stays
  # module-level code. A nil text (its span not found): false.
  def computes(texts, frozen)
    return [] if texts.empty?

    $stdout.flush
    reader, writer = IO.pipe
    pid = fork do
      reader.close
      Process.setrlimit(Process::RLIMIT_CPU, 2)
      Process.setrlimit(Process::RLIMIT_AS, 1 << 30)
      answers = texts.map do |text|
        next "0" if text.nil?

        RubyVM::InstructionSequence.compile(text, "(ste)", nil, 1, frozen_string_literal: frozen).eval
        "1"
      rescue Exception # rubocop:disable Lint/RescueException -- any failure: not simple
        "0"
      end
      writer.write(answers.join)
      writer.close
      exit!(0)
    end
    writer.close
    answers = reader.read
    reader.close
    Process.wait(pid)
    ok = $?.success? && answers.size == texts.size
    texts.each_index.map { |i| ok && answers[i] == "1" }
  rescue SystemCallError, NotImplementedError, IOError
    texts.map { false }
  end

  # The source text of a simple constant's value (value_hole's span), or nil.
  def value_text(node, source, lexed, at)
    span = value_hole(node, lexed, at)
    return nil if span.nil?

    (from_line, from_col), (to_line, to_col) = span
    lines = source.b.lines
    return nil if to_line > lines.size

    text = if from_line == to_line
             lines[from_line - 1].byteslice(from_col...to_col)
           else
             lines[from_line - 1].byteslice(from_col..) + lines[from_line...(to_line - 1)].join +
               lines[to_line - 1].byteslice(0...to_col)
           end
    text.force_encoding(Encoding::UTF_8)
  end

  # Whether string literals are frozen in the file: a frozen_string_literal
  # magic comment before its first token.
  def frozen_literals?(lexed)
    lexed.each do |(_pos, type, text, _state)|
      if type == :on_comment
        m = text.match(/frozen[-_]string[-_]literal\s*:\s*(\w+)/i)
        return m[1].casecmp?("true") if m
      elsif !SKIPPED_TOKENS.include?(type)
        return false
      end
    end
    false
  end

  # A simple constant's value as a token span [from, to): from just after
  # the `=` that follows its name to the end of the assignment (a `.freeze`
  # included). nil when the tokens are not the expected ones or the value
  # holds a heredoc (whose lines lie past the assignment's span): the
  # constant then stays module-level code.
  def value_hole(node, lexed, at)
    i = at[[node.first_lineno, node.first_column]]
    return nil if i.nil? || lexed[i][1] != :on_const || lexed[i][2] != node.children[0].to_s

    i = skip_blank(lexed, i + 1)
    return nil if i >= lexed.size || lexed[i][1] != :on_op || lexed[i][2] != "="

    line, column = lexed[i][0]
    from = [line, column + 1]
    to = [node.last_lineno, node.last_column]
    return nil unless (from <=> to).negative?

    inside = lexed.select { |(pos, _, _, _)| (pos <=> from) >= 0 && (pos <=> to).negative? }
    return nil if inside.empty? || inside.any? { |(_, type, _, _)| type == :on_heredoc_beg }

    [from, to]
  end

  def main
    input = $stdin.binmode
    out = $stdout
    n = 0
    while (line = input.gets)
      size = Integer(line, 10)
      source = input.read(size) || +""
      out.write("file #{n}\n")
      n += 1
      if source.bytesize != size
        out.write("error truncated input\n")
        break
      end
      source.force_encoding(Encoding::UTF_8)
      begin
        raise SyntaxError, "invalid UTF-8" unless source.valid_encoding?

        module_digest, units, consts, names, sigs = fingerprint(source)
      rescue SyntaxError, ArgumentError, EncodingError, SystemStackError, NoMemoryError => e
        message = "#{e.class}: #{e.message}".split.join(" ")
        out.write("error #{message.empty? ? 'unparseable' : message.b}\n")
        out.flush
        next
      end
      out.write("module #{module_digest}\n")
      units.each do |d, at, first, last, name|
        out.write("unit #{d} #{first} #{last} #{name}\n")
        out.write("at #{at}\n") if EMIT_AT
      end
      consts.each { |d, name| out.write("const #{d} #{name}\n") }
      sigs.each { |d, name| out.write("sig #{d} #{name}\n") }
      out.write("names #{names}\n")
      out.write("end\n")
      out.flush # each answer as it is made (ste may keep the process)
    end
    out.flush
  end
end

SteFingerprint.main if $PROGRAM_NAME == __FILE__
