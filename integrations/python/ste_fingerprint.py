"""ste's fingerprints of Python definitions (docs/concepts.md, "Definitions").

Run by ste itself, never by a test: `python3 -I -S -B ste_fingerprint.py`
at record time (to name what each test ran) and at select time (for the
changed files only). It imports nothing but the standard library and
executes nothing of the files it reads: it parses them with `ast`.

Protocol. stdin: per file, one line with the byte count, then that many
bytes (the file's content, as ste hashed it). stdout, per file in order:

    file <n>                        (n = 0, 1, ... the file's position)
    error <one line>                it does not parse: no fingerprints
  or
    module <32 hex>                 the module-level fingerprint
    unit <32 hex> <first> <last> <name>   one per definition: its text
    at <32 hex>                     (after its unit) its text and place
    doc <32 hex> <line> <name>      one per docstring of a module, class or unit
    const <32 hex> <name>           one per simple top-level constant
    sig <32 hex> <name>             one per plain top-level function: its
                                    header (the parameters, their defaults
                                    and annotations)
    names <32 hex>                  which simple constants and plain
                                    functions it binds, in order (optional
                                    in the protocol: the Ruby script has
                                    none)
    import <32 hex> <name> <level> <module> <attr> [stdlib]
                                    one per name a from-import binds that
                                    only binds it (format 6, "imports"):
                                    `from <level dots><module> import
                                    <attr> as <name>`, its part; `stdlib`:
                                    the standard library's <module> binds
                                    <attr> (format 10, "imports")
    full <32 hex>                   the module-level fingerprint with those
                                    imports in it (optional, as the rest)
    stdlib <32 hex>                 the module-level fingerprint with only
                                    the `stdlib` ones left out (when there
                                    are both kinds; optional)
    binds <name> ...                the names the module's top-level code
                                    binds however it runs (optional)
    end

Each file's answer is flushed as it is made: ste keeps one process for
many small requests (a record's files, test by test), ending it by
closing stdin. (An `at` line is optional in the protocol: without one, a unit's place is
its text's fingerprint; integrations/ruby/ste_fingerprint.rb speaks the
same protocol.)

A *definition* (unit) is a `def` or `async def` statement directly in the
module's body or directly in the body of a class that is itself a unit's
sibling there (classes nest: "Outer.Inner.method"), or in a block of a
compound statement there (`if`/`elif`/`else`, `try`/`except`/`else`/
`finally`, `with`, `for`, `while`, `match`: a fallback defined when an
import fails, a def per platform); the statement around it is module-level
code, the def's body runs only when the function is called. Its name is
its qualified name, with "#<k>" added to the k-th (k >= 2) repetition of a
name in the file (a property's setter, the `else:` branch's def of the same
name, a class defined twice). <first> is its first line (the first decorator's),
<last> its last; the code objects that start in [first, last] are its.

What goes where (each is a BLAKE2b-128 over a tag, the interpreter's name
and version, and this format's version: another interpreter gives other
fingerprints, every definition changes: file level, honest):

(A "dump" is _text's: what ast.dump shows, each node's class and fields
in order, made in one pass.)

- unit: the statement's dump WITHOUT line and column attributes, its
  docstring replaced by a marker. A body edit changes it; a comment, a
  blank line, a function that only moved, or a docstring edit does not.
- at: the same dump WITH line and column attributes: it changes when the
  unit's code or any of its positions does (a line added above it moves
  it). Tracebacks, warnings, log records, `inspect` and `f_lineno` expose
  positions; ste makes a test depend on `at` only where its tracker saw
  positions read (ste_site/ste_defs.py).
- doc: a docstring's text (the first statement of a module, class or unit
  body when it is a string), with <line> the first line of the class or
  unit it belongs to (its first decorator's), 0 and "<module>" for the
  module's. Its text is read only through `__doc__` (the tracker records
  who uses it); whether there is one, and whether it is empty, stay
  module-level.
- const: the value of a *simple constant*: `NAME = <literal>` (or
  `NAME: T = <literal>`) directly in the module's body, where the literal
  is a constant, a signed number, or a tuple, list, set or dict of
  literals (a set's members and a dict's keys hashable: constants,
  signed numbers and tuples of those; format 7; a lambda whose defaults
  are literals among a tuple's, list's or dict's values, format 8: the
  dispatch tables of printers and parsers), or a compiled pattern (format 6): `re.compile(<str or bytes>[,
  <flags>])`, `re` bound once by `import re` (or `as`) before it, the
  flags re's own or a number, that compiles here without a warning (the
  same interpreter version as the tests': fingerprints are salted with
  it), and NAME is bound nowhere else in the module's scope (no other
  assignment, import, def, class, loop or with target, `del`, `global
  NAME` anywhere, walrus). Dunder names are not constants (`__all__` and
  the like are read by the import system), except `__version__` and
  `__version_info__`. Which tests use it: those whose code names it (the
  tracker's name records). An annotated one's annotation is module-level
  code (format 7): the module evaluates it as it loads, which may fail
  (`X: Missing = 1` is a NameError) or run code, and keeps it in
  `__annotations__`, which `typing.get_type_hints` reads unseen; so the
  statement stays in the module's fingerprint with its value a marker,
  and one added or removed is module-level, as a non-constant is.
- sig: the header of a *plain function*: a `def` directly in the module's
  body, without decorators (a decorator runs at import and may read the
  header: functools.singledispatch, a registry), not a dunder (a module's
  `__getattr__` is the import system's), bound nowhere else in the
  module's scope (as a constant), without type parameters, whose header
  cannot fail or do anything as the module runs the `def`: each default is
  a literal (as a constant's), a name bound before it by a statement
  directly in the module's body (an import, a def, a class, an
  assignment) and never deleted, one of the builtins in _BUILTINS, a
  container of those, or a lambda whose own defaults are those; each
  annotation too, unless `from __future__ import annotations` keeps them
  unevaluated. Its header is then no code the module runs: a changed
  default, parameter or annotation is a change of the unit (the tests that
  ran it) and of the sig part (the tests whose code names the function:
  `inspect.signature(f)`, `f.__defaults__`; a module-level `register(f)`
  names it in every importer). A method's header stays module-level: its
  class's metaclass or `__init_subclass__` may read it as the class is made.
- module: the module's ast.dump without attributes, after each unit's body
  is replaced by whether it has a docstring and whether it yields or
  awaits (inspect.isgeneratorfunction and the like are read without
  running it), each docstring by a marker, each simple constant's and
  plain function's statement left out (see "names"), and the body of
  each `if TYPE_CHECKING:` directly in the module's body by a marker (it
  never runs: TYPE_CHECKING bound only by `from typing import
  TYPE_CHECKING`, typing_extensions', or `TYPE_CHECKING = False`, or
  named as `typing.TYPE_CHECKING` with typing imported as such; its
  `else:` runs and stays); format 9: also directly in the body of a
  class that is directly in the module's body or in such a class's
  (a stub's overloads of a method), unless that body binds the name
  itself (its own namespace is looked in first) or holds `exec`, `eval`,
  `locals()` or `vars()`. (A metaclass's `__prepare__` could hand the
  body a namespace that answers names it never bound; none is assumed.) So anything else (imports, decorators, a
  method's or a decorated function's signature, class attributes, a
  definition other than a plain function, a docstring, or a constant
  that is not simple, added, removed or renamed) changes the module's.
  Plus what compiling the module says (format 7): each warning the
  interpreter gives as it compiles the file, by its category and text
  (an invalid escape sequence in any string, `is` with a literal, an
  assert on a tuple), wherever it stands. The import system compiles the
  whole file at its first import (no bytecode cached: a fresh checkout),
  so such a warning is every importer's, not the tests' that run its
  definition; under `-W error` or pytest's `filterwarnings = error` it is
  a SyntaxError for every test that loads the module. Whether a class
  has a `__class__` cell (format 7: a function in its body names `super`
  or `__class__`, _uses_class_cell), which its metaclass must hand on to
  type.__new__ (else making the class is a RuntimeError), is its own
  too: the first `super()` in a class's methods, or the last one gone,
  changes the module's. And a SyntaxError
  only the compiler finds (`break` outside a loop, a duplicate argument,
  `nonlocal` of nothing, `import *` in a function), which `ast.parse`
  accepts, makes the file unparseable: no importer can load it.
- names (format 4): a simple constant's or plain function's statement is
  no module-level code: the module's fingerprint leaves it out entirely,
  so one added or removed does not change it (unless the module binds
  `__getattr__`, which answers names it does not bind: then each stays as
  a marker, except beside a `def __getattr__` that spells out every name
  it answers, format 6, _getattr_answers: another name added is as
  without it, one of those changes the module). What can tell that one
  was added or removed:
  - code of the module that names it (a Name, or a string constant that is
    the name or a dotted name holding it): each unit's text and place,
    each plain function's header, and the module's own fingerprint hold
    the sorted list of the constants' and plain functions' names their
    code names, so that code changes when one of them comes or goes (a
    unit that calls a new helper; a function that used the builtin `len`
    and now gets the module's);
  - a lookup of it on the module elsewhere, which failed before: the
    tracker's absent records (ste_site/ste_parts.py), against whether the
    module binds the name now;
  - a namespace read by string, or `import *`: the `names` line, the list
    of these names in the module's order;
  - code that ran while the module loaded and looked the name up: it names
    it (the tracker's name records), and each const and sig part holds its
    *anchor*, how many other statements of the module's body come before
    it, so one that moved past other module-level code changes its part.
- imports (format 6): a `from <module> import <attr> [as <name>]`
  directly in the module's body (a module named, no `*`; each name bound
  nowhere else in the module's scope, not a dunder) binds names: each is
  an `import` part of its own, its value where it comes from and its
  anchor (as a constant's; such an import is not one of the "others"
  unless it is the first of its module), and its name is one of the names
  the module binds (see "names": the code that names it holds it, the
  `names` line lists it). The module's fingerprint then leaves out each
  repeat (a module an earlier statement directly in the body imported:
  it loads nothing) and keeps each first import as which module it loads,
  where. Whether that holds is ste's to decide, not this script's (it
  sees no other file): only in a package's `__init__.py` (a submodule it
  imports cannot be still loading while it runs), and only when each
  import names a file of the tree whose `binds` holds the attribute
  (definitions.h, ImportsHold); else the module view is `full`, the
  module-level fingerprint with every import in it.
  Format 10: an import from the standard library holds too, in any
  module, when the standard library of this script's interpreter (the
  only one `-I -S` lets it find: a builtin module, or a source file under
  the folder of `os`) binds each name it imports however it runs (its
  `binds`, as below): such a module cannot be still loading (it imports
  no file of the tree), and it binds the name. The import line says
  `stdlib`; the `stdlib` fingerprint leaves out only those (for a module
  whose other imports do not hold). ste checks the one thing this script
  cannot see: that no file of the tree could be found first under the
  module's name (definitions.h, StdlibImportsHold). It takes the tests'
  interpreter for this script's: `python3` on the PATH ste runs with
  (docs/concepts.md, "Definitions").
- binds (format 6): the names the module's top-level code binds however
  it runs, never deleted: an import, a def, a class, an assignment
  directly in the body, in both branches of an if/else, or in a try's
  body (or else) and every one of its handlers, or its finally.
- overloads (format 6): a `def` whose one decorator is typing's (or
  typing_extensions') `overload` (`@overload` bound once by `from typing
  import overload`, or `@t.overload` with `import typing as t`, before
  it), directly in the module's body or a class body there, whose
  defaults and annotations cannot fail or do anything as the module runs
  it (as a plain function's), right before more of them and then the def
  of the same name they describe (its implementation). Running one only
  stores the function in typing's registry and binds the name to a dummy
  the implementation replaces at once: no code of the module sees it, and
  only typing.get_overloads hands it out. So it is part of its
  implementation's unit (its text and place hold it after their own),
  and no module-level code: neither a statement of the module's body (the
  anchors do not count it) nor another binding of the name (an
  implementation with overloads can be a plain function). The tracker
  takes code that names get_overloads for a read of code objects' lines:
  every unit's place of every file loaded. Anything else decorated stays
  module-level (an overload with no implementation right after it, one
  inside a branch).
"""

import ast
import hashlib
import importlib
import os
import sys
import warnings

FORMAT = 10  # 5: defs inside if/try/with/for/while/match are units; 6: names detached beside a
# spelled-out __getattr__, typing.overload's defs part of their implementation's unit, imports
# that only bind names, compiled patterns as constants, binds; 7: an annotated constant's
# statement (its annotation) stays module-level, a set's members and a dict's keys hashable,
# the module compiled: its warnings module-level, a compiler's SyntaxError unparseable;
# whether a class has a __class__ cell; 8: lambdas inside a constant's literal; 9: the body of
# `if TYPE_CHECKING:` directly in a class's body, too; 10: from-imports of the standard library
# (the `stdlib` fingerprint)
_SALT = ("ste-fingerprint/%d %s %d.%d" % ((FORMAT, sys.implementation.name) + tuple(sys.version_info[:2]))).encode()
_DUNDER_CONSTANTS = {"__version__", "__version_info__"}
# Builtins a header may name (every Python 3 has them; a module that binds
# one before the def is fine too, any module-level binding before it is).
_BUILTINS = frozenset((
    "bool", "bytes", "bytearray", "complex", "dict", "float", "frozenset", "int", "list", "object",
    "set", "str", "tuple", "type", "len", "repr", "sorted", "min", "max", "sum", "abs", "any", "all",
    "id", "hash", "iter", "next", "range", "slice", "print", "isinstance", "issubclass", "callable",
    "getattr", "setattr", "hasattr", "Exception", "BaseException", "ValueError", "TypeError",
    "KeyError", "IndexError", "RuntimeError", "NotImplemented", "Ellipsis",
))


def _digest(tag, text):
    h = hashlib.blake2b(digest_size=16)
    h.update(_SALT)
    h.update(b"\0" + tag + b"\0")
    h.update(text.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


_AST = ast.AST
_YIELDING = (ast.Yield, ast.YieldFrom, ast.Await)


def _unit_texts(node):
    """(text, text with positions, whether it yields or awaits) of a node,
    in one pass: its class's name and each field in order, recursively
    (other values by repr; the AST holds no list of lists), the positions
    after them. An injective form of ast.dump at a third of its cost, one
    call per node (ast.dump's depth, no deeper)."""
    yields = []

    def both(n):
        cls = n.__class__
        if cls in _YIELDING:
            yields.append(True)
        text, at = [], []
        for field in cls._fields:
            value = getattr(n, field, None)
            if isinstance(value, _AST):
                t, a = both(value)
            elif isinstance(value, list):
                ts, ats = [], []
                for item in value:
                    if isinstance(item, _AST):
                        it, ia = both(item)
                    else:
                        it = ia = repr(item)
                    ts.append(it)
                    ats.append(ia)
                t, a = "[%s]" % ",".join(ts), "[%s]" % ",".join(ats)
            else:
                t = a = repr(value)
            text.append(t)
            at.append(a)
        places = ",".join([repr(getattr(n, name, None)) for name in cls._attributes])
        return "(%s %s)" % (cls.__name__, ",".join(text)), "(%s %s;%s)" % (cls.__name__, ",".join(at), places)

    text, at = both(node)
    return text, at, bool(yields)


def _text(node):
    """`node` (or a value in its fields) as text, without positions."""
    return _unit_texts(node)[0] if isinstance(node, _AST) else repr(node)


def _docstring(body):
    """The docstring's Constant node of a body, or None."""
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[0].value
    return None


def _take_docstring(body, line, name, docs):
    """Records a body's docstring and leaves a marker in its place."""
    node = _docstring(body)
    if node is not None:
        docs.append((_digest(b"doc", node.value), line, name))
        node.value = "ste:doc" if node.value else "ste:doc-empty"  # bool(__doc__) is module-level
        # Its lines stay (what follows it depends on them), not the column
        # it ends at: a docstring's text is no place.
        node.end_col_offset = body[0].end_col_offset = 0


def _literal(node, inner=False):
    """A literal whose evaluation cannot fail: a set's members and a dict's
    keys are hashed, so those are _hashable (`{[1]: 2}` is a TypeError as
    the module loads). Inside a tuple, list or dict (`inner`), a lambda
    whose defaults are literals (format 8): making it runs nothing (its
    body runs when it is called, and what calls it got it through the
    constant's name); alone it is a function, which no name record
    covers (the tracker indexes a function by its own name)."""
    if isinstance(node, (ast.Constant, ast.UnaryOp)):
        return _hashable(node)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_literal(e, True) for e in node.elts)
    if isinstance(node, ast.Set):
        return all(_hashable(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _hashable(k) for k in node.keys) and all(_literal(v, True) for v in node.values)
    if isinstance(node, ast.Lambda) and inner:
        return all(_literal(d) for d in node.args.defaults) and \
            all(d is None or _literal(d) for d in node.args.kw_defaults)
    return False


def _hashable(node):
    """A constant, a signed number, or a tuple of those, nested."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float, complex))
    if isinstance(node, ast.Tuple):
        return all(_hashable(e) for e in node.elts)
    return False


class _Bindings(ast.NodeVisitor):
    """How many times each name is bound in the module's scope, and the
    names declared `global` anywhere (or bound by a walrus anywhere)."""

    def __init__(self):
        self.count = {}
        self.unsafe = set()

    def bind(self, name):
        self.count[name] = self.count.get(name, 0) + 1

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.bind(node.id)

    def visit_alias(self, node):
        self.bind((node.asname or node.name).split(".")[0])

    def visit_FunctionDef(self, node):
        self.bind(node.name)
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self._inner(node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.bind(node.name)
        for n in node.decorator_list + node.bases + node.keywords:
            self.visit(n)
        self._inner(node.body)

    def visit_Lambda(self, node):
        self.visit(node.args)
        self._inner([node.body])

    def visit_ExceptHandler(self, node):
        if node.name:
            self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self.bind(node.name)

    def visit_MatchMapping(self, node):
        if node.rest:
            self.bind(node.rest)
        self.generic_visit(node)

    def _inner(self, body):
        # Another scope: only `global` and walrus targets reach the module
        # (_bindings finds those anywhere, in one walk of the tree).
        pass

    def visit_Global(self, node):
        self.unsafe.update(node.names)

    def visit_NamedExpr(self, node):
        if isinstance(node.target, ast.Name):
            self.unsafe.add(node.target.id)
        self.generic_visit(node)


def _bindings(tree):
    """The module scope's bindings; also the names deleted anywhere
    (`bindings.deleted`)."""
    bindings = _Bindings()
    for stmt in tree.body:
        bindings.visit(stmt)
    bindings.deleted = set()
    for sub in ast.walk(tree):
        cls = sub.__class__
        if cls is ast.Global:
            bindings.unsafe.update(sub.names)
        elif cls is ast.NamedExpr and isinstance(sub.target, ast.Name):
            bindings.unsafe.add(sub.target.id)
        elif cls is ast.Name and isinstance(sub.ctx, ast.Del):
            bindings.deleted.add(sub.id)
    return bindings


_RE_FLAGS = frozenset(("A", "ASCII", "I", "IGNORECASE", "L", "LOCALE", "M", "MULTILINE", "S", "DOTALL",
                       "X", "VERBOSE", "U", "UNICODE", "NOFLAG"))


def _pattern(node, re_names):
    """True for `re.compile(<str or bytes>[, <flags>])` (see top, "const"):
    `re` one of `re_names`, the flags re's own (`re.I | re.X`) or a number,
    when it compiles here without a warning."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in re_names):
        return False
    args = list(node.args)
    for kw in node.keywords:
        if kw.arg != "flags" or len(args) != 1:
            return False
        args.append(kw.value)
    if not 1 <= len(args) <= 2 or not isinstance(args[0], ast.Constant) or type(args[0].value) not in (str, bytes):
        return False
    import re
    import warnings

    def flags(n):
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in re_names and \
                n.attr in _RE_FLAGS and hasattr(re, n.attr):
            return getattr(re, n.attr)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            return flags(n.left) | flags(n.right)
        raise ValueError("not a flag")

    try:
        value = flags(args[1]) if len(args) == 2 else 0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            re.compile(args[0].value, value)
    except Exception:
        return False
    return True


def _simple_constants(tree, bindings):
    """The simple constants (see top): [(statement, name)]. `bindings`: of
    the whole tree, before any body was replaced."""
    found = []
    re_names = set()  # names bound to the re module so far
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            re_names.update(a.asname or a.name for a in stmt.names
                            if a.name == "re" and bindings.count.get(a.asname or a.name) == 1
                            and (a.asname or a.name) not in bindings.unsafe
                            and (a.asname or a.name) not in bindings.deleted)
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                continue
            name = stmt.targets[0].id
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is None or not isinstance(stmt.target, ast.Name) or not stmt.simple:
                continue
            name = stmt.target.id
        else:
            continue
        if name.startswith("__") and name.endswith("__") and name not in _DUNDER_CONSTANTS:
            continue
        if bindings.count.get(name) != 1 or name in bindings.unsafe or \
                not (_literal(stmt.value) or _pattern(stmt.value, re_names)):
            continue
        found.append((stmt, name))
    return found


def _bound_by(stmt):
    """The names a statement directly in the module's body binds as it runs
    unconditionally (an import, a def, a class, an assignment)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def _safe(node, bound):
    """True iff evaluating `node` as the module runs cannot fail or do
    anything: a literal, a name bound before, a safe builtin."""
    if isinstance(node, ast.Name):
        return node.id in bound or node.id in _BUILTINS
    if isinstance(node, ast.Lambda):  # (its body runs when it is called)
        return all(_safe(d, bound) for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None])
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_safe(e, bound) for e in node.elts)
    if isinstance(node, (ast.Set, ast.Dict)):
        # (set members and keys are hashed: literals, not lists)
        keys = node.elts if isinstance(node, ast.Set) else node.keys
        values = [] if isinstance(node, ast.Set) else node.values
        return all(k is not None and _hashable(k) for k in keys) and all(_safe(v, bound) for v in values)
    return _literal(node) and not isinstance(node, (ast.Set, ast.Dict))


def _future_annotations(tree):
    return any(isinstance(s, ast.ImportFrom) and s.module == "__future__" and
               any(a.name == "annotations" for a in s.names) for s in tree.body)


def _plain_functions(tree, bindings):
    """The plain functions (see top): [(statement, name)]. `bindings`: of
    the whole tree."""
    lazy = _future_annotations(tree)
    deleted = bindings.deleted
    bound = set()
    found = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmt.decorator_list and \
                not getattr(stmt, "type_params", None) and not (stmt.name.startswith("__") and stmt.name.endswith("__")) and \
                bindings.count.get(stmt.name) == 1 and stmt.name not in bindings.unsafe:
            args = stmt.args
            usable = bound - deleted
            defaults = args.defaults + [d for d in args.kw_defaults if d is not None]
            notes = [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
                     if a is not None and a.annotation is not None] + ([stmt.returns] if stmt.returns is not None else [])
            if all(_safe(d, usable) for d in defaults) and (lazy or all(_safe(n, usable) for n in notes)):
                found.append((stmt, stmt.name))
        bound.update(_bound_by(stmt))
    return found


def _names_in(nodes, free):
    """The names of `free` that `nodes` name, sorted and joined by ",": a
    Name node, or a part of a string constant that is an identifier or a
    dotted name (`getattr(m, "X")`, a string annotation). Local variables
    of the same name count too (more, never less)."""
    if not free:
        return ""
    found = set()
    for sub in (sub for node in nodes for sub in ast.walk(node)):
        cls = sub.__class__
        if cls is ast.Name:
            if sub.id in free:
                found.add(sub.id)
        elif cls is ast.Constant and type(sub.value) is str and len(sub.value) <= 200:
            for part in sub.value.split("."):
                if part in free:
                    found.add(part)
    return ",".join(sorted(found))


def _blocks(stmt):
    """The statement lists inside a compound statement that runs in its
    enclosing scope (if, for, while, with, try, match): a def there is a
    unit like one directly in the body (its code runs only when called)."""
    cls = stmt.__class__
    if cls in (ast.If, ast.For, ast.AsyncFor, ast.While):
        return [stmt.body, stmt.orelse]
    if cls in (ast.With, ast.AsyncWith):
        return [stmt.body]
    if cls is ast.Try or cls.__name__ == "TryStar":
        return [stmt.body] + [h.body for h in stmt.handlers] + [stmt.orelse, stmt.finalbody]
    if cls.__name__ == "Match":
        return [case.body for case in stmt.cases]
    return []


def _with_names(text, names):
    return text if not names else "%s\0names:%s" % (text, names)


def _type_checking(tree, bindings):
    """Replaces the body of each `if TYPE_CHECKING:` directly in the
    module's body by a marker (see top)."""
    flag, typing_names = False, set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module in ("typing", "typing_extensions") and stmt.level == 0:
            flag = flag or any(a.name == "TYPE_CHECKING" and a.asname is None for a in stmt.names)
        elif isinstance(stmt, ast.Import):
            typing_names.update(a.name for a in stmt.names if a.name in ("typing", "typing_extensions") and a.asname is None)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                stmt.targets[0].id == "TYPE_CHECKING":
            flag = flag or (isinstance(stmt.value, ast.Constant) and stmt.value.value is False)
    flag = flag and bindings.count.get("TYPE_CHECKING") == 1 and "TYPE_CHECKING" not in bindings.unsafe
    typing_names = {n for n in typing_names if bindings.count.get(n) == 1 and n not in bindings.unsafe}

    def mark(body, own):
        # `own`: the names a class body binds itself (its body looks a
        # name up there first): one of those is not the module's; None:
        # not told, so no block of this body is marked.
        for stmt in body:
            if isinstance(stmt, ast.ClassDef):
                # (format 9) A class's body too: a class directly in the
                # module's body or in such a class's, as units are found.
                mark(stmt.body, _class_binds(stmt))
                continue
            if not isinstance(stmt, ast.If) or own is None:
                continue
            test = stmt.test
            if (flag and isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" and test.id not in own) or (
                    isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING" and
                    isinstance(test.value, ast.Name) and test.value.id in typing_names and
                    test.value.id not in own):
                stmt.body = [ast.Expr(value=ast.Constant(value="ste:type-checking"))]

    mark(tree.body, set())


def _class_binds(cls):
    """The names a class's body may bind in its own namespace, wherever in
    it (a statement of a block, a loop's target, a walrus, an import, a
    def, a class, `del`), or None (nothing told: every name) when it holds
    what binds names unseen (`locals()`, `vars()`, `exec`, `eval`)."""
    names = set()
    stack = list(cls.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            # (decorators, defaults, bases run in the class's body)
            stack.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                stack.extend(node.bases)
                stack.extend(k.value for k in node.keywords)
            else:
                stack.extend(node.args.defaults)
                stack.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.Lambda):
            stack.extend(node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            # (its own scope; only its first iterable runs in the body)
            stack.append(node.generators[0].iter)
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    return None
                names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("locals", "vars", "exec", "eval"):
            return None
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchAs) and node.name or isinstance(node, ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _getattr_answers(tree, bindings):
    """The names a module's own __getattr__ can answer: an empty set when
    it has none; None when they are not all spelled out. Spelled out: one
    `def __getattr__(p)` directly in the module's body, bound nowhere else,
    whose every `return` is in the body of an `if` testing `p == "x"`,
    `"x" == p` or `p in (<strings>)` (a tuple, list or set), and whose last
    statement is a `raise`: any other name raises."""
    if "__getattr__" not in bindings.count:
        return set()
    if bindings.count["__getattr__"] != 1 or "__getattr__" in bindings.unsafe or "__getattr__" in bindings.deleted:
        return None
    defs = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "__getattr__"]
    if len(defs) != 1:
        return None
    f = defs[0]
    args = f.args
    if len(args.args) != 1 or args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or \
            not f.body or not isinstance(f.body[-1], ast.Raise):
        return None
    param = args.args[0].arg
    if any(isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load) for n in ast.walk(f)) or \
            any(isinstance(n, (ast.Global, ast.Nonlocal)) and param in n.names for n in ast.walk(f)):
        return None  # (the name tested would not be the one asked)
    names = set()

    def guard(test):
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, op, right = test.left, test.ops[0], test.comparators[0]
            if isinstance(op, ast.Eq):
                for a, b in ((left, right), (right, left)):
                    if isinstance(a, ast.Name) and a.id == param and isinstance(b, ast.Constant) and type(b.value) is str:
                        return {b.value}
            if isinstance(op, ast.In) and isinstance(left, ast.Name) and left.id == param and \
                    isinstance(right, (ast.Tuple, ast.List, ast.Set)) and \
                    all(isinstance(e, ast.Constant) and type(e.value) is str for e in right.elts):
                return {e.value for e in right.elts}
        return None

    def walk(stmts, guarded):
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # another scope (its returns are its own)
            if isinstance(stmt, ast.If):
                g = guard(stmt.test)
                if g is not None:
                    names.update(g)
                if not walk(stmt.body, guarded or g is not None) or not walk(stmt.orelse, guarded):
                    return False
                continue
            for sub in ast.walk(stmt):
                if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)):
                    return False
                if isinstance(sub, ast.Return) and not guarded:
                    return False
            for inner in _blocks(stmt):
                if not walk(inner, guarded):
                    return False
        return True

    return names if walk(f.body, False) else None


def _from_imports(tree, bindings):
    """The from-imports that only bind names once their module is loaded
    (see top, "imports"): [(statement, repeat, [(name, attr)])], where
    repeat says an earlier statement directly in the module's body imports
    the same module."""
    found, loaded = [], set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module is not None and stmt.module != "__future__":
            key = (stmt.level, stmt.module)
            names = []
            for a in stmt.names:
                bound = a.asname or a.name
                if a.name == "*" or (bound.startswith("__") and bound.endswith("__")) or \
                        bindings.count.get(bound) != 1 or bound in bindings.unsafe or bound in bindings.deleted:
                    names = None
                    break
                names.append((bound, a.name))
            if names:
                found.append((stmt, key in loaded, names))
            loaded.add(key)
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                parts = a.name.split(".")
                for i in range(1, len(parts) + 1):
                    loaded.add((0, ".".join(parts[:i])))
    return found


def _surely_bound(stmts):
    """The names statements bind however they run without failing: each
    statement's (_bound_by), those both branches of an `if`/`else` bind,
    and those a `try`'s body (or its `else:`) and every one of its
    handlers bind, or its `finally:` (a handler that binds nothing, such as
    `except ImportError: pass`, leaves them unsure)."""
    names = set()
    for stmt in stmts:
        names.update(_bound_by(stmt))
        cls = stmt.__class__
        if cls is ast.If and stmt.orelse:
            names.update(_surely_bound(stmt.body) & _surely_bound(stmt.orelse))
        elif cls is ast.Try or cls.__name__ == "TryStar":
            sure = _surely_bound(stmt.body) | _surely_bound(stmt.orelse)
            for handler in stmt.handlers:
                sure &= _surely_bound(handler.body)
            names.update(sure | _surely_bound(stmt.finalbody))
    return names


def _binds(tree, bindings):
    """The names the module's top-level code binds however it runs (an
    import, a def, a class, an assignment, in both branches of an if/else
    or a try and all its handlers), never deleted: what an importer finds
    on the module once it is loaded."""
    return sorted(n for n in _surely_bound(tree.body) - bindings.deleted if n.isidentifier())


def _overload_names(tree, bindings):
    """How the module names typing's `overload`: {name: index of the
    statement directly in the module's body that binds it}, for `from
    typing import overload [as o]` (or typing_extensions') and for `import
    typing [as t]` (then `t.overload`), each bound once and never deleted,
    by a walrus or `global`."""
    bare, modules = {}, {}
    for at, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.ImportFrom) and stmt.module in ("typing", "typing_extensions") and stmt.level == 0:
            for a in stmt.names:
                if a.name == "overload":
                    bare[a.asname or a.name] = at
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name in ("typing", "typing_extensions"):
                    modules[a.asname or a.name] = at

    def once(names):
        return {n: at for n, at in names.items()
                if bindings.count.get(n) == 1 and n not in bindings.unsafe and n not in bindings.deleted}

    return once(bare), once(modules)


def _overloads(tree, bindings):
    """Takes each overload (see top, "overloads") out of its body: {id of
    the implementation's def: [its overloads, in order]}. Directly in the
    module's body and in class bodies there (nested classes too); a
    top-level overload no longer counts as a binding of its name."""
    bare, modules = _overload_names(tree, bindings)
    if not bare and not modules:
        return {}
    lazy = _future_annotations(tree)
    deleted = bindings.deleted
    found = {}

    def is_overload(stmt, at, bound):
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or len(stmt.decorator_list) != 1 or \
                getattr(stmt, "type_params", None):
            return False
        d = stmt.decorator_list[0]
        if isinstance(d, ast.Name):
            ok = d.id in bare and bare[d.id] < at
        elif isinstance(d, ast.Attribute) and d.attr == "overload" and isinstance(d.value, ast.Name):
            ok = d.value.id in modules and modules[d.value.id] < at
        else:
            ok = False
        if not ok:
            return False
        args = stmt.args
        usable = bound - deleted
        defaults = args.defaults + [x for x in args.kw_defaults if x is not None]
        notes = [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
                 if a is not None and a.annotation is not None] + ([stmt.returns] if stmt.returns is not None else [])
        return all(_safe(x, usable) for x in defaults) and (lazy or all(_safe(n, usable) for n in notes))

    def take(body, at_of, bound_of, top):
        kept, run = [], []
        for i, stmt in enumerate(body):
            over = is_overload(stmt, at_of(i), bound_of(i))
            if run and not (over and stmt.name == run[-1].name):
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == run[-1].name:
                    found[id(stmt)] = run
                    if top:
                        bindings.count[stmt.name] -= len(run)
                else:
                    kept.extend(run)  # no implementation right after them: they stay
                run = []
            if over:
                run.append(stmt)
                continue
            kept.append(stmt)
            if isinstance(stmt, ast.ClassDef):
                at, bound = at_of(i), bound_of(i)
                stmt.body = take(stmt.body, lambda _j, at=at: at, lambda _j, bound=bound: bound, False)
        kept.extend(run)
        return kept

    # (names bound before each top-level statement by those directly in the
    # module's body: an overload's defaults and annotations may use them)
    bound_before, bound = [], set()
    for stmt in tree.body:
        bound_before.append(set(bound))
        bound.update(_bound_by(stmt))
    tree.body = take(tree.body, lambda i: i, lambda i: bound_before[i], True)
    return found


def _uses_class_cell(cls):
    """Whether a function in the class's body (a method, or what it nests;
    not a nested class's own methods) names `super` or `__class__`: the
    compiler then gives the class a `__class__` cell, and making the class
    fails when its metaclass (inherited from any base) does not hand the
    namespace's `__classcell__` on to type.__new__ (a RuntimeError as the
    module loads)."""
    stack = list(cls.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            stack.extend(node.decorator_list + node.bases + node.keywords)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if any(isinstance(n, ast.Name) and n.id in ("super", "__class__") for n in ast.walk(node)):
                return True
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _compiled(source):
    """The syntax tree of `source`, compiled as the import system compiles
    it, and what compiling it said: the sorted warnings (see top,
    "module"). A SyntaxError that only the compiler finds raises here
    (`break` outside a loop, a duplicate argument, `nonlocal` of nothing,
    `import *` in a function): the module cannot be imported, so it does
    not parse."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree = ast.parse(source)
        compile(tree, "<ste>", "exec", dont_inherit=True)
    return tree, sorted({"%s: %s" % (w.category.__name__, w.message) for w in caught})


_STDLIB_BINDS = {}


def _stdlib_binds(module):
    """The names the standard library's `module` binds however it runs
    (see top, "imports", format 10), or None when it is none this
    interpreter finds: a builtin module (its names once made; making one
    runs no Python), or a source file under the standard library's folder
    (parsed, never run: _binds), each package on the way a folder with an
    `__init__.py`. An extension module, a module a package's code puts in
    place (`os.path`), or a file that does not parse: None."""
    if module in _STDLIB_BINDS:
        return _STDLIB_BINDS[module]
    found = None
    parts = module.split(".")
    if all(p.isidentifier() for p in parts):
        if module in sys.builtin_module_names:
            found = frozenset(n for n in vars(importlib.import_module(module)) if n.isidentifier())
        elif parts[0] not in sys.builtin_module_names and getattr(os, "__file__", None):
            folder = os.path.dirname(os.path.abspath(os.__file__))
            for p in parts[:-1]:
                folder = os.path.join(folder, p)
                if not os.path.isfile(os.path.join(folder, "__init__.py")):
                    folder = None
                    break
            if folder is not None:
                for path in (os.path.join(folder, parts[-1], "__init__.py"), os.path.join(folder, parts[-1] + ".py")):
                    if os.path.isfile(path):
                        try:
                            with open(path, "rb") as f:
                                tree = ast.parse(f.read())
                            found = frozenset(_binds(tree, _bindings(tree)))
                        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                            found = None
                        break
    _STDLIB_BINDS[module] = found
    return found


def _left_out(tree, statements, repeats):
    """The module's fingerprint text with the from-imports `statements`
    left out: a repeat goes, a first import stays as which module it loads,
    where (see top, "imports")."""
    kept = []
    for stmt in tree.body:
        if id(stmt) in statements:
            if id(stmt) in repeats:
                continue
            stmt = ast.ImportFrom(module=stmt.module, names=[ast.alias(name="ste:import")], level=stmt.level)
        kept.append(stmt)
    whole, tree.body = tree.body, kept
    try:
        return _text(tree)
    finally:
        tree.body = whole


def fingerprint(source):
    tree, said = _compiled(source)
    units, docs, consts, sigs = [], [], [], []
    bindings = _bindings(tree)
    overloads = _overloads(tree, bindings)
    simple = _simple_constants(tree, bindings)
    plain = _plain_functions(tree, bindings)
    binds = _binds(tree, bindings)
    from_imports = _from_imports(tree, bindings)
    free = {name for _, name in simple + plain}
    free.update(name for _, _, names in from_imports for name, _ in names)
    # A module's own __getattr__ answers names it does not bind: one added
    # changes what it answers. Unless it answers only names it spells out
    # (see top, "names"), the names stay module-level.
    answers = _getattr_answers(tree, bindings)
    detached = answers is not None
    _take_docstring(tree.body, 0, "<module>", docs)

    seen = {}  # qualified name -> how many so far, over the whole file

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                seen[name] = seen.get(name, 0) + 1
                if seen[name] > 1:
                    name = "%s#%d" % (name, seen[name])
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                _take_docstring(node.body, first, name, docs)
                text, at, yields = _unit_texts(node)
                taken = overloads.get(id(node), [])
                for over in taken:  # (see top, "overloads")
                    over_text, over_at, _ = _unit_texts(over)
                    text, at = "%s\0overload:%s" % (text, over_text), "%s\0overload:%s" % (at, over_at)
                named = _names_in([node] + taken, free)
                text, at = _digest(b"unit", _with_names(text, named)), _digest(b"at", _with_names(at, named))
                units.append((text, at, first, node.end_lineno, name))
                marker = ast.Constant(value="ste:yields" if yields else "ste:body")
                kept = [node.body[0]] if _docstring(node.body) is not None else []
                node.body = kept + [ast.Expr(value=marker)]
            elif isinstance(node, ast.ClassDef):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                name = prefix + node.name
                seen[name] = seen.get(name, 0) + 1
                if seen[name] > 1:  # (its docstring and methods are its own)
                    name = "%s#%d" % (name, seen[name])
                _take_docstring(node.body, first, name, docs)
                cell = _uses_class_cell(node)
                visit(node.body, name + ".")
                if cell:  # (see top, "module")
                    node.body.append(ast.Expr(value=ast.Constant(value="ste:classcell")))
            else:
                for inner in _blocks(node):
                    visit(inner, prefix)

    visit(tree.body, "")
    # Each simple constant and plain function: its part, with its anchor
    # (how many other statements of the module's body come before it). An
    # import that only binds names is not one of those others; the first
    # import of its module is (it loads the module).
    free_statements = {id(stmt): name for stmt, name in simple + plain}
    repeats = {id(stmt) for stmt, repeat, _ in from_imports if repeat}
    stdlib = set()  # the from-imports the standard library answers (see top, "imports")
    for stmt, _, bound in from_imports:
        if stmt.level == 0:
            there = _stdlib_binds(stmt.module)
            if there is not None and all(attr in there for _, attr in bound):
                stdlib.add(id(stmt))
    import_names = {id(stmt): names for stmt, _, names in from_imports}
    anchors, others, names = {}, 0, []  # names: theirs, in the module's order
    imports = []
    for stmt in tree.body:
        if id(stmt) in free_statements:
            anchors[id(stmt)] = others
            names.append(free_statements[id(stmt)])
        elif id(stmt) in import_names:
            for bound, attr in import_names[id(stmt)]:
                imports.append((_digest(b"import", "%d %s %s@%d" % (stmt.level, stmt.module, attr, others)),
                                bound, stmt.level, stmt.module, attr, id(stmt) in stdlib))
                names.append(bound)
            if id(stmt) not in repeats:
                others += 1
        else:
            others += 1
    for stmt, name in simple:
        consts.append((_digest(b"const", "%s@%d" % (_text(stmt.value), anchors[id(stmt)])), name))
        stmt.value = ast.Constant(value="ste:const")
    for stmt, name in plain:
        # (its body is a marker now: whether it has a docstring, and
        # whether it yields, read without running it, go with its header)
        header = "%s %s -> %s: %s" % (type(stmt).__name__, _text(stmt.args), _text(stmt.returns),
                                      ",".join(_text(b) for b in stmt.body))
        header = _with_names(header, _names_in([stmt.args] + ([stmt.returns] if stmt.returns else []), free))
        sigs.append((_digest(b"sig", "%s@%d" % (header, anchors[id(stmt)])), name))
        stmt.args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                  kwarg=None, defaults=[])
        stmt.returns = None
        stmt.body.append(ast.Expr(value=ast.Constant(value="ste:sig")))
    if detached:
        # (an annotated constant stays, its value a marker: its annotation
        # runs as the module loads, and may fail; see top, "const")
        tree.body = [stmt for stmt in tree.body
                     if id(stmt) not in free_statements or isinstance(stmt, ast.AnnAssign)]
    _type_checking(tree, bindings)
    named = _names_in([tree], free)
    tail = "" if not answers else "\0answers:%s" % ",".join(sorted(free & answers))
    # (one of the names __getattr__ answers added: what a lookup gives changes)
    if said:
        tail += "\0compiling says:%s" % "\n".join(said)
    module = _with_names(_text(tree), named) + tail
    full = _digest(b"module-full", module)
    lean_stdlib = None
    if from_imports and detached:
        # The module without the imports that only bind names; and without
        # the standard library's only, when there are others.
        module = _with_names(_left_out(tree, import_names, repeats), named) + tail
        if stdlib and len(stdlib) < len(import_names):
            lean_stdlib = _digest(b"module-stdlib", _with_names(_left_out(tree, stdlib, repeats), named) + tail)
    names_digest = _digest(b"names", "%s%s" % (",".join(names), "" if detached else "\0attached"))
    if not detached:
        imports = []  # (the names stay module-level: see "names")
    extra = {"full": full, "imports": imports, "binds": binds, "stdlib": lean_stdlib}
    return _digest(b"module", module), units, docs, consts, sigs, names_digest, extra


def main():
    stdin = sys.stdin.buffer
    out = sys.stdout
    n = 0
    while True:
        line = stdin.readline()
        if not line:
            break
        size = int(line)
        source = stdin.read(size)
        out.write("file %d\n" % n)
        n += 1
        if len(source) != size:
            out.write("error truncated input\n")
            break
        try:
            module, units, docs, consts, sigs, names, extra = fingerprint(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            out.write("error %s\n" % (" ".join(("%s: %s" % (type(e).__name__, e)).split()) or "unparseable"))
            out.flush()
            continue
        out.write("module %s\n" % module)
        for text, at, first, last, name in units:
            out.write("unit %s %d %d %s\nat %s\n" % (text, first, last, name, at))
        for digest, line, name in docs:
            out.write("doc %s %d %s\n" % (digest, line, name))
        for digest, name in consts:
            out.write("const %s %s\n" % (digest, name))
        for digest, name in sigs:
            out.write("sig %s %s\n" % (digest, name))
        out.write("names %s\n" % names)
        for digest, bound, level, module_name, attr, stdlib in extra["imports"]:
            out.write("import %s %s %d %s %s%s\n" % (digest, bound, level, module_name, attr, " stdlib" if stdlib else ""))
        out.write("full %s\n" % extra["full"])
        if extra["stdlib"] is not None:
            out.write("stdlib %s\n" % extra["stdlib"])
        out.write("binds %s\n" % " ".join(extra["binds"]))
        out.write("end\n")
        out.flush()  # each answer as it is made: ste may keep the process for its next files


if __name__ == "__main__":
    main()
