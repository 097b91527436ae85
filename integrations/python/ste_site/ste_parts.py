"""What a definition's docstrings, a module's constants and a function's
lines mean to the tests that ran them (docs/concepts.md, "Definitions").

ste_defs.py (the definition tracker) calls setup() as it starts, hands
look_at() each code object that ran (any file's), and calls emit() at each
of its emissions; this module makes these records (stats of paths that
never exist, recorded by the interceptor in the current scope; format:
indexer/include/ste/definitions.h):

  <abs file>/\\x01ste-docs-tracked  <file>'s docstrings are watched;
  <abs file>/\\x01ste-doc:<line>    the docstring of <file>'s class or
                                    definition starting at <line> (0: the
                                    module's) was used;
  <abs file>/\\x01ste-name:<name>   code that ran names <name>, which <file>
                                    binds at its top level to a plain value
                                    or to a function defined there;
  <abs file>/\\x01ste-namespace     <file>'s namespace was read by string;
  <abs file>/\\x01ste-absent:<name> <name> was looked up on <file>'s module
                                    and not found;
  <abs file>/\\x01ste-star          `import *` copied <file>'s namespace;
  <abs file>/\\x01ste-line:<line>  a line of <file> was read as a frame's
                                    place: a warning's location, a log
                                    record's caller, a traceback's frame;
  /\\x01ste-positions:<pid>.<n>     code that ran read the lines of frames;
  /\\x01ste-code-lines:<pid>.<n>    code that ran read the lines of code
                                    objects.

Docstrings. A change to a docstring matters only to a test that reads it.
As a repository module's code is loaded (SourceLoader.get_code), each
docstring of the module, of its classes and of their definitions (the
parts ste_fingerprint.py names) becomes a `str` subclass, _Doc, before any
function or class is made from it: the same text, recording its first use
(any of its methods, `str()`, formatting, comparison, `len`, iteration,
pickling; `bool()` is not a use: whether a docstring is empty is module-
level). functools.wraps, property and the like copy the object, so a
reader of the copy is seen too. textwrap.dedent and the `re` module's
functions, which read a string's characters from C, note a _Doc argument.
Not seen: C code reading a docstring's characters directly (a compiled
pattern's methods, str.join, a C extension), with no Python-level use
before; a module loaded by another loader (pytest's assertion rewriting
of test files and conftest.py) keeps plain docstrings, and ste makes what
ran of it depend on all of them (no `docs-tracked` record).

Constants. A simple top-level constant (ste_fingerprint.py) matters only
to tests whose code names it. Each code object that ran is looked at once:
its names (co_names, less those it only binds or imports: `from m import
X` copies X, and uses of the copy name it; but a copy bound under another
name, `as Y`, or as a function's local, whose uses load it by slot, is a
use of X where it is imported) and its string constants that
are identifiers or dotted names (`getattr(m, "X")`, `patch("m.X")`; not
those of code that binds `__all__`, whose names `import *` copies;
`__version__` and
`__version_info__` only in the repository's code: libraries and the
stdlib name their own), against the plain values
(str, bytes, numbers, bool, None, tuples, lists, dicts, sets; a compiled
pattern, ste_fingerprint.py's `re.compile` constant) bound at the
top level of the repository modules loaded, and the functions defined and
bound there under their own name (a plain function's header is a part of
its own: ste_fingerprint.py, "sig"). A module's namespace read by
string (`dir(m)`, `vars(m)`, `m.__dict__`, `inspect.getmembers`, except by
the import system and `import *`; `globals()` in the module's own code,
not a module named `globals` imported: click's `from .globals import x`)
makes all of its constants dependencies: its class becomes a ModuleType
subclass that notes `__dir__` and `__dict__` (attribute access is
untouched); a module that already has a class of its own is read by
string from the start. Not seen: `getattr(m, name)` with a name built at
run time that no code that ran holds.

With _ste_tracer's module type (use_compiled) a lookup by string is seen
as it is made instead: the type notes each name found in a repository
module (getattr, hasattr, operator.attrgetter, str.format's fields,
pickle, `m.x`) into _looked_up, unless the import system made the lookup
(`from m import x`, `import *`, importlib's own code: copies) or a test
runner's finder did (_FINDERS: unittest's loader, pytest's collection and
fixtures, pluggy's hook discovery look up every name of a module; what
they find runs, or is module-level; monkeypatch and mock are noted), and
string constants are then no uses, but the repository's __version__ and
__version_info__ (a dict's key, a setting's name, a printer's table of
function names name no lookup: sympy's code printers' default settings
hold 'known_functions', every test loads them, and each printer module
binds a `known_functions` table). Not seen there: `object.__getattribute__
(m, n)`, `types.ModuleType.__getattribute__(m, n)` and C code reading a
module's dict directly.

Globals. A name the repository's code loads only as a global (LOAD_GLOBAL,
LOAD_NAME; no attribute or string of that code names it) is its own
module's binding: a use of that module's constant or function, and of
those its binding was copied from by a `from m import name` that ran in
its code (transitively; m not told: every module binding the name), not
of every module binding a name so spelled (sympy's printers each bind a
`known_functions` table, and each module's code loads its own). By name
again, as above: code that is not the repository's; code of a file no
loaded module was made from, or whose module's namespace was read or
written by string (exec'd into, `globals()`, `vars()`: what it holds is not
told) or had `import *` copy into it (from the moment it did; what was
recorded by module before stays). Not seen: the repository's code run
with another module's globals it got without reading a namespace by
string (`types.FunctionType(code, f.__globals__)`) where that module's
name is a copy.

Names added. A plain function or simple constant added to a module is no
module-level code (ste_fingerprint.py, "names"): only code that looks the
name up can tell. The module's own code holds the names in its
fingerprints; elsewhere a lookup of a name the module does not bind fails,
and the class of every repository module (_Watched) notes the failure
(`hasattr(m, n)`, `getattr(m, n, d)`, `from m import n`; not dunders other
than __version__ and __version_info__), and the interpreter's own error is
raised. With _ste_tracer (CPython 3.11) the class's attribute lookup is
the module type's own, called from C, and only a failed one calls
_absent_noted (use_compiled): a lookup in a repository module costs about
what it costs in any module that is not exactly the module type (the
interpreter specialises `m.x` only on that one). Elsewhere the note is its
__getattr__ in Python, which the interpreter calls after every failed
lookup (one frame of this file more in the error's traceback), and it
makes every lookup in the module a call through a slot wrapper (~9 times
as slow as in a plain module). A `from m import n` that
found n (code that ran imports n: IMPORT_FROM) is recorded the same way,
for m (the module the import named, resolved against the importer's
package; when that is not told, each repository module binding n but
the importer): whether m still binds n matters to the importer (a
function removed from m fails every test that loads it), not n's value,
which it copies. A package's `__init__.py` has every
name of its namespace indexed (its imports that only bind names are
parts of their own: ste_fingerprint.py, "imports"). `import *` of a module
without `__all__` is noted as a star record (the names it copied), a
namespace read by string as before. Not seen: `object.__getattribute__(m,
n)` and C code reading a module's dict directly.

Places. A function that only moved (same text, other lines) matters only
to tests that read lines. Code that ran, other than the test runner's own
(pytest's, pluggy's and unittest's packages outside the repository: they
read the lines of test functions to order and report them, and a failed
test is always selected again) and this tracker's, reads lines of frames
when it loads f_lineno, tb_lineno, f_lasti, tb_lasti, co_lines,
co_positions, co_lnotab or co_linetable (traceback, inspect, pdb, dis; an
attribute only stored, pdb's `self.tb_lineno = {}`, is no read), is
warnings' code that takes a line (a warning was made) where the warning's
line is not noted (below), or sys.excepthook, threading.excepthook or
sys.unraisablehook ran (the interpreter prints a traceback); it reads the
lines of code objects (no
run needed) when it names co_firstlineno, and their bytecode (what a body
holds, run or not: dis, numba's jit) when it names co_code or
_co_code_adaptive and not CodeType: every definition of every file
loaded, as for lines. traceback's and inspect's own
code does not count by its names: a call of their functions that hand out
lines counts where it comes from (the runner calls them for each item's
location and each skip's report). Not reads: code that also names
CodeType (it makes code objects, copying their lines, as attrs does),
typing.overload (its registry is keyed by first lines, but get_overloads
gives its values in the order they came) and hypothesis's impersonate (it
gives a wrapper its target's line). Code that names `get_overloads`
(outside typing's own) reads lines of code objects: the overloads it
hands out are parts of their implementation's unit (ste_fingerprint.py). ste then makes the definitions
that ran (frames; in the scope or an enclosing one) or every definition of
every file loaded (code objects) dependencies with their lines.

Lines shown. Most readers of frames' lines are told which frames: a
warning shown or recorded is a warnings.WarningMessage made with its
location (every way of showing one makes it: the interpreter's warn, warn
and warn_explicit, showwarning, formatwarning, catch_warnings(record=True));
a log record's caller is what logging.Logger.findCaller returns; traceback's
and inspect's readers (above) are handed a traceback, an exception (its
cause, context and a group's exceptions are shown too), a frame, or the
current exception or stack; the interpreter's hooks an exception. Each
(file, line) read is noted as a `line` record instead: ste makes the unit
holding that line (or, at module level, the file) a dependency with its
place, not every unit that ran. Still a read of every frame's line:
walk_stack(None) and StackSummary.extract (which frames is not told), and
code that loads the names above itself. A reader that takes the caller's
frame when given none (extract_stack, format_stack, print_stack,
inspect.stack) is handed its caller's by the wrapper, so that it lists
the program's frames as without it. WarningMessage.__init__ and
Logger.findCaller are wrapped as their modules load (warnings is imported
here: with it loaded, the interpreter shows every warning through it, not
by printing lines from C); the wrapper of findCaller is compiled as
logging's own file, so that findCaller, which skips logging's frames, does
not take it for the caller (an exception inside it would show logging's
lines 2-4 for the wrapper's).
Where that cannot be done (a logging without _is_internal_frame, before
3.11), their code counts by its names as before. A Logger subclass's own
findCaller counts by its names; a line shown whose file is a relative path
reads frames (which file is unknown).

Nothing here raises into the program: a failure calls mark_broken (the
process then ends without its `end` marker: file level, honest).
"""

import builtins
import os
import sys

_DOC = "\x01ste-doc:"
_DOCS_TRACKED = "\x01ste-docs-tracked"
_NAME = "\x01ste-name:"
_NAMESPACE = "\x01ste-namespace"
_ABSENT = "\x01ste-absent:"
_STAR = "\x01ste-star"
_POSITIONS = "/\x01ste-positions:"
_CODE_LINES = "/\x01ste-code-lines:"

_root = None  # "<abs root>/", from setup()
_stat = _mark_broken = None  # ste_defs's, from setup()
_CodeType = type((lambda: None).__code__)
_names_used = set()  # names that code which ran uses
# Names looked up on a repository module and found since the last emit(),
# by its compiled type (use_compiled: then _lookups_noted, and string
# constants are no uses but the dunders'); not those the import system
# copied, nor those _names_used holds.
_looked_up = set()
_lookups_noted = False
# Where lookups are not noted (prefixes of code's file names): ste's own
# directory, importlib's frozen modules, and the test runners' finders
# (_FINDERS).
_lookups_skipped = []
_new_used = set()  # used since emit() last settled them (_settle_used)
# Code that ran, (code, co_names, names in its constants' tuples, whether
# it is the repository's), whose names are taken (_take_names) only when
# one of them is a name that matters (emit()): most never are, and reading
# a code object's bytecode costs (its co_code is made on first use). An
# item taken is None. Each item emit() checked is in _deferred_index under
# each of its names (it held no name pending then): a name that becomes
# pending later takes the items it lists, and nothing else is walked. Each
# emit() works on what is new since the last (a forked child does not walk,
# nor touch the refcounts of, what its parent had already settled).
_deferred = []
_deferred_indexed = 0  # _deferred[:_deferred_indexed] are in _deferred_index (or taken)
_deferred_index = {}  # name -> positions in _deferred of items holding it
_const_index = {}  # name -> abs files binding it at top level to a plain value or a function of theirs
_pending = set()  # names in _const_index that no code which ran uses (yet)
_new_pending = []  # names added to _pending since the last emit()
_new_pairs = []  # (name, file) added to _const_index since the last emit()
_indexed = set()  # module files indexed
_name_records = set()  # (file, name) recorded
# Each name code that ran imported, `from m import X` (a lookup of X on m,
# whose value it copies): whether m still binds X matters to it, as an
# absent record says (the view F/\x01ste-absent:X), not X's value.
_imported_names = set()  # (level, module, name, file of the code)
_imported_done = set()
# Globals (see the header): names the repository's code loads only as
# globals, by the file of that code.
_new_globals = set()  # (file, name) since the last emit(), not settled
_globals_by_file = {}  # file -> names its code loads only as globals (not used by name)
_globals_files = {}  # name -> files whose code loads it only as a global
_copied_from = {}  # (file, name) -> files whose binding a `from m import name` in file's code copied (None: not told)
_star_importers = set()  # files whose code ran `import *` of a repository module
_new_copies = set()  # names whose _copied_from grew since the last _settle_globals
_packages = {}  # repository module file -> its __package__
_namespaces = set()  # files whose namespace was read by string, not yet recorded
_namespace_records = set()
_absent = set()  # (file, name) looked up on a module and not found, not yet recorded
_absent_records = set()
_stars = set()  # files whose namespace `import *` copied, not yet recorded
_star_records = set()
_docs_used = set()  # (file, line) of docstrings used, not yet recorded
_doc_records = set()
_reads = {"frames": False, "code": False}  # lines read since the last emission
_LINE = "\x01ste-line:"
_lines_shown = set()  # (abs file, line) shown as frames' places, not yet recorded
_line_records = set()
# (co_filename, co_name) of the code whose reads of lines are noted where
# they are made (a `line` record), not by the names it holds; the warnings
# module's file once WarningMessage is wrapped.
_lines_noted = set()
_warnings_noted = None
_reads_made = 0
_not_watching = ()  # directories whose code reads no lines for a test (see "Places")

# co_lines, co_positions and co_lnotab map a frame's instruction to its line
# (traceback, dis): frames. co_firstlineno needs no frame.
_FRAME_LINES = frozenset(("f_lineno", "tb_lineno", "f_lasti", "tb_lasti", "co_lines", "co_positions", "co_lnotab", "co_linetable"))
_CODE_LINES_NAMES = frozenset(("co_firstlineno",))
# A code object's bytecode: what a body holds, read without running it (dis,
# numba's jit compiles a function from it).
_BYTECODE_NAMES = frozenset(("co_code", "_co_code_adaptive"))
# Code that names co_firstlineno to key or copy, not to show: (file suffix,
# function). typing.overload keys a registry by first lines (get_overloads
# gives its values in the order they came); hypothesis's impersonate gives a
# wrapper its target's file and line (every strategy it defines, at import).
_LINE_COPIES = (("typing.py", "overload"), (os.sep.join(("hypothesis", "internal", "reflection.py")), "accept"))
_TYPING_FILES = (os.sep + "typing.py", os.sep + "typing_extensions.py")
_PLAIN = (str, bytes, int, float, complex, bool, type(None), tuple, list, dict, set, frozenset)
_FunctionType = type(lambda: None)
_ModuleType = type(sys)
_INIT = os.sep + "__init__.py"
_DUNDER_CONSTANTS = ("__version__", "__version_info__")
_DUNDERS = frozenset(_DUNDER_CONSTANTS)
_WARNING_LINES = frozenset(("formatwarning", "showwarning", "warn_explicit", "_formatwarnmsg_impl", "_showwarnmsg_impl"))


def _binding_ops():
    # opcode, not dis (which imports collections, types... into every
    # tracked process): the same tables.
    import opcode

    return frozenset(opcode.opmap[n] for n in ("STORE_NAME", "STORE_GLOBAL", "DELETE_NAME", "DELETE_GLOBAL", "IMPORT_NAME", "IMPORT_FROM") if n in opcode.opmap)


_BINDING_OPS = _NAME_OPS = _NAME_SHIFT = _EXTENDED_ARG = _IMPORT_FROM = _IMPORT_NAME = _LOAD_CONST = _STORE_OPS = None
_STORE_NAMES = ()  # STORE_NAME, STORE_GLOBAL: an import's copy bound under its own name (_used_names)
_GLOBAL_OPS = frozenset()  # LOAD_GLOBAL, LOAD_NAME, ...: a name of the code's own module (_used_names)
# bytes.translate's table: each binding opcode to _BINDING_BYTE, any other
# to 0 (one C call over a code object's opcodes, where a set test per
# opcode was twice as slow).
_BINDING_TABLE = None
_BINDING_BYTE = b"\x01"


# The name readers code is read with: _string_names and _used_names below,
# or _ste_tracer's string_names and used_names, which answer as they do, in
# C, once use_compiled() found them.
_compiled = None


def use_compiled(module):
    """After the tracer starts: the compiled name readers of `module`
    (_ste_tracer), when it has them, read code from here on."""
    global _compiled, _read_string_names, _read_used_names, _Watched
    if module is not None and hasattr(module, "used_names"):
        try:
            module.names_setup(_NAME_OPS, _NAME_SHIFT, _BINDING_OPS, _IMPORT_FROM, _IMPORT_NAME, _LOAD_CONST,
                               _EXTENDED_ARG, *_STORE_NAMES, _GLOBAL_OPS)
        except Exception:
            return  # (the Python ones answer)
        _compiled = module
        _read_string_names, _read_used_names = module.string_names, module.used_names
    if module is not None and hasattr(module, "module_type"):
        global _lookups_noted
        try:
            try:
                watched = _watched_on(module.module_type(_absent_noted, _looked_up, _names_used,
                                                         min(_OPS_IMPORT_STAR, default=-1), _lookups_skipped))
                _lookups_noted = True
            except TypeError:  # (an older build: failed lookups only)
                watched = _watched_on(module.module_type(_absent_noted))
        except Exception:
            _lookups_noted = False
            return  # (the Python one notes)
        for loaded in list(sys.modules.values()):
            if type(loaded) is _Watched:
                loaded.__class__ = watched
        _Watched = watched


def _string_names(consts, direct, nested, depth=0):
    """The identifiers and dotted names among string constants: those of
    `consts` itself into `direct`, those inside its tuples into `nested`.
    (A string of at most 200 characters, letters, digits, '_' and '.': each
    of its dot-separated parts that is an identifier. Every process runs
    this on every code object that ran: an identifier, the usual case, is
    taken in two C calls.)"""
    into = nested if depth else direct
    for c in consts:
        if type(c) is str:
            if c.isidentifier():
                if len(c) <= 200 and (c.isascii() or c.replace("_", "a").isalnum()):
                    into.add(c)
            elif "." in c and len(c) <= 200 and c.replace(".", "").replace("_", "a").isalnum():
                for part in c.split("."):
                    if part.isidentifier():
                        into.add(part)
        elif type(c) in (tuple, frozenset):
            _string_names(c, direct, nested, depth + 1)


def look_at(code):
    """Notes what one code object that ran means (see the header)."""
    if type(code) is not _CodeType:
        return
    if _RUNNERS:
        _find_runners()
    filename = code.co_filename
    names = code.co_names
    repo = filename.startswith(_root)
    if repo and code.co_name == "<module>" and _OPS_IMPORT_STAR and filename not in _star_importers:
        ops = code.co_code[::2]
        if any(op in ops for op in _OPS_IMPORT_STAR):
            _star_importers.add(filename)  # (see "Globals"; only a module's body can)
    if repo and ("globals" in names or ("locals" in names and not code.co_flags & 1)) and _reads_namespace(code):
        _namespaces.add(filename)
    if not filename.startswith(_not_watching) and filename not in _reader_files:
        if not _FRAME_LINES.isdisjoint(names) and "CodeType" not in names and \
                (filename, code.co_name) not in _lines_noted and _loads_any(code, _FRAME_LINES):
            _reads["frames"] = True
        elif filename.endswith("warnings.py") and filename != _warnings_noted and (
            code.co_name in _WARNING_LINES
            or (code.co_name == "__init__" and "lineno" in code.co_varnames and "filename" in code.co_varnames)
        ):
            _reads["frames"] = True  # a warning was made (WarningMessage), shown or formatted
        if not _CODE_LINES_NAMES.isdisjoint(names) and "CodeType" not in names and not any(
            code.co_name == name and filename.endswith(suffix) for suffix, name in _LINE_COPIES
        ):
            # (Code that makes code objects copies lines, as attrs does.)
            _reads["code"] = True
        elif not _BYTECODE_NAMES.isdisjoint(names) and "CodeType" not in names:
            # (Code that makes code objects copies bytecode, as attrs does at
            # import, which pytest loads.)
            _reads["code"] = True
        elif "get_overloads" in names and not filename.endswith(_TYPING_FILES):
            # typing.get_overloads hands out the overloads of a function,
            # which are parts of its implementation's unit and place
            # (ste_fingerprint.py, "overloads"): as a read of lines of code
            # objects, every unit's place of every file loaded.
            _reads["code"] = True
    direct, nested = set(), set()
    if _lookups_noted:
        # Names looked up by string are noted as they are found (see
        # "Constants"); of the strings, only the repository's own
        # __version__ and __version_info__ (a lookup of a dunder is not
        # told from the import system's).
        if repo and "__all__" not in names:
            _read_string_names(code.co_consts, direct, nested)
            direct.intersection_update(_DUNDERS)
            nested.intersection_update(_DUNDERS)
    elif "__all__" not in names:  # the names __all__ lists: `import *` copies them
        _read_string_names(code.co_consts, direct, nested)
    if not repo:
        # Libraries and the stdlib read their own modules' __version__.
        direct.difference_update(_DUNDERS)
        nested.difference_update(_DUNDERS)
        if not _DUNDERS.isdisjoint(names):
            names = tuple(n for n in names if n not in _DUNDERS)
    _new_used.update(direct)
    _deferred.append((code, names, nested, repo))


def _take_names(code, names, nested, repo):
    """The names of a deferred code object into _new_used: all of them
    when it binds or imports none; else those it uses (`from m import X`
    holds "X" in a tuple: a copy, no use). The repository's code: those it
    loads only as globals into _new_globals instead, as (file, name) (see
    "Globals")."""
    if repo:
        pairs, globs = [], set()
        used, imported = _read_used_names(code, pairs, globs)
        used.update(nested - imported)
        if pairs:
            _imported_names.update((level, module, name, code.co_filename) for level, module, name in pairs)
        if globs:
            filename = code.co_filename
            globs.difference_update(used)
            _new_globals.update((filename, name) for name in globs)
    elif _BINDING_BYTE not in code.co_code[::2].translate(_BINDING_TABLE):
        used = set(names)
        used.update(nested)
    else:
        pairs = []
        used, imported = _read_used_names(code, pairs)
        used.update(nested - imported)
        _imported_names.update((level, module, name, code.co_filename) for level, module, name in pairs)
    if not repo:
        used.difference_update(_DUNDERS)
    _new_used.update(used)


def _take_deferred():
    """Takes the names of each deferred code object that holds a pending
    name (bound by the repository, not yet used): of the items checked
    before, those _deferred_index lists under a name pending since; each
    new item against every pending name, indexed when it holds none."""
    global _deferred_indexed
    for name in _new_pending:
        if name not in _pending:
            continue  # used since: its items matter no more for it
        for at in _deferred_index.pop(name, ()):
            item = _deferred[at]
            if item is not None:
                _deferred[at] = None
                _take_names(*item)
    _new_pending.clear()
    pending = _pending
    for at in range(_deferred_indexed, len(_deferred)):
        item = _deferred[at]
        if not (pending.isdisjoint(item[1]) and pending.isdisjoint(item[2])):
            _deferred[at] = None
            _take_names(*item)
            continue
        for names in (item[1], item[2]):
            for name in names:
                positions = _deferred_index.get(name)
                if positions is None:
                    _deferred_index[name] = [at]
                else:
                    positions.append(at)
    _deferred_indexed = len(_deferred)


def _settle_used():
    """The names used since the last call into _names_used: each is pending
    no more, and is recorded for each repository file binding it."""
    if not _new_used:
        return
    fresh = _new_used - _names_used
    _new_used.clear()
    _names_used.update(fresh)
    for name in fresh:
        _pending.discard(name)
        files = _const_index.get(name)
        if files:
            for filename in files:
                _name_record(filename, name)


def _name_record(filename, name):
    if (filename, name) not in _name_records:
        _name_records.add((filename, name))
        _stat("%s/%s%s" % (filename, _NAME, name))


def _index_name(name, filename):
    files = _const_index.get(name)
    if files is None:
        _const_index[name] = {filename}
        if name not in _names_used:
            _pending.add(name)
            _new_pending.append(name)
    elif filename not in files:
        files.add(filename)
    else:
        return
    _new_pairs.append((name, filename))


def _name_ops(code):
    """(offset, opcode, index into co_names) of each instruction of `code`
    that names one (its bytecode read here: dis's own code would count as
    code that ran)."""
    ops = code.co_code
    ext = 0
    for at in range(0, len(ops), 2):
        op, arg = ops[at], ops[at + 1] | ext
        if op == _EXTENDED_ARG:
            ext = arg << 8
            continue
        ext = 0
        if op in _NAME_OPS:
            yield at, op, arg >> _NAME_SHIFT.get(op, 0)


def _used_names(code, pairs=None, globs=None):
    """The names `code` uses, less those it only binds or imports, and those
    it imports. Into `pairs`, each import's (level, module, name): `from
    <level dots><module> import <name>` (level None when not told). Into
    the set `globs` (when given; then not among those used), the names it
    loads only as globals (LOAD_GLOBAL, LOAD_NAME), never otherwise.

    An import binds a copy of the value: `from m import X` stored as the
    global or class-body name X is no use (code that uses the copy names
    X). Stored anywhere else it is a use, for the copy's users do not name
    X: `as Y` (they name Y), or a function's local or cell (they load it by
    slot, LOAD_FAST, with no name). So is an import whose store is not
    told (an EXTENDED_ARG between)."""
    used, imported = set(), set()
    loaded = set() if globs is not None else used
    ops = code.co_code
    names = code.co_names
    module = level = None
    for at, op, index in _name_ops(code):
        if index < len(names):
            if op not in _BINDING_OPS:
                (loaded if op in _GLOBAL_OPS else used).add(names[index])
            elif op == _IMPORT_FROM:
                imported.add(names[index])
                if at + 3 >= len(ops) or ops[at + 2] not in _STORE_NAMES or ops[at + 3] != index:
                    used.add(names[index])
                if pairs is not None:
                    pairs.append((level, module, names[index]))
            elif op == _IMPORT_NAME and pairs is not None:
                # LOAD_CONST <level>, LOAD_CONST <fromlist>, IMPORT_NAME
                # <module> (an EXTENDED_ARG before them: not told)
                module, level = names[index], None
                if at >= 4 and ops[at - 4] == _LOAD_CONST and ops[at - 2] == _LOAD_CONST and \
                        (at < 6 or ops[at - 6] != _EXTENDED_ARG) and ops[at - 3] < len(code.co_consts):
                    value = code.co_consts[ops[at - 3]]
                    level = value if type(value) is int else None
    if globs is not None:
        globs.update(loaded - used)
    return used, imported


_read_string_names, _read_used_names = _string_names, _used_names  # (use_compiled)


def _loads_any(code, wanted):
    """Whether `code` loads one of the names `wanted` (not only stores or
    deletes it: pdb's `self.tb_lineno = {}` reads no line)."""
    names = code.co_names
    for _, op, index in _name_ops(code):
        if op not in _STORE_OPS and (index >= len(names) or names[index] in wanted):
            return True
    return False


def _line_shown(filename, lineno):
    """A frame's place taken to be shown: a warning's location, a log
    record's caller (see "Lines shown")."""
    try:
        if type(filename) is not str:
            return
        if type(lineno) is not int or lineno <= 0:
            if filename.startswith(_root):
                _reads["frames"] = True  # which line is not told
            return
        if filename.startswith(_root):
            _lines_shown.add((filename, lineno))
        elif not filename.startswith((os.sep, "<")) and filename != "sys":
            _reads["frames"] = True  # a relative path: which file is unknown
    except Exception:
        _mark_broken()


def _reads_namespace(code):
    """Whether `code` uses the name globals (or, unoptimised, locals) other
    than by binding or importing it: the builtin called, handed on or
    reached as an attribute. Not a module of that name imported (`from
    .globals import x`, click's), which is no read of a namespace."""
    used = _read_used_names(code, None)[0]
    return "globals" in used or ("locals" in used and not code.co_flags & 1)


def _imported_file(level, module, importer):
    """The file of the module `from <level dots><module> import` named in
    code of `importer`, "" when it is no repository file, None when that is
    not known (its package, its level, the module not loaded)."""
    if type(level) is not int or type(module) is not str:
        return None
    if level:
        package = _packages.get(importer)
        if not package:
            return None
        bits = package.rsplit(".", level - 1)
        if len(bits) < level:
            return None
        module = "%s.%s" % (bits[0], module) if module else bits[0]
    found = sys.modules.get(module)
    if found is None:
        return None
    try:
        filename = _module_dict(found).get("__file__")
    except Exception:
        return None
    return filename if type(filename) is str and filename.startswith(_root) else ""


def _module_dict(module):
    return _MODULE_DICT.__get__(module)


def _index_modules():
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if type(filename) is not str or not filename.startswith(_root) or filename in _indexed:
            continue
        try:
            namespace = _module_dict(module)
        except Exception:
            continue
        _indexed.add(filename)
        package = namespace.get("__package__")
        if type(package) is str:
            _packages[filename] = package
        if type(module) is not _Watched:
            _namespaces.add(filename)  # read by string unseen: all its constants
        is_init = filename.endswith(_INIT)
        re_module = sys.modules.get("re")
        plain = _PLAIN + ((re_module.Pattern,) if re_module is not None and hasattr(re_module, "Pattern") else ())
        for name, value in list(namespace.items()):
            if type(value) in plain and (not name.startswith("__") or name in _DUNDER_CONSTANTS):
                _index_name(name, filename)
            elif type(value) is _FunctionType and not name.startswith("__") and \
                    value.__code__.co_filename == filename and value.__name__ == name:
                # A plain function's header (ste_fingerprint.py, "sig").
                _index_name(name, filename)
            elif is_init and not name.startswith("__") and not isinstance(value, _ModuleType):
                # A package's own names: what its imports bind (ste_fingerprint.py,
                # "imports": a part of its own in an __init__.py).
                _index_name(name, filename)


def _by_module(filename):
    """Whether the globals that code of `filename` loads are its module's
    own (or copies its imports made): a module of the repository loaded
    from it, whose namespace was not read or written by string, and into
    which no `import *` copied."""
    return filename in _indexed and filename not in _namespaces and filename not in _namespace_records and \
        filename not in _star_importers


def _global_record(filename, name):
    """Records `name` for `filename` and each file its binding was copied
    from (`from m import name`, transitively): those that bind it."""
    files = _const_index.get(name)
    if not files:
        return
    seen, stack = {filename}, [filename]
    while stack:
        for source in _copied_from.get((stack.pop(), name), ()):
            if source is None:  # not told which module: each binding it
                for other in files:
                    _name_record(other, name)
                return
            if source not in seen:
                seen.add(source)
                stack.append(source)
    for other in seen:
        if other in files:
            _name_record(other, name)


def _settle_globals(new_names):
    """The global loads since the last call (_new_globals): recorded by
    module (_global_record), or, for code whose globals are not told to be
    its module's own, as uses by name (into _new_used). `new_names`: names
    newly bound by a repository file, whose global loads are looked at
    again, as are those whose copies grew."""
    for filename in [f for f in _globals_by_file if not _by_module(f)]:
        _new_used.update(_globals_by_file.pop(filename))
    again = set(new_names)
    again.update(_new_copies)
    _new_copies.clear()
    for filename, name in _new_globals:
        if name in _names_used or name in _new_used:
            continue
        if not _by_module(filename):
            _new_used.add(name)
            continue
        names = _globals_by_file.setdefault(filename, set())
        if name not in names:
            names.add(name)
            _globals_files.setdefault(name, set()).add(filename)
            _global_record(filename, name)
    _new_globals.clear()
    for name in again:
        if name not in _names_used:
            for filename in _globals_files.get(name, ()):
                if filename in _globals_by_file:
                    _global_record(filename, name)


def emit():
    """Records the docstrings, constants and line reads seen so far."""
    global _reads_made
    _index_modules()
    if _looked_up:
        _new_used.update(_looked_up)
        _looked_up.clear()
    _settle_used()
    if _pending and len(_deferred) > _deferred_indexed or _new_pending:
        _take_deferred()
        _settle_used()
    if _imported_names:
        for key in _imported_names - _imported_done:
            level, module, name, importer = key
            _imported_done.add(key)
            target = _imported_file(level, module, importer)
            files = _const_index.get(name, ())
            if target is None:
                # Not told which module: each repository module binding the
                # name but the importer (whose import binds it there).
                for filename in files:
                    if filename != importer:
                        _absent.add((filename, name))
            elif target in files:
                _absent.add((target, name))
            if target != "":  # (a copy of a library's value: no file of ours)
                sources = _copied_from.setdefault((importer, name), set())
                if target not in sources:
                    sources.add(target)
                    _new_copies.add(name)
        _imported_names.clear()
    _settle_globals([name for name, _ in _new_pairs])
    _settle_used()
    for name, filename in _new_pairs:
        if name in _names_used:
            _name_record(filename, name)
    _new_pairs.clear()
    while _namespaces:
        filename = _namespaces.pop()
        if filename not in _namespace_records:
            _namespace_records.add(filename)
            _stat("%s/%s" % (filename, _NAMESPACE))
    while _stars:
        filename = _stars.pop()
        if filename not in _star_records:
            _star_records.add(filename)
            _stat("%s/%s" % (filename, _STAR))
    while _absent:
        key = _absent.pop()
        if key not in _absent_records and "/" not in key[1] and "\0" not in key[1]:
            _absent_records.add(key)
            _stat("%s/%s%s" % (key[0], _ABSENT, key[1]))
    while _docs_used:
        key = _docs_used.pop()
        if key not in _doc_records:
            _doc_records.add(key)
            _stat("%s/%s%d" % (key[0], _DOC, key[1]))
    while _lines_shown:
        key = _lines_shown.pop()
        if key not in _line_records:
            _line_records.add(key)
            _stat("%s/%s%d" % (key[0], _LINE, key[1]))
    for kind, prefix in (("frames", _POSITIONS), ("code", _CODE_LINES)):
        if _reads[kind]:
            _reads[kind] = False
            _reads_made += 1
            _stat("%s%d.%d" % (prefix, os.getpid(), _reads_made))


# --- Docstrings (see the header) ---


class _Doc(str):
    """A docstring of the repository: the same text, noting its first use."""

    def __bool__(self):
        return str.__len__(self) > 0  # emptiness is module-level

    def __reduce_ex__(self, protocol):
        _docs_used.add(self._ste_at)
        return (str, (str.__str__(self),))

    def __radd__(self, other):
        _docs_used.add(self._ste_at)
        return other + str.__str__(self)


def _doc_method(name):
    method = getattr(str, name)

    def noted(self, *args, **kwargs):
        _docs_used.add(self._ste_at)
        return method(self, *args, **kwargs)

    noted.__name__ = name
    return noted


_NOT_USES = {"__new__", "__init__", "__getattribute__", "__setattr__", "__delattr__", "__class__", "__init_subclass__",
             "__subclasshook__", "__dir__", "__sizeof__", "__reduce__", "__reduce_ex__", "__getstate__", "__doc__",
             "maketrans", "__bool__"}
for _name in dir(str):
    if _name not in _NOT_USES and callable(getattr(str, _name)):
        setattr(_Doc, _name, _doc_method(_name))
del _name


def _doc(text, filename, line):
    d = _Doc(text)
    d._ste_at = (filename, line)
    return d


def _doc_store_index(code):
    """The index in co_consts of the string a module or class body stores
    to __doc__ first thing, or None."""
    ops = code.co_code
    load_const, store_name = _OPS["LOAD_CONST"], _OPS["STORE_NAME"]
    last_const = None
    for at in range(0, min(len(ops), 80), 2):
        op, arg = ops[at], ops[at + 1]
        if op == store_name:
            if code.co_names[arg] == "__doc__":
                return last_const
            last_const = None
        elif op == load_const:
            last_const = arg
        elif op != 0:  # CACHE entries sit between instructions
            if op in _OPS_DOC_STOP:
                return None
    return None


def _with_docs(code, filename, line, body):
    """`code` with its docstring a _Doc; a module's or class's (`body`):
    those of the classes and definitions directly in it too."""
    consts = list(code.co_consts)
    changed = False
    if body:
        k = _doc_store_index(code)
        if k is not None and k < len(consts) and type(consts[k]) is str:
            consts[k] = _doc(consts[k], filename, line)
            changed = True
        for i, c in enumerate(consts):
            if type(c) is _CodeType and not c.co_name.startswith("<"):
                new = _with_docs(c, filename, c.co_firstlineno, not c.co_flags & 1)
                if new is not c:
                    consts[i] = new
                    changed = True
    elif consts and type(consts[0]) is str and _FIRST_CONST_IS_DOC:
        consts[0] = _doc(consts[0], filename, line)
        changed = True
    return code.replace(co_consts=tuple(consts)) if changed else code


def _absent_noted(module, name):
    """A name looked up in a repository module and not found (after the
    module's own lookup and its __getattr__): `hasattr(m, n)`, `getattr(m,
    n, d)`, `from m import n`."""
    try:
        filename = _MODULE_DICT.__get__(module).get("__file__")
        if type(filename) is str and type(name) is str and (not name.startswith("__") or name in _DUNDERS):
            _absent.add((filename, name))
    except Exception:
        _mark_broken()


class _Watched(type(sys)):
    """A repository module whose namespace read by string, and whose names
    looked up and not found, are noted. (use_compiled() replaces it with
    the same on _ste_tracer's module type, which notes a failed lookup
    without a call of __getattr__ in Python.)"""

    def __getattr__(self, name):
        # Called only when the module's own lookup (and its __getattr__)
        # failed.
        _absent_noted(self, name)
        namespace = _MODULE_DICT.__get__(self)
        if "__getattr__" in namespace:  # (not asked twice)
            raise AttributeError("module %r has no attribute %r" % (namespace.get("__name__"), name))
        return _MODULE_GETATTRIBUTE(self, name)  # the interpreter's own error

    def __dir__(self):
        _note_namespace(self, 1)
        return _MODULE_DIR(self)

    @property
    def __dict__(self):
        _note_namespace(self, 2)
        return _MODULE_DICT.__get__(self)


def _watched_on(base):
    """_Watched's namespace reads on `base`, a subclass of the module type
    that notes failed lookups itself (_ste_tracer.module_type)."""
    return type("_Watched", (base,), {
        "__doc__": _Watched.__doc__,
        "__module__": __name__,
        "__dir__": _Watched.__dict__["__dir__"],
        "__dict__": _Watched.__dict__["__dict__"],
    })


def _note_namespace(module, depth):
    try:
        frame = sys._getframe(depth)
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib"):
            return  # the import system runs the module's code in it
        filename = _MODULE_DICT.__get__(module).get("__file__")
        if type(filename) is not str:
            return
        if frame.f_code.co_code[frame.f_lasti] in _OPS_IMPORT_STAR:
            # `import *` copies, and the copies' uses are by name; which
            # names it copied matters to the importer.
            _stars.add(filename)
        else:
            _namespaces.add(filename)
    except Exception:
        _mark_broken()


# traceback's and inspect's module code, run by this stub as they load
# (get_code below hands it out instead), then wrapped (_LINE_READERS).
_READER_STUB = "exec(_ste_code, globals())\n_ste_loaded(globals())\n"


def _reader_loaded(namespace):
    namespace.pop("_ste_code", None)
    namespace.pop("_ste_loaded", None)
    module = sys.modules.get(namespace.get("__name__"))
    if module is not None and _MODULE_DICT.__get__(module) is namespace:
        if module.__name__ in _LINE_READERS:
            _wrap_line_readers(module)
        else:
            _wrap_line_makers(module)


def _wrap_loader():
    """Docstrings made _Docs and modules _Watched as the repository's
    modules are loaded, and traceback and inspect wrapped. Only get_code
    is wrapped, never exec_module: a frame of ours under a module's code
    would shift every warning it makes at import by one (warnings skips
    the import system's frames only) and point it at this file."""
    from importlib import _bootstrap_external

    source_loader = _bootstrap_external.SourceLoader
    original_get_code = source_loader.get_code
    module_type = type(sys)
    stub = compile(_READER_STUB, "<ste_parts: traceback and inspect as they load>", "exec")

    def get_code(self, fullname):
        code = original_get_code(self, fullname)
        try:
            filename = getattr(code, "co_filename", None)
            # The import system puts the module in sys.modules before it
            # asks for its code.
            module = sys.modules.get(fullname)
            namespace = _MODULE_DICT.__get__(module) if type(module) in (module_type, _Watched) else {}
            if type(filename) is str and filename.startswith(_root) and filename.endswith(".py"):
                code = _with_docs(code, filename, 0, True)
                _stat("%s/%s" % (filename, _DOCS_TRACKED))
                if type(module) is module_type and namespace.get("__file__") == filename:
                    module.__class__ = _Watched
            elif (fullname in _LINE_READERS or fullname in _LINE_MAKERS) and namespace.get("__file__") == filename:
                namespace["_ste_code"], namespace["_ste_loaded"] = code, _reader_loaded
                code = stub
        except Exception:
            _mark_broken()
        return code

    source_loader.get_code = get_code


def _wrap_doc_readers():
    """textwrap.dedent and the re module's functions read a string's
    characters from C: a _Doc argument is noted first."""
    import re
    import textwrap

    def noting(function):
        def wrapper(*args, **kwargs):
            for a in args:
                if type(a) is _Doc:
                    _docs_used.add(a._ste_at)
            return function(*args, **kwargs)

        wrapper.__name__ = function.__name__
        wrapper.__qualname__ = getattr(function, "__qualname__", function.__name__)
        wrapper.__doc__ = function.__doc__
        wrapper.__wrapped__ = function
        return wrapper

    textwrap.dedent = noting(textwrap.dedent)
    for name in ("match", "search", "fullmatch", "sub", "subn", "split", "findall", "finditer"):
        setattr(re, name, noting(getattr(re, name)))


def _wrap_line_printers():
    """The interpreter prints a traceback with lines from C: its hooks are
    wrapped to note that lines were read."""
    import _thread

    threading = sys.modules.get("threading")
    thread_hook = getattr(_thread, "_excepthook", None)
    holders = [(sys, "excepthook"), (sys, "unraisablehook"), (_thread, "_excepthook")]
    if threading is not None and thread_hook is not None and getattr(threading, "excepthook", None) is thread_hook:
        holders.append((threading, "excepthook"))  # bound before we came
    wrapped = {}
    for holder, name in holders:
        original = getattr(holder, name, None)
        if original is None:
            continue
        if id(original) not in wrapped:

            def hook(*args, _original=original):
                try:
                    if len(args) == 3:  # sys.excepthook(type, value, traceback)
                        lines = _exception_lines(args[1], args[2])
                    elif len(args) == 1:  # the others: one object of both
                        lines = _exception_lines(getattr(args[0], "exc_value", None),
                                                 getattr(args[0], "exc_traceback", None))
                    else:
                        lines = None
                    if not lines:
                        _reads["frames"] = True
                    else:
                        for filename, lineno in lines:
                            _line_shown(filename, lineno)
                except Exception:
                    _mark_broken()
                return _original(*args)

            wrapped[id(original)] = hook
        setattr(holder, name, wrapped[id(original)])


# The modules whose makers of lines are wrapped to say which line they take
# (see "Lines shown").
_LINE_MAKERS = ("warnings", "logging")

# logging.Logger.findCaller's wrapper, compiled as logging's own file (see
# "Lines shown"): findCaller skips logging's frames to find the caller.
_FIND_CALLER = """
def findCaller(self, stack_info=False, stacklevel=1):
    found = _ste_find_caller(self, stack_info, stacklevel)
    _ste_shown(found)
    return found
"""


def _wrap_line_makers(module):
    """Wraps warnings.WarningMessage.__init__ or logging.Logger.findCaller
    to note the line each takes (see "Lines shown")."""
    global _warnings_noted
    if getattr(module, "_ste_wrapped", False):
        return
    module._ste_wrapped = True
    try:
        if module.__name__ == "warnings":
            cls = getattr(module, "WarningMessage", None)
            init = cls.__dict__.get("__init__") if isinstance(cls, type) else None
            filename = getattr(module, "__file__", None)
            if not callable(init) or type(filename) is not str:
                return

            def __init__(self, message, category, filename, lineno, *args, **kwargs):
                _line_shown(filename, lineno)
                init(self, message, category, filename, lineno, *args, **kwargs)

            __init__.__qualname__, __init__.__doc__, __init__.__wrapped__ = init.__qualname__, init.__doc__, init
            cls.__init__ = __init__
            _warnings_noted = filename
        elif module.__name__ == "logging":
            logger = getattr(module, "Logger", None)
            find = logger.__dict__.get("findCaller") if isinstance(logger, type) else None
            code = getattr(find, "__code__", None)
            if code is None or not callable(getattr(module, "_is_internal_frame", None)) or \
                    getattr(module, "_srcfile", None) != os.path.normcase(code.co_filename):
                return  # (before 3.11 findCaller skips frames otherwise: its names count)

            def shown(found):
                try:
                    _line_shown(found[0], found[1])
                except Exception:
                    _mark_broken()

            namespace = {"_ste_find_caller": find, "_ste_shown": shown}
            exec(compile(_FIND_CALLER, code.co_filename, "exec"), namespace)
            wrapper = namespace["findCaller"]
            wrapper.__qualname__, wrapper.__doc__, wrapper.__wrapped__ = find.__qualname__, find.__doc__, find
            logger.findCaller = wrapper
            _lines_noted.add((code.co_filename, code.co_name))
    except Exception:
        _mark_broken()


# traceback's and inspect's functions that hand out lines, and what they
# read (see "Places"): the test runner calls them too (an item's location,
# a skip's or a failure's report), so a call counts where it comes from, not
# by the names their code holds.
_LINE_READERS = {
    "traceback": {name: "frames" for name in (
        "extract_tb", "extract_stack", "format_tb", "format_stack", "format_exception", "format_exc",
        "print_tb", "print_stack", "print_exception", "print_exc", "print_last", "walk_tb", "walk_stack")},
    "inspect": {"findsource": "code", "getsourcelines": "code", "getlineno": "frames", "getframeinfo": "frames",
                "getouterframes": "frames", "getinnerframes": "frames", "stack": "frames", "trace": "frames"},
}
_reader_files = frozenset()  # the files of the modules wrapped


# The readers whose first argument, f, is a frame, the caller's when None.
_CALLERS_FRAME = frozenset(("extract_stack", "format_stack", "print_stack"))


def _stack_lines(frame):
    out = []
    while frame is not None:
        out.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return out


def _tb_lines(tb):
    out = []
    while tb is not None:
        out.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return out


def _exception_lines(value, tb):
    """The lines of the frames a traceback of `value` shows: its own (`tb`,
    or its __traceback__), its cause's and context's, and those of a
    group's exceptions, each chained in turn."""
    out, seen, todo = [], set(), [(value, tb)]
    while todo:
        value, tb = todo.pop()
        if tb is not None:
            out.extend(_tb_lines(tb))
        if not isinstance(value, BaseException) or id(value) in seen:
            continue
        seen.add(id(value))
        if tb is None:
            out.extend(_tb_lines(value.__traceback__))
        todo.append((value.__cause__, None))
        todo.append((value.__context__, None))
        if isinstance(value, _GROUP):
            todo.extend((inner, None) for inner in value.exceptions)
    return out


_GROUP = getattr(builtins, "BaseExceptionGroup", ())  # (3.11+)


def _frames_read(name, args, kwargs, caller):
    """(file, line) of each frame whose line the reader `name` called so
    reads (traceback's and inspect's, see "Lines shown"), or None when that
    cannot be told (every frame that ran then)."""
    def arg(i, key, default=None):
        return args[i] if len(args) > i else kwargs.get(key, default)

    if name in ("extract_stack", "format_stack", "print_stack", "getouterframes"):
        frame = arg(0, "f" if name != "getouterframes" else "frame")
        return _stack_lines(caller if frame is None else frame)
    if name == "stack":
        return _stack_lines(caller)
    if name in ("extract_tb", "format_tb", "print_tb", "walk_tb", "getinnerframes"):
        return _tb_lines(arg(0, "tb"))
    if name in ("format_exception", "print_exception"):
        if len(args) > 1 or "value" in kwargs:
            return _exception_lines(arg(1, "value"), arg(2, "tb"))
        return _exception_lines(arg(0, "exc"), None)
    if name in ("format_exc", "print_exc", "trace"):
        return _exception_lines(sys.exc_info()[1], sys.exc_info()[2])
    if name == "print_last":
        return _exception_lines(getattr(sys, "last_value", None), getattr(sys, "last_traceback", None))
    if name == "TracebackException.__init__":
        return _exception_lines(arg(2, "exc_value"), arg(3, "exc_traceback"))
    if name == "TracebackException.from_exception":
        return _exception_lines(arg(1, "exc"), None)
    if name in ("getframeinfo", "getlineno"):
        frame = arg(0, "frame")
        if hasattr(frame, "tb_lineno"):
            return _tb_lines(frame)[:1]
        return [(frame.f_code.co_filename, frame.f_lineno)]
    return None  # walk_stack(None), StackSummary.extract: which frames is not told


def _wrap_line_readers(module):
    """Wraps `module`'s functions of _LINE_READERS (and traceback's
    classes): a call from code other than the runner's, this tracker's or
    the readers' own notes the read."""
    global _reader_files
    filename = getattr(module, "__file__", None)
    if type(filename) is not str or getattr(module, "_ste_wrapped", False):
        return
    _reader_files = _reader_files | {filename}
    module._ste_wrapped = True

    def counts(caller):
        if _RUNNERS:
            _find_runners()
        filename = caller.f_code.co_filename
        return not filename.startswith(_not_watching) and filename not in _reader_files

    originals = {name: getattr(module, name, None) for name in _LINE_READERS[module.__name__]}

    def wrap(function, kind, owner=None):
        name = function.__name__

        def reader(*args, **kwargs):
            caller = sys._getframe(1)
            try:
                if counts(caller):
                    lines = _frames_read(owner or name, args, kwargs, caller) if kind == "frames" else None
                    if lines is None:
                        _reads[kind] = True
                    else:
                        for filename, lineno in lines:
                            _line_shown(filename, lineno)
            except Exception:
                _mark_broken()
            # What takes the caller's frame when given none gets ours
            # otherwise: it is handed the caller's, as without the wrapper.
            if name in _CALLERS_FRAME:
                if args and args[0] is None:
                    args = (caller,) + args[1:]
                elif not args and kwargs.get("f") is None:
                    kwargs["f"] = caller
            elif name == "stack" and module.__name__ == "inspect" and callable(originals.get("getouterframes")):
                return originals["getouterframes"](caller, *args, **kwargs)
            return function(*args, **kwargs)

        reader.__name__, reader.__qualname__, reader.__doc__ = function.__name__, function.__qualname__, function.__doc__
        reader.__wrapped__ = function
        return reader

    for name, kind in _LINE_READERS[module.__name__].items():
        function = getattr(module, name, None)
        if callable(function):
            setattr(module, name, wrap(function, kind))
    if module.__name__ == "traceback":
        for cls, name in (("TracebackException", "__init__"), ("TracebackException", "from_exception"),
                          ("StackSummary", "extract")):
            holder = getattr(module, cls, None)
            raw = holder.__dict__.get(name) if holder is not None else None
            if isinstance(raw, classmethod):
                setattr(holder, name, classmethod(wrap(raw.__func__, "frames", cls + "." + name)))
            elif callable(raw):
                setattr(holder, name, wrap(raw, "frames", cls + "." + name))


def setup(root, stat, mark_broken):
    """Starts watching (ste_defs.start calls this before its tracer starts:
    what runs here is not what the program ran)."""
    global _root, _stat, _mark_broken
    _root, _stat, _mark_broken = root, stat, mark_broken
    global _BINDING_OPS, _OPS, _OPS_DOC_STOP, _OPS_IMPORT_STAR, _MODULE_DICT, _MODULE_GETATTRIBUTE, _MODULE_DIR
    global _FIRST_CONST_IS_DOC, _not_watching
    import opcode

    _OPS = opcode.opmap
    _BINDING_OPS = _binding_ops()
    global _BINDING_TABLE
    _BINDING_TABLE = bytes(1 if op in _BINDING_OPS else 0 for op in range(256))
    global _NAME_OPS, _NAME_SHIFT, _EXTENDED_ARG, _IMPORT_FROM
    _NAME_OPS = frozenset(opcode.hasname)
    _IMPORT_FROM = opcode.opmap["IMPORT_FROM"]
    global _IMPORT_NAME, _LOAD_CONST
    _IMPORT_NAME = opcode.opmap["IMPORT_NAME"]
    _LOAD_CONST = opcode.opmap["LOAD_CONST"]
    _EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]
    global _STORE_NAMES, _GLOBAL_OPS
    _STORE_NAMES = (opcode.opmap["STORE_NAME"], opcode.opmap["STORE_GLOBAL"])
    _GLOBAL_OPS = frozenset(opcode.opmap[k] for k in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS")
                            if k in opcode.opmap)
    # The name index is the argument shifted: LOAD_GLOBAL (3.11+) and
    # LOAD_ATTR (3.12+) carry a flag bit, LOAD_SUPER_ATTR (3.12+) two.
    _NAME_SHIFT = {}
    if sys.version_info >= (3, 11):
        _NAME_SHIFT[opcode.opmap["LOAD_GLOBAL"]] = 1
    if sys.version_info >= (3, 12):
        _NAME_SHIFT[opcode.opmap["LOAD_ATTR"]] = 1
        if "LOAD_SUPER_ATTR" in opcode.opmap:
            _NAME_SHIFT[opcode.opmap["LOAD_SUPER_ATTR"]] = 2
    _OPS_DOC_STOP = frozenset(v for k, v in opcode.opmap.items() if k.startswith(("CALL", "RETURN", "JUMP", "POP_JUMP", "IMPORT")))
    _OPS_IMPORT_STAR = frozenset(opcode.opmap[k] for k in ("IMPORT_STAR",) if k in opcode.opmap)
    global _STORE_OPS
    _STORE_OPS = frozenset(opcode.opmap[k] for k in ("STORE_ATTR", "DELETE_ATTR", "STORE_NAME", "STORE_GLOBAL",
                                                      "DELETE_NAME", "DELETE_GLOBAL") if k in opcode.opmap)
    _MODULE_DICT = type(sys).__dict__["__dict__"]
    _MODULE_GETATTRIBUTE = type(sys).__getattribute__
    _MODULE_DIR = type(sys).__dir__
    # CPython puts a function's docstring first in co_consts (None when it
    # has none) up to 3.13; 3.14 says so with a flag.
    _FIRST_CONST_IS_DOC = sys.version_info < (3, 14)
    _not_watching = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)
    # (and the import system's own code: its lookups copy names)
    _lookups_skipped[:] = _not_watching + ("<frozen importlib",)
    _wrap_loader()
    _wrap_doc_readers()
    _wrap_line_printers()
    for name in _LINE_READERS:
        if name in sys.modules:
            _wrap_line_readers(sys.modules[name])
    # With warnings loaded, the interpreter shows each warning through it
    # (WarningMessage: "Lines shown"), not by printing lines from C.
    import warnings  # noqa: F401 (loaded through the wrapped get_code unless it was already)

    for name in _LINE_MAKERS:
        if name in sys.modules:
            _wrap_line_makers(sys.modules[name])


_RUNNERS = ["_pytest", "pluggy", "unittest"]
# The runners' files that look up every name of a module to find its tests,
# fixtures or hooks (_lookups_skipped): no use of a value or a header (what
# they find runs, or is module-level). Not their others: monkeypatch and
# mock look a name up to replace it, and it must still be there.
_FINDERS = {"_pytest": ("python.py", "fixtures.py", "compat.py", "unittest.py", "nose.py"),
            "pluggy": ("_manager.py",), "unittest": ("loader.py",)}


def _find_runners():
    """Adds the test runners' package directories, once each is imported
    (see "Places"): looked up in sys.modules, never searched for."""
    global _not_watching
    for package in list(_RUNNERS):
        module = sys.modules.get(package)
        origin = getattr(module, "__file__", None)
        if type(origin) is str:
            _RUNNERS.remove(package)
            if not origin.startswith(_root):
                _not_watching += (os.path.dirname(origin) + os.sep,)
                _lookups_skipped.extend(os.path.join(os.path.dirname(origin), f) for f in _FINDERS[package])


