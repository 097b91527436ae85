"""What the Python definition tracker says of docstrings, constants and
lines read (integrations/python/ste_site/ste_parts.py), in a real
interpreter (ctest PythonDefinitionParts).

    /usr/bin/python3 tests/integrations/python_defs_parts_test.py [PRELOAD]

Each case is a function of a small program run by a fresh /usr/bin/python3 with the
tracker started as ste_names.py starts it (ste_defs.start(),
STE_DEFINITIONS = a temporary repository holding the package `pkg`), whose
stats are written to a file instead (the program replaces ste_defs._stat
first); the case then checks exactly which records the process made. The
end-to-end selections, with ground truth, are definitions_e2e_test.cc's.

With PRELOAD (the interceptor, _ste_tracer beside it in python/, found as a
tracked process finds it) each program runs twice: with the tracker's
Python readers and module type (the fallback's), and with _ste_tracer's;
the records must be the same.
"""

import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PRELOAD = None  # argv[1]
SITE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "integrations", "python", "ste_site")

PACKAGE = {
    "pkg/__init__.py": 'from . import meta\nfrom .meta import __version__\n__all__ = ["meta", "TAX"]\n',
    "pkg/meta.py": textwrap.dedent('''\
        """The module."""
        import functools

        __version__ = "1.0"
        TAX = 20
        UNUSED = 3


        def version():
            """Return the version."""
            return __version__


        def quiet():
            """Nobody reads me."""
            return 1


        def boom():
            raise ValueError("boom")


        def _wrap(f):
            @functools.wraps(f)
            def wrapper(*a):
                return f(*a)
            return wrapper


        @_wrap
        def helped():
            """Help text."""
            return 2


        class Shop:
            """A shop."""

            def price(self):
                return TAX


        def warn_here():
            import warnings
            warnings.warn("here")


        def log_here(level=1):
            import logging
            logging.getLogger("pkg.meta").warning("here", stacklevel=level)
        '''),
    # A library outside the repository (on sys.path) that names its own
    # __version__ and reads lines.
    "lib/outside.py": '__version__ = "9"\n\ndef version():\n    return __version__\n',
    # A module named like the builtin (click has one), imported by name:
    # no read of a namespace. The builtin called is one.
    "pkg/globals.py": "G = 1\n",
    "pkg/other.py": "G = 2\n",
    "pkg/ns.py": "from .globals import G\n\n\ndef via_import():\n    return G\n\n\n"
                 "def via_builtin():\n    return sorted(globals())\n",
    # A module answering names it does not bind; a class's __getattr__.
    "pkg/lazy.py": "NEW = 1\n\n\ndef __getattr__(name):\n    if name == 'old_name':\n        return NEW\n"
                   "    raise AttributeError(name)\n\n\nclass Box:\n    def __getattr__(self, name):\n        return 2\n",
    # Constants bound by a module loaded late (Constants' tests).
    "pkg/late.py": "LATE = 5\nLATER = 6\n",
    # Copies of late's constants: under their own name, another, a local.
    "pkg/copies.py": "from .late import LATER\n\n\ndef local():\n    from .late import LATE\n    return LATE\n\n\n"
                     "def aliased():\n    from .late import LATER as L2\n    return L2\n\n\n"
                     "def own_name():\n    return LATER\n",
    # Tables of one name in several modules: each module's code loads its
    # own; g3 copies g1's, g4 all of g1's names.
    "pkg/g1.py": "KNOWN = {'a': 1}\n\n\ndef use():\n    return KNOWN['a']\n",
    "pkg/g2.py": "KNOWN = {'b': 2}\n\n\ndef use():\n    return KNOWN['b']\n",
    "pkg/g3.py": "from .g1 import KNOWN\n\n\ndef use():\n    return KNOWN['a']\n",
    "pkg/g4.py": "from .g1 import *\n\n\ndef use():\n    return KNOWN['a']\n",
    # A compiled pattern is a constant (ste_fingerprint.py, "const").
    "pkg/pat.py": "import re\n\nDIGITS = re.compile(r'\\d+')\n\n\ndef digits(s):\n    return DIGITS.findall(s)\n",
    # A deprecated module: it warns as it is imported, at its importer.
    "pkg/old.py": 'import warnings\nwarnings.warn("old", DeprecationWarning, stacklevel=2)\n',
    # A test runner's package (by its name, as the tracker finds pytest's):
    # its calls of traceback and inspect are not the program's reads.
    "lib/_pytest/__init__.py": "import inspect, traceback\n\ndef where(f):\n    return inspect.getsourcelines(f)[1]\n\n"
                               "def report():\n    return traceback.format_exc()\n",
    # Its finder looks up every name of a module (no use), its monkeypatch
    # the one it replaces (a use: it must still be there).
    "lib/_pytest/python.py": "def collect(m):\n    return [getattr(m, n) for n in dir(m)]\n",
    "lib/_pytest/monkeypatch.py": "def patch(m, n, v):\n    old = getattr(m, n)\n    setattr(m, n, v)\n    return old\n",
}

PROGRAM = r'''
import os, sys
sys.path.insert(0, os.environ["SITE"])
import ste_defs

_out = open(os.environ["RECORDS"], "a")
def _stat(path):
    _out.write(path.replace("\x01", "^").replace(os.environ["ROOT"] + "/", "") + "\n")
    _out.flush()
ste_defs._stat = _stat
os.environ["STE_DEFINITIONS"] = os.environ["ROOT"]
ste_defs.start()
sys.path.insert(0, os.environ["ROOT"])
sys.path.insert(0, os.environ["LIB"])
import pkg
from pkg import meta
ste_defs.flush()


def case():
CASE


_stat("/^case")
case()
ste_defs.flush()
'''


def run(case, modes=None, compare=True):
    """The records the program made after the package was imported (by
    each of `modes`: None for the Python readers, PRELOAD for _ste_tracer's;
    both by default when there is a PRELOAD; the same unless not `compare`)."""
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as lib:
        for rel, text in PACKAGE.items():
            base = lib if rel.startswith("lib/") else root
            path = os.path.join(base, rel[4:] if rel.startswith("lib/") else rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        records = os.path.join(root, "records")
        program = os.path.join(root, "prog.py")
        with open(program, "w") as f:
            f.write(PROGRAM.replace("CASE", textwrap.indent(textwrap.dedent(case), "    ")))
        env = dict(os.environ, SITE=SITE, ROOT=root, LIB=lib, RECORDS=records, PYTHONDONTWRITEBYTECODE="1")
        env.pop("STE_DEFINITIONS", None)
        env.pop("LD_PRELOAD", None)
        runs = []
        for preload in modes or ((None, PRELOAD) if PRELOAD else (None,)):
            env.pop("LD_PRELOAD", None)
            if preload:
                env["LD_PRELOAD"] = preload
            done = subprocess.run(["/usr/bin/python3", "-B", program], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise AssertionError(done.stdout + done.stderr)
            with open(records) as f:
                runs.append(split(f.read().split("\n")))
            os.unlink(records)
    if compare and len(runs) == 2 and same(runs[0]) != same(runs[1]):
        raise AssertionError("the Python readers and _ste_tracer's differ:\n%s\n%s" % tuple(runs))
    return runs[-1]


def same(run):
    """What must be the same in both modes: every record, in any order,
    but the markers (the fallback's slow-tracer notice), pids aside."""
    return [sorted(re.sub(r":[0-9]+", ":<pid>", r) for r in part if not r.startswith("/^ste-defs-slow:"))
            for part in run]


def split(lines):
    at = lines.index("/^case")
    before = [l for l in lines[:at] if "^ste-code:" not in l]
    after = {l for l in lines[at + 1:] if l and "^ste-code:" not in l}
    return before, after


def kinds(records, kind):
    return {r for r in records if kind in r}


class Docstrings(unittest.TestCase):
    def test_a_docstring_is_the_same_text_and_only_a_use_is_recorded(self):
        before, after = run("""
            assert meta.quiet.__doc__ == "Nobody reads me."  # a use: ==
            assert type(meta.version.__doc__).__name__ == "_Doc" and isinstance(meta.version.__doc__, str)
            bool(meta.boom.__doc__), bool(meta.version.__doc__)  # emptiness is module-level
            """)
        self.assertIn("pkg/meta.py/^ste-docs-tracked", before)
        self.assertEqual(kinds(before, "^ste-doc:"), set(), "importing uses no docstring")
        self.assertEqual(kinds(after, "^ste-doc:"), {"pkg/meta.py/^ste-doc:14"})

    def test_readers(self):
        for case, line in [
            ("import inspect; inspect.getdoc(meta.version)", 9),
            ("'Help' in meta.helped.__doc__", 30),  # a functools.wraps copy (its first decorator's line)
            ("import textwrap; textwrap.dedent(meta.Shop.__doc__)", 36),  # C reads, noted first
            ("import re; re.search('module', meta.__doc__)", 0),
            ("import pickle; assert type(pickle.loads(pickle.dumps(meta.version.__doc__))) is str", 9),
        ]:
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "^ste-doc:"), {"pkg/meta.py/^ste-doc:%d" % line})


class Constants(unittest.TestCase):
    def test_importing_copies_and_the_namers_use(self):
        before, after = run("meta.version(); getattr(meta, 'TAX')")
        # meta's module-level code names its decorator, _wrap (a function of
        # its own: a plain function's header is a part), and the program
        # its own _stat; nothing else is a use.
        self.assertEqual(kinds(before, "^ste-name:"), {"pkg/meta.py/^ste-name:_wrap", "prog.py/^ste-name:_stat"},
                         "`from .meta import __version__` and __all__'s names are copies, not uses")
        # (pkg/__init__.py binds __version__ too, by an import: ste has no
        # constant of that name there, and drops the record.)
        self.assertEqual(kinds(after, "pkg/meta.py/^ste-name:"),
                         {"pkg/meta.py/^ste-name:__version__", "pkg/meta.py/^ste-name:TAX",
                          "pkg/meta.py/^ste-name:version"})

    def test_code_that_ran_before_the_module_binding_its_name_loaded_is_a_use(self):
        # Code naming LATE and LATER ran, and what ran was emitted, before
        # pkg.late bound them; then code naming LATER only, emitted with
        # the import. Each name of code that ran is a use once a module of
        # the repository binds it, whenever that module comes.
        _, after = run("""
            import types
            def peek(ns):
                return getattr(ns, "x", None) or (ns.LATE if hasattr(ns, "y") else None)
            peek(types.SimpleNamespace())
            ste_defs.flush()
            def peek_later(ns):
                return ns.LATER if hasattr(ns, "y") else None
            peek_later(types.SimpleNamespace())
            ste_defs.flush()
            from pkg import late
            ste_defs.flush()
            """)
        self.assertEqual(kinds(after, "late.py/^ste-name:"), {"pkg/late.py/^ste-name:LATE", "pkg/late.py/^ste-name:LATER"})
        _, after = run("""
            from pkg import late
            ste_defs.flush()
            def peek(ns):
                return ns.LATE
            peek(late)
            """)
        self.assertEqual(kinds(after, "late.py/^ste-name:"), {"pkg/late.py/^ste-name:LATE"})

    def test_a_copy_its_users_do_not_name_is_a_use_where_it_is_imported(self):
        # `from m import X` bound as the global X: its users name X, the
        # import is no use. Bound under another name, or as a function's
        # local (loaded by slot), its users name no X: the import is a use.
        for case, used in [("from pkg import copies", set()),
                           ("from pkg import copies\ncopies.own_name()", {"LATER"}),
                           ("from pkg import copies\ncopies.local()", {"LATE"}),
                           ("from pkg import copies\ncopies.aliased()", {"LATER"}),
                           ("exec('from pkg.late import LATE as X', {})", {"LATE"})]:
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "late.py/^ste-name:"), {"pkg/late.py/^ste-name:" + n for n in used})

    def test_a_global_is_its_modules_own_or_what_its_imports_copied(self):
        # A name code of the repository loads only as a global (LOAD_GLOBAL,
        # LOAD_NAME) is its module's binding: recorded for that module and
        # the modules `from m import` copied it from, not for every module
        # binding that name. By name again: an attribute (any module's),
        # a module `import *` copied into, or one whose namespace was read.
        for case, files in [("from pkg import g1, g2\ng2.use()", {"g2"}),
                            ("from pkg import g1, g2\ng1.use()", {"g1"}),
                            ("from pkg import g2, g3\ng3.use()", {"g1", "g3"}),
                            ("from pkg import g2, g4\ng4.use()", {"g1", "g2", "g4"}),
                            ("from pkg import g1, g2\ng1.KNOWN", {"g1", "g2"}),
                            ("from pkg import g1, g2\ng2.use()\nvars(g2)", {"g1", "g2"}),
                            ("from pkg import g1, g2\ng2.use()\nste_defs.flush()\nvars(g2)", {"g1", "g2"})]:
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "^ste-name:KNOWN"), {"pkg/%s.py/^ste-name:KNOWN" % f for f in files})

    def test_under_the_compiled_tracer_a_lookup_by_string_is_noted_as_it_is_made(self):
        if not PRELOAD:
            self.skipTest("needs the interceptor and _ste_tracer beside it (argv[1])")
        # _ste_tracer's module type notes each name found by a lookup (not
        # the import system's copies): a name built at run time is seen,
        # and a string that names no lookup (a dict's key) is no use.
        for case, used in [("getattr(meta, 'TA' + 'X')", {"TAX"}),
                           ("import operator; operator.attrgetter('TAX')(meta)", {"TAX"}),
                           ("'{0.TAX}'.format(meta)", {"TAX"}),
                           ("import pkgutil; pkgutil.resolve_name('pkg.meta:TAX')", {"TAX"}),
                           ("settings = {'TAX': 1, 'UNUSED': 2}\nsettings['TAX']", set()),
                           ("exec('from pkg.meta import *', {})", set()),
                           ("exec('from pkg.meta import TAX, UNUSED', {})", set()),
                           # (pkg is a package: importlib's _handle_fromlist looks the name up)
                           ("exec('from pkg import __version__', {})", set())]:
            with self.subTest(case):
                _, after = run(case, modes=(PRELOAD,))
                self.assertEqual(kinds(after, "meta.py/^ste-name:") - {"pkg/meta.py/^ste-name:_wrap"},
                                 {"pkg/meta.py/^ste-name:" + n for n in used})
        # A runner's finder looks every name up: no use (dir() reads the
        # namespace); its monkeypatch looks one up: a use.
        for case, used in [("import _pytest.python\nste_defs.flush()\n_pytest.python.collect(meta)", set()),
                           ("import _pytest.monkeypatch\nste_defs.flush()\n"
                            "_pytest.monkeypatch.patch(meta, 'T' + 'AX', 5)", {"TAX"})]:
            with self.subTest(case):
                _, after = run(case, modes=(PRELOAD,))
                self.assertEqual(kinds(after, "meta.py/^ste-name:") - {"pkg/meta.py/^ste-name:_wrap"},
                                 {"pkg/meta.py/^ste-name:" + n for n in used})
        # (mock.patch reads the module's __dict__: every constant of it.)
        _, after = run("from unittest import mock\nwith mock.patch('pkg.meta.TAX', 5): pass", modes=(PRELOAD,))
        self.assertIn("pkg/meta.py/^ste-namespace", after)
        # The Python module type (the fallback's) notes failed lookups only:
        # there a string naming a constant is a use wherever it is.
        _, after = run("settings = {'TAX': 1}\nsettings['TAX']", modes=(None,))
        self.assertIn("pkg/meta.py/^ste-name:TAX", after)

    def test_a_library_naming_its_own_version_is_no_use(self):
        _, after = run("import outside; outside.version()")
        # (outside's code names its own function `version`, a name meta's
        # function has too: that record is wider than needed, not wrong.)
        self.assertEqual(kinds(after, "^ste-name:"), {"pkg/meta.py/^ste-name:version"})

    def test_a_compiled_pattern_named_by_code_that_ran_is_recorded(self):
        _, after = run("from pkg import pat\npat.digits('a1')")
        self.assertEqual(kinds(after, "pat.py/^ste-name:"), {"pkg/pat.py/^ste-name:DIGITS", "pkg/pat.py/^ste-name:digits"})

    def test_the_namespace_read_by_string(self):
        for case, read in [("dir(meta)", True), ("vars(meta)", True), ("import inspect; inspect.getmembers(meta)", True),
                           ("exec('from pkg.meta import *', {})", False), ("import importlib; importlib.reload(meta)", False)]:
            with self.subTest(case):
                # (getmembers then looks up each name: _ste_tracer's type
                # notes each lookup too, the Python one the read only.)
                _, after = run(case, compare="getmembers" not in case)
                self.assertEqual(kinds(after, "^ste-namespace"), {"pkg/meta.py/^ste-namespace"} if read else set())

    def test_a_module_named_globals_imported_is_no_read_of_a_namespace(self):
        for case, read in [("from pkg import ns\nns.via_import()", False), ("from pkg import ns\nns.via_builtin()", True)]:
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "^ste-namespace"), {"pkg/ns.py/^ste-namespace"} if read else set())


class NamesLookedUp(unittest.TestCase):
    """A name looked up on a module and not found (an absent record); the
    names `import *` copied (a star record): a plain function or constant
    added by that name is a change for the process (ste_fingerprint.py,
    "names")."""

    def test_under_the_compiled_tracer_modules_note_failed_lookups_in_c(self):
        if not PRELOAD:
            self.skipTest("needs the interceptor and _ste_tracer beside it (argv[1])")
        # run() compares the records of both module types (the cases
        # below: failed lookups); this checks that the second is
        # _ste_tracer's, with no __getattr__ in Python.
        _, after = run("""
            cls = type(meta)
            _stat("/^bases:" + ",".join(c.__name__ for c in cls.__mro__[1:3]))
            _stat("/^getattr-in-python:" + str(any("__getattr__" in c.__dict__ for c in cls.__mro__)))
            """, modes=(PRELOAD,))
        self.assertIn("/^bases:watched_module,module", after)
        self.assertIn("/^getattr-in-python:False", after)

    def test_a_failed_lookup_is_recorded_and_raises_as_before(self):
        for case, names in [
            ("hasattr(meta, 'LOUD')", {"LOUD"}),
            ("getattr(meta, 'loud', None)", {"loud"}),
            ("name = 'built' + 'here'\ngetattr(meta, name, None)", {"builthere"}),  # a name made at run time
            ("try:\n    from pkg.meta import shout\nexcept ImportError:\n    pass", {"shout"}),
            ("hasattr(meta, '__wrapped__'), hasattr(meta, '__version_info__')", {"__version_info__"}),  # dunders: no
            ("meta.TAX, hasattr(meta, 'version')", set()),  # found: no record
        ]:
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "^ste-absent:"), {"pkg/meta.py/^ste-absent:" + n for n in names})
        # The interpreter's own error, as without the tracker.
        _, after = run("""
            try:
                meta.missing
            except AttributeError as e:
                assert str(e) == "module 'pkg.meta' has no attribute 'missing'", str(e)
                assert e.name == "missing" and e.obj is meta
            else:
                raise AssertionError("no error")
            """)
        self.assertEqual(kinds(after, "^ste-absent:"), {"pkg/meta.py/^ste-absent:missing"})

    def test_a_name_a_modules_own_getattr_does_not_answer_is_absent(self):
        # (What ste_fingerprint.py's format 6 relies on: beside a
        # __getattr__ that spells out its names, any other name added is
        # seen by the lookups that failed.)
        for case, names in [("from pkg import lazy\nlazy.old_name", set()),
                            ("from pkg import lazy\nhasattr(lazy, 'other')", {"other"}),
                            ("from pkg import lazy\nlazy.Box().anything", set())]:
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "lazy.py/^ste-absent:"), {"pkg/lazy.py/^ste-absent:" + n for n in names})

    def test_a_name_imported_is_a_check_that_its_module_binds_it(self):
        # `from m import f` fails once m no longer binds f: every test that
        # ran the import depends on whether it does (not on f's value).
        # (At a module's top, as globals: in the case's function they would
        # be locals, whose import is a use.)
        _, after = run("exec('from pkg.meta import TAX, quiet', {})")
        self.assertEqual(kinds(after, "^ste-absent:"), {"pkg/meta.py/^ste-absent:TAX", "pkg/meta.py/^ste-absent:quiet"})
        self.assertEqual(kinds(after, "^ste-name:"), set(), "a copy, no use of the value")
        # Of the module imported from only (another binding the name is not
        # asked), relative or not; not of the importer, whose import binds
        # the name there.
        for case in ("from pkg import other\nfrom pkg import ns", "from pkg import other\nfrom pkg.globals import G"):
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "^ste-absent:G"), {"pkg/globals.py/^ste-absent:G"})

    def test_a_star_import_without_all_records_the_names_it_copied(self):
        _, after = run("exec('from pkg.meta import *', {})")
        self.assertEqual(kinds(after, "^ste-star"), {"pkg/meta.py/^ste-star"})
        self.assertEqual(kinds(after, "^ste-namespace"), set(), "no read by string: its values are used by name")
        # With __all__, `import *` copies what it lists (a change of it is
        # module-level code).
        _, after = run("meta.__all__ = ['TAX']\nexec('from pkg.meta import *', {})")
        self.assertEqual(kinds(after, "^ste-star"), set())

    def test_the_tracker_says_it_makes_these_records(self):
        before, _ = run("pass")
        self.assertEqual(len(kinds(before, "/^ste-defs-v3:")), 1)


class Stats(unittest.TestCase):
    def test_an_existence_check_is_no_read_its_size_or_times_are(self):
        for case, data in [
            ("os.path.isfile(meta.__file__), os.path.exists(meta.__file__)", False),
            ("import pathlib; pathlib.Path(meta.__file__).is_file()", False),
            ("os.path.realpath(meta.__file__)", False),
            ("import linecache; linecache.getline(meta.__file__, 1)", True),  # its open
            ("import inspect; inspect.getmodule(meta.version, meta.__file__)", False),
            ("os.path.getsize(meta.__file__)", True),
            ("os.stat(meta.__file__).st_mtime", True),
            ("import pathlib; pathlib.Path(meta.__file__).stat()", True),
            ("open(meta.__file__).read()", True),
        ]:
            with self.subTest(case):
                _, after = run(case)
                self.assertEqual(kinds(after, "^ste-data"), {"pkg/meta.py/^ste-data"} if data else set())


    def test_os_answers_about_its_wrapped_functions_as_without_ste(self):
        # The tracker wraps os.open, os.stat and os.lstat; code asks os's
        # supports_* sets about them (shutil.rmtree's symlink protection,
        # decided as shutil loads).
        run("""
            assert os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd
            assert os.stat in os.supports_follow_symlinks
            assert os.stat in os.supports_fd
            import importlib, shutil
            assert importlib.reload(shutil).rmtree.avoids_symlink_attacks
        """)


class Imports(unittest.TestCase):
    def test_a_warning_made_at_import_points_at_the_importer(self):
        # (sympy's test_deprecated checks its deprecation warnings' stacklevel.)
        run("""
            import warnings
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                import pkg.old
            assert [w.filename for w in caught] == [__file__], [w.filename for w in caught]
            """)


class Lines(unittest.TestCase):
    def test_reads_of_frames_and_of_code_objects(self):
        frames = ("try:\n    meta.boom()\nexcept ValueError as e:\n    e.__traceback__.tb_lineno\n")
        for case, kind in [
            ("meta.version()", None),
            (frames, "positions"),
            # (the frames a traceback shows are `line` records: LinesShown)
            ("import traceback\ntry:\n    meta.boom()\nexcept ValueError:\n    traceback.format_exc()\n", None),
            # (which frames is not told)
            ("import sys, traceback\ntraceback.StackSummary.extract(traceback.walk_stack(sys._getframe()))\n", "positions"),
            # (a warning's line is a `line` record of its own: LinesShown)
            ("import warnings\nwith warnings.catch_warnings(record=True):\n    warnings.warn('w')\n", None),
            # (pdb's Pdb() stores an attribute named tb_lineno: no read)
            ("import pdb\npdb.Pdb()\n", None),
            ("import warnings\nwith warnings.catch_warnings():\n    pass\n", None),
            ("meta.version.__code__.co_firstlineno", "code-lines"),
            ("import inspect; inspect.getsourcelines(meta.version)", "code-lines"),
            ("import inspect; inspect.getsource(meta.version)", None),  # its text, not its lines
            ("import _pytest; _pytest.where(meta.version)", None),
            ("import _pytest\ntry:\n    meta.boom()\nexcept ValueError:\n    _pytest.report()\n", None),
            ("import typing\n@typing.overload\ndef f(x: int) -> int: ...\n", None),
            # A body's bytecode read without running it (numba's jit, dis):
            # every definition loaded, as a read of code objects' lines.
            ("meta.version.__code__.co_code", "code-lines"),
            # (code that makes code objects copies bytecode: attrs, at import)
            ("import types\nc = meta.version.__code__\ntypes.CodeType\nc.co_code", None),
            # (dis hands out each instruction's position too)
            ("import dis\nlist(dis.get_instructions(meta.version))", ("code-lines", "positions")),
        ]:
            with self.subTest(case):
                _, after = run(case)
                got = {r.split(":")[0].lstrip("/^").replace("ste-", "") for r in after if "ste-positions" in r or "ste-code-lines" in r}
                self.assertEqual(got, set(kind) if type(kind) is tuple else {kind} if kind else set())


def line_of(text, rel="pkg/meta.py"):
    """The line of `rel` in PACKAGE that holds `text`."""
    return next(n for n, line in enumerate(PACKAGE[rel].split("\n"), 1) if text in line)


class LinesShown(unittest.TestCase):
    """A warning's location and a log record's caller are one frame's line
    each: a `line` record of it, not a read of every frame's lines."""

    def lines(self, case):
        _, after = run(case)
        reads = {r.split(":")[0].lstrip("/^") for r in after if "ste-positions" in r or "ste-code-lines" in r}
        return {r.replace("/^ste-line:", ":") for r in after if "^ste-line:" in r}, reads

    def test_a_warnings_location(self):
        at = line_of('warnings.warn("here")')
        for case in [
            "import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            "    meta.warn_here()\nassert w[0].lineno == %d, w[0].lineno\n" % at,
            # shown on stderr by the interpreter's warn, through warnings
            "meta.warn_here()\n",
            # formatted by a caller, at a location it names
            "import warnings\nwarnings.formatwarning('m', UserWarning, meta.__file__, %d)\n" % at,
        ]:
            with self.subTest(case):
                self.assertEqual(self.lines(case), ({"pkg/meta.py:%d" % at}, set()))

    def test_a_warning_ignored_or_outside_the_repository_is_no_line(self):
        for case in ["import warnings\nwarnings.simplefilter('ignore')\nmeta.warn_here()\n",
                     "import warnings\nwarnings.warn_explicit('m', UserWarning, '/elsewhere/x.py', 3)\n"]:
            with self.subTest(case):
                self.assertEqual(self.lines(case), (set(), set()))
        # a relative path: which file is unknown
        self.assertEqual(self.lines("import warnings\nwarnings.warn_explicit('m', UserWarning, 'x.py', 3)\n"),
                         (set(), {"ste-positions"}))

    def test_a_log_records_caller_as_logging_finds_it(self):
        at = line_of('warning("here"')
        check = ("import logging\nseen = []\nclass H(logging.Handler):\n    def emit(self, r):\n"
                 "        seen.append((os.path.basename(r.pathname), r.lineno, r.funcName))\n"
                 "logging.getLogger('pkg').addHandler(H())\n")
        self.assertEqual(self.lines(check + "meta.log_here()\nassert seen == [('meta.py', %d, 'log_here')], seen\n" % at),
                         ({"pkg/meta.py:%d" % at}, set()))
        # stacklevel=2: the caller's line, here the program's
        shown, reads = self.lines(check + "meta.log_here(2)\nassert seen[0][:1] == ('prog.py',) and seen[0][2] == 'case', seen\n")
        self.assertEqual(([s.split(":")[0] for s in shown], reads), (["prog.py"], set()))

    def test_a_tracebacks_frames(self):
        boom = "pkg/meta.py:%d" % line_of("raise ValueError")
        for case in [
            "import traceback\ntry:\n    meta.boom()\nexcept ValueError:\n    traceback.format_exc()\n",
            "import traceback\ntry:\n    meta.boom()\nexcept ValueError as e:\n    traceback.format_exception(e)\n",
            "import traceback\ntry:\n    meta.boom()\nexcept ValueError as e:\n    traceback.extract_tb(e.__traceback__)\n",
            "import traceback\ntry:\n    meta.boom()\nexcept ValueError as e:\n"
            "    traceback.TracebackException.from_exception(e).format()\n",
            # a cause's frames too
            "import traceback\ntry:\n    try:\n        meta.boom()\n    except ValueError as e:\n"
            "        raise KeyError('k') from e\nexcept KeyError:\n    traceback.format_exc()\n",
            "import inspect\ntry:\n    meta.boom()\nexcept ValueError:\n    inspect.trace()\n",
            # the interpreter's own printing of an exception
            "import sys\ntry:\n    meta.boom()\nexcept ValueError:\n    sys.excepthook(*sys.exc_info())\n",
        ]:
            with self.subTest(case):
                shown, reads = self.lines(case)
                self.assertEqual(reads, set())
                self.assertIn(boom, shown)
                self.assertTrue({s.split(":")[0] for s in shown} <= {"pkg/meta.py", "prog.py"}, shown)

    def test_the_stacks_frames_and_the_stack_as_without_ste(self):
        shown, reads = self.lines(
            "import inspect, traceback\ndef who():\n"
            "    return inspect.stack()[1].function, traceback.extract_stack()[-2].name, traceback.format_stack()[-1]\n"
            "def caller():\n    return who()\nr = caller()\n"
            "assert r[:2] == ('caller', 'caller') and ', in who' in r[2], r\n")
        self.assertEqual(reads, set())
        self.assertEqual({s.split(":")[0] for s in shown}, {"prog.py"})
        self.assertGreaterEqual(len(shown), 3)  # who's, caller's and case's lines at least

    def test_a_loggers_own_find_caller_reads_frames(self):
        shown, reads = self.lines(
            "import logging, sys\nclass L(logging.Logger):\n    def findCaller(self, stack_info=False, stacklevel=1):\n"
            "        f = sys._getframe(1)\n        return f.f_code.co_filename, f.f_lineno, 'x', None\n"
            "L('mine').warning('hi')\n")
        self.assertEqual(reads, {"ste-positions"})


if __name__ == "__main__":
    if len(sys.argv) > 1 and os.path.isfile(sys.argv[1]):
        PRELOAD = os.path.abspath(sys.argv.pop(1))
    unittest.main()
