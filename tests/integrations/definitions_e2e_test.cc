// End to end: definition-level selection (`[selection] granularity =
// "definition"`, docs/concepts.md "Definitions", issues 12 and 24) on a generated
// suite whose package loads all of itself at import time (`shapes/
// __init__.py` imports every module), recorded with the generic per-file
// runner (pytest per file), kind = "pytest" and kind = "unittest", with
// the fast tracer of Debian's Python (ste_defs.py: the frame evaluation
// hook of _ste_tracer, CPython 3.11), and kind = "pytest" again with the
// fallback profiler forced (STE_DEFS_TRACER=profile): the same selections,
// except for the test that stops every profiler, and `ste record` says once
// that the slower tracer ran.
//
// Each change below is made, selected, and undone. The selection must be
// exactly the expected set: the tests that ran a changed definition, that
// used a changed docstring, named a changed constant (or read its module's
// namespace), or read lines where a definition they ran moved; every
// test when module-level code changed; and the tests whose account is not
// trusted at definition level (they read the source as data, stopped the
// profiler, ran code in a multiprocessing child that ends by os._exit)
// whenever anything in their files changed. Then the ground truth: every
// test run alone, without ste, after the change; a test whose outcome
// changed must be selected (mutation safety). The same suite at file level
// selects every test for any change to the package: what the definition
// level is for.
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "definition_suite.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::SelectedMode;
using ::ste::testing::SelectedTests;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kIntegrations = STE_INTEGRATIONS_DIR;
const std::string kPython = "/usr/bin/python3";  // Debian's, with pytest

struct Setup {
  std::string name;
  std::string runner;  // the [runner] table's lines
  bool fallback = false;  // STE_DEFS_TRACER=profile: the tracker's slow fallback
};
void PrintTo(const Setup& s, std::ostream* os) { *os << s.name; }

const Setup kGeneric = {"Generic", "command = \"" + kPython + " -m pytest -q -p no:cacheprovider {test}\"\n"};
const Setup kPytest = {"Pytest", "kind = \"pytest\"\ncommand = \"" + kPython + " -m pytest -q -p ste_pytest {tests}\"\n"};
const Setup kUnittest = {"Unittest", "kind = \"unittest\"\ncommand = \"" + kPython +
                                         " $STE_INTEGRATIONS/python/ste_unittest.py {tests}\"\n"};
const Setup kPytestProfile = {"PytestProfile", kPytest.runner, true};

const char kInit[] =
    "from .calc import add, mul, sub, unused, Vec\n"
    "from .text import shout, whisper, pad, Pair\n"
    "from .table import TABLE\n"
    "from . import meta\n"
    "from .meta import __version__\n";

// Docstrings, constants and places (issue 24): a docstring read by
// inspect.getdoc, one a wrapper copied and a test reads, one nobody reads;
// __version__ and TAX named by the functions that read them; boom's line
// read by a test.
const char kMeta[] =
    "\"\"\"Shapes' metadata.\"\"\"\n"                // 1
    "import functools\n"                            // 2
    "\n"                                            // 3
    "__version__ = \"1.0\"\n"                        // 4
    "TAX = 20\n"                                    // 5
    "\n"                                            // 6
    "\n"                                            // 7
    "def version():\n"                              // 8
    "    \"\"\"Return the version.\"\"\"\n"             // 9
    "    return __version__\n"                      // 10
    "\n"                                            // 11
    "\n"                                            // 12
    "def price(n):\n"                               // 13
    "    \"\"\"The price of n, taxed.\"\"\"\n"          // 14
    "    return n * (100 + TAX) // 100\n"           // 15
    "\n"                                            // 16
    "\n"                                            // 17
    "def boom():\n"                                 // 18
    "    raise ValueError('boom')\n"                // 19
    "\n"                                            // 20
    "\n"                                            // 21
    "def _logged(f):\n"                             // 22
    "    @functools.wraps(f)\n"                     // 23
    "    def wrapper(*args):\n"                     // 24
    "        return f(*args)\n"                     // 25
    "    return wrapper\n"                          // 26
    "\n"                                            // 27
    "\n"                                            // 28
    "@_logged\n"                                    // 29
    "def helptext():\n"                             // 30
    "    \"\"\"Shows help.\"\"\"\n"                     // 31
    "    return 'help'\n"                           // 32
    "\n"                                            // 33
    "\n"                                            // 34
    "import re\n"                                   // 35
    "NUMBERS = re.compile(r'\\d+')\n"                // 36: a constant too
    "\n"                                            // 37
    "\n"                                            // 38
    "def digits(s):\n"                              // 39
    "    return NUMBERS.findall(s)\n"                // 40
    "\n"                                            // 41
    "\n"                                            // 42
    "def old():\n"                                  // 43
    "    import logging, warnings\n"                // 44
    "    warnings.warn('old', DeprecationWarning)\n" // 45: test_warns reads the line
    "    logging.getLogger('shapes').warning('old')\n" // 46: ... and this one
    "    return 1\n"                                // 47
    "\n"                                            // 48
    "\n"                                            // 49
    "def _spare():\n"                               // 50
    "    return 0\n"                                // 51
    "\n"                                            // 52
    "\n"                                            // 53
    "def later():\n"                                // 54
    "    return 2\n";                               // 55

const char kCalc[] =
    "\"\"\"Arithmetic.\"\"\"\n"
    "from typing import TYPE_CHECKING\n"
    "LIMIT = 100\n"
    "\n"
    "\n"
    "def add(a, b):\n"
    "    return a + b\n"
    "\n"
    "\n"
    "def mul(a, b):\n"
    "    return a * b\n"
    "\n"
    "\n"
    "def sub(a, b):\n"
    "    return a - b\n"
    "\n"
    "\n"
    "def unused():\n"
    "    return 'unused'\n"
    "\n"
    "\n"
    "class Vec:\n"
    "    dims = 2\n"
    "\n"
    "    # A stub for type checkers only (fingerprint format 9).\n"
    "    if TYPE_CHECKING:\n"
    "        def dot(self, other: 'Vec') -> int: ...\n"
    "\n"
    "    def __init__(self, x, y):\n"
    "        self.x, self.y = x, y\n"
    "\n"
    "    def norm1(self):\n"
    "        return abs(self.x) + abs(self.y)\n"
    "\n"
    "    def scale(self, k):\n"
    "        return Vec(self.x * k, self.y * k)\n"
    "\n"
    "\n"
    "# A module's own __getattr__ (a deprecated alias): a name added is\n"
    "# a change for the tests that ran it (fingerprint format 6).\n"
    "def __getattr__(name):\n"
    "    if name == 'minus':\n"
    "        return sub\n"
    "    raise AttributeError(name)\n"
    "\n"
    "\n"
    "# A constant copied into a local: its users load the local by slot,\n"
    "# naming no TAX; the import is the use.\n"
    "def taxed(n):\n"
    "    from .meta import TAX\n"
    "    return n * (100 + TAX) // 100\n";

const char kText[] =
    "from typing import TYPE_CHECKING, overload\n"
    "\n"
    "if TYPE_CHECKING:\n"
    "    from os import PathLike\n"
    "\n"
    "\n"
    "# typing's overloads: part of shout's unit (fingerprint format 6).\n"
    "@overload\n"
    "def shout(s: str) -> str: ...\n"
    "@overload\n"
    "def shout(s: bytes) -> bytes: ...\n"
    "def shout(s):\n"
    "    return s.upper() + '!'\n"
    "\n"
    "\n"
    "def whisper(s):\n"
    "    return s.lower() + '...'\n"
    "\n"
    "\n"
    "# Defs inside compound statements at the top (issue 24): units too.\n"
    "try:\n"
    "    from _shapes_speedups import pad\n"
    "except ImportError:\n"
    "    def pad(s):\n"
    "        return '[' + s + ']'\n"
    "\n"
    "if len('ab') == 2:\n"
    "    class Pair:\n"
    "        def total(self, a, b):\n"
    "            return a + b\n"
    "else:\n"
    "    class Pair:\n"
    "        def total(self, a, b):\n"
    "            return a - b\n";

const char kTable[] =
    "def _build():\n"
    "    return {'a': 1, 'b': 2}\n"
    "\n"
    "\n"
    "TABLE = _build()\n";

// Test files, unittest.TestCase classes (pytest runs them too).
const std::map<std::string, std::string> kTestBodies = {
    {"test_add", "self.assertEqual(shapes.add(2, 3), 5)"},
    {"test_mul", "self.assertEqual(shapes.mul(2, 3), 6)"},
    {"test_sub", "self.assertEqual(shapes.sub(5, 3), 2)"},
    {"test_norm", "self.assertEqual(shapes.Vec(1, -2).norm1(), 3)"},
    {"test_scale", "self.assertEqual(shapes.Vec(1, 2).scale(3).x, 3)"},
    {"test_shout", "self.assertEqual(shapes.shout('a'), 'A!')"},
    {"test_whisper", "self.assertEqual(shapes.whisper('A'), 'a...')"},
    {"test_table", "self.assertEqual(shapes.TABLE['b'], 2)"},
    {"test_pad", "self.assertEqual(shapes.pad('x'), '[x]')"},
    {"test_pair", "self.assertEqual(shapes.Pair().total(1, 2), 3)"},
    {"test_alias", "self.assertEqual(shapes.calc.minus(5, 3), 2)"},
    // Reads a definition's source without running it: file level.
    {"test_source", "import inspect\n        self.assertIn(\"'unused'\", inspect.getsource(shapes.unused))"},
    // Runs mul on a thread of its own (profiled too).
    {"test_thread",
     "import threading\n        out = []\n"
     "        t = threading.Thread(target=lambda: out.append(shapes.mul(4, 5)))\n"
     "        t.start(); t.join()\n        self.assertEqual(out, [20])"},
    // A multiprocessing child runs sub and ends by os._exit: its account
    // never ends, so the test falls back to file level.
    {"test_fork",
     "import multiprocessing\n        ctx = multiprocessing.get_context('fork')\n"
     "        q = ctx.Queue()\n        p = ctx.Process(target=_child, args=(q,))\n"
     "        p.start(); v = q.get(); p.join()\n        self.assertEqual(v, 4)"},
    // A Python subprocess, tracked on its own, runs add.
    {"test_subprocess",
     "import subprocess, sys\n"
     "        out = subprocess.check_output([sys.executable, '-c', 'import shapes; print(shapes.add(1, 1))'],"
     " cwd=ROOT)\n        self.assertEqual(out.strip(), b'2')"},
    // A forked child execs a Python that runs shout: both accounts whole.
    {"test_exec",
     "r, w = os.pipe()\n        pid = os.fork()\n"
     "        if pid == 0:\n            os.dup2(w, 1)\n"
     "            os.execv(sys.executable, [sys.executable, '-c', 'import shapes; print(shapes.shout(\"x\"))'])\n"
     "        os.close(w)\n        out = os.read(r, 100)\n        os.waitpid(pid, 0)\n"
     "        self.assertEqual(out.strip(), b'X!')"},
    {"test_doc", "import inspect\n        self.assertEqual(inspect.getdoc(shapes.meta.version), 'Return the version.')"},
    {"test_help", "self.assertIn('Shows', shapes.meta.helptext.__doc__)"},
    {"test_signature", "import inspect\n        self.assertEqual(str(inspect.signature(shapes.shout)), '(s)')"},
    {"test_version", "self.assertEqual(shapes.meta.version(), '1.0')"},
    {"test_price", "self.assertEqual(shapes.meta.price(100), 120)"},
    {"test_taxed", "self.assertEqual(shapes.calc.taxed(100), 120)"},
    {"test_digits", "self.assertEqual(shapes.meta.digits('a12b3'), ['12', '3'])"},
    // Reads meta's namespace by string: every constant of it.
    {"test_members", "self.assertEqual([getattr(shapes.meta, n) for n in dir(shapes.meta)\n"
                     "                          if n.isupper() and type(getattr(shapes.meta, n)) is int], [20])"},
    // Reads a line of boom's from its frame (the traceback module would
    // read the source too: file level): a move of boom is a change for it.
    {"test_lines",
     "line = 0\n        try:\n            shapes.meta.boom()\n"
     "        except ValueError as e:\n            tb = e.__traceback__\n"
     "            while tb.tb_next is not None:\n                tb = tb.tb_next\n"
     "            line = tb.tb_lineno\n"
     "        self.assertEqual(line, 19)"},
    // Reads the lines of a warning and of a log record made in old(), and
    // those of boom's traceback (without its source: a traceback's text
    // reads the file, all of it), and runs later(): a move of old or boom
    // is a change for it, one of later not.
    {"test_warns",
     "import inspect, warnings\n        with warnings.catch_warnings(record=True) as w:\n"
     "            warnings.simplefilter('always')\n"
     "            with self.assertLogs('shapes') as logs:\n                shapes.meta.old()\n"
     "        self.assertEqual(shapes.meta.later(), 2)\n"
     "        self.assertEqual([x.lineno for x in w] + [r.lineno for r in logs.records], [45, 46])\n"
     "        try:\n            shapes.meta.boom()\n        except ValueError as e:\n"
     "            self.assertEqual(inspect.getinnerframes(e.__traceback__, 0)[-1].lineno, 19)"},
    // Looks up a name text.py does not bind (an absent record): a plain
    // function of that name added is a change for it.
    {"test_probe", "self.assertFalse(hasattr(shapes.text, 'loud'))"},
    // `from shapes.text import *` (text.py has no __all__) copies its
    // names: one added is a change for it.
    {"test_star", "self.assertNotIn('loud', globals())"},
    // Stops every profiler, then runs whisper: file level with the
    // fallback tracer (a profiler); the fast one goes on.
    {"test_noprofile", "import sys\n        sys.setprofile(None)\n        self.assertEqual(shapes.whisper('B'), 'b...')"},
};

std::string TestFile(const std::string& name) {
  std::string extra = name == "test_fork"   ? "\n\ndef _child(q):\n    q.put(shapes.sub(7, 3))\n"
                      : name == "test_star" ? "from shapes.text import *\n"
                                            : "";
  return "import os, sys, unittest\n"
         "ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
         "sys.path.insert(0, ROOT)\n"
         "import shapes\n" +
         extra +
         "\n\nclass T(unittest.TestCase):\n"
         "    def test_it(self):\n"
         "        " +
         kTestBodies.at(name) + "\n";
}

// The tests a change to shapes/<file> always selects at definition level:
// those whose account of it is file level (test_noprofile's only with the
// fallback tracer).
std::set<std::string> FileLevel(const Setup& s) {
  if (s.fallback) return {"tests/test_fork.py", "tests/test_noprofile.py"};
  return {"tests/test_fork.py"};
}

std::set<std::string> Paths(std::initializer_list<const char*> names) {
  std::set<std::string> out;
  for (const char* n : names) out.insert(std::string("tests/") + n + ".py");
  return out;
}

struct Change {
  std::string name;
  std::string file;  // under shapes/
  std::string from, to;
  std::set<std::string> expected;  // beyond FileLevel() (all: every test)
  bool all = false;
  bool outcome_changes = true;  // some test fails after it (ground truth has teeth)
};

std::vector<Change> Changes() {
  return {
      {"add body", "calc.py", "return a + b", "return a - b", Paths({"test_add", "test_subprocess", "test_source"})},
      {"mul body", "calc.py", "return a * b", "return a * b + 1", Paths({"test_mul", "test_thread", "test_source"})},
      {"sub body", "calc.py", "return a - b", "return b - a", Paths({"test_sub", "test_source", "test_alias"})},
      {"method body", "calc.py", "return abs(self.x) + abs(self.y)", "return self.x + self.y",
       Paths({"test_norm", "test_source"})},
      {"unused body", "calc.py", "return 'unused'", "return 'changed'", Paths({"test_source"})},
      {"comment in a body", "text.py", "return s.upper() + '!'", "return s.upper() + '!'  # loud", {},
       false, false},
      // (test_source reads calc.py's source, inspect.getsource: every
      // change of calc.py, as data; its text, not its lines.)
      {"shout body", "text.py", "return s.upper() + '!'", "return s.upper() + '?'",
       Paths({"test_shout", "test_exec"})},
      {"an overload retyped", "text.py", "def shout(s: bytes) -> bytes: ...",
       "def shout(s: bytearray) -> bytearray: ...", Paths({"test_shout", "test_exec"}), false, false},
      {"whisper body", "text.py", "return s.lower() + '...'", "return s.lower() + '.'",
       Paths({"test_whisper"})},
      // A def inside a top-level `try`/`except` or `if`/`else` (a class's
      // methods there too) is a unit: a body edit selects the tests that ran
      // it; the statement around it is module-level code (issue 24, item 1).
      {"a def in an except block", "text.py", "return '[' + s + ']'", "return '<' + s + '>'", Paths({"test_pad"})},
      {"a method of a class in an if block", "text.py", "return a + b", "return a + b + 1", Paths({"test_pair"})},
      {"the else branch's method", "text.py", "return a - b", "return b - a", {}, false, false},
      {"the if's test", "text.py", "if len('ab') == 2:", "if len('ab') == 3:", {}, true},
      {"import-time function", "table.py", "'b': 2", "'b': 3", {}, true},
      {"a constant no code names", "calc.py", "LIMIT = 100", "LIMIT = 101", Paths({"test_source"}), false, false},
      {"class attribute", "calc.py", "dims = 2", "dims = 3", {}, true, false},
      // A plain function added (format 4): the tests that look its name up
      // (test_star copied text.py's names with `import *`); one that a
      // changed function calls, or named like a builtin that code of the
      // module used: the tests that ran that code.
      {"definition added", "text.py", "def whisper(s):", "def extra():\n    return 1\n\n\ndef whisper(s):",
       Paths({"test_star"}), false, false},
      {"a plain function added that tests look up", "text.py", "def whisper(s):",
       "def loud(s):\n    return s.upper()\n\n\ndef whisper(s):", Paths({"test_probe", "test_star"})},
      // (calc.py's own __getattr__ spells out the one name it answers:
      // beside it another name added is as without it, that one is
      // module-level code. Every test ran that __getattr__: the import
      // system asks each module it imports from for `__path__`; test_lines
      // reads lines of frames, and the lines added above moved it.)
      {"a helper added and called", "calc.py", "def add(a, b):\n    return a + b",
       "def _off(x):\n    return x + 1\n\n\ndef add(a, b):\n    return _off(a + b)",
       Paths({"test_add", "test_subprocess", "test_source", "test_lines"})},
      {"a function named like a builtin", "calc.py", "class Vec:", "def abs(x):\n    return 0\n\n\nclass Vec:",
       Paths({"test_norm", "test_source", "test_lines"})},
      {"a function added that __getattr__ answered", "calc.py", "class Vec:",
       "def minus(a, b):\n    return 0\n\n\nclass Vec:", {}, true},
      {"a constant added that module-level code reads", "calc.py", "LIMIT = 100\n",
       "LIMIT = 100\nSTEP = 1\nSTEPS = LIMIT // STEP\n", {}, true, false},
      {"a module docstring no test reads", "calc.py", "\"\"\"Arithmetic.\"\"\"", "\"\"\"Sums.\"\"\"",
       Paths({"test_source"}), false, false},
      {"a docstring no test reads", "meta.py", "The price of n, taxed.", "The price of n, with tax.", {}, false, false},
      {"a docstring inspect.getdoc reads", "meta.py", "Return the version.", "Return the release.", Paths({"test_doc"})},
      {"a docstring a wrapper copied", "meta.py", "Shows help.", "Prints help.", Paths({"test_help"})},
      {"__version__", "meta.py", "__version__ = \"1.0\"", "__version__ = \"1.1\"",
       Paths({"test_version", "test_members"})},
      {"a constant", "meta.py", "TAX = 20", "TAX = 25", Paths({"test_price", "test_members", "test_taxed"})},
      // (its annotation runs as the module loads: every test that loads the
      // package fails; a part of the constant's own, it selected none)
      {"a constant's annotation that fails", "meta.py", "TAX = 20", "TAX: NoSuchType = 20", {}, true},
      // (a dict's key is hashed as the module loads: a TypeError)
      {"a constant with a list for a key", "meta.py", "TAX = 20", "TAX = {[20]: 1}", {}, true},
      // What compiling the module says is every importer's: a warning (an
      // error under -W error), a SyntaxError only the compiler finds.
      {"an invalid escape in a body", "calc.py", "return a * b", "return a * b if '\\d' else 0", {}, true,
       false},
      {"a body the compiler rejects", "calc.py", "return a * b", "break", {}, true},
      {"a compiled pattern", "meta.py", "re.compile(r'\\d+')", "re.compile(r'\\d')",
       Paths({"test_digits", "test_members"})},
      {"a pattern that does not compile", "meta.py", "re.compile(r'\\d+')", "re.compile(r'(\\d+')", {}, true},
      // (boom is a plain function: whether it has a docstring is its
      // header's; test_lines ran it, names it, and reads its lines, and
      // test_members reads meta.py's namespace.)
      {"a docstring added", "meta.py", "def boom():\n", "def boom():\n    \"\"\"Fails.\"\"\"\n",
       Paths({"test_lines", "test_members", "test_warns"})},
      {"definitions moved", "meta.py", "def version():", "# The version.\ndef version():",
       Paths({"test_lines", "test_warns"})},
      {"lines added in a body", "meta.py", "    return n * (100 + TAX) // 100",
       "    rate = 100 + TAX\n    return n * rate // 100", Paths({"test_price", "test_lines", "test_warns"})},
      // A warning's, a log record's and a traceback's lines are their
      // units' places only: test_warns ran later(), which this moves, and
      // is not selected.
      {"a unit that ran moved, not the one that warned", "meta.py", "def _spare():\n    return 0",
       "def _spare():\n    zero = 0\n    return zero", {}, false, false},
      // A plain function's header: the tests that ran it, and the one that
      // names it (inspect.signature); a decorated one's is module-level.
      {"a parameter added", "text.py", "def shout(s):", "def shout(s, mark='!'):",
       Paths({"test_shout", "test_exec", "test_signature"})},
      {"a decorated function's parameter", "meta.py", "def helptext():", "def helptext(x=1):", {}, true, false},
      {"a TYPE_CHECKING block", "text.py", "from os import PathLike\n", "from os import PathLike, sep\n", {},
       false, false},
      {"a TYPE_CHECKING block in a class", "calc.py", "def dot(self, other: 'Vec') -> int: ...",
       "def dot(self, other: 'Vec', k: int = 1) -> int: ...", Paths({"test_source"}), false, false},
      // `from .text import whisper` in __init__.py looks whisper up: with it
      // gone every test that loads the package fails.
      {"a plain function removed that __init__ imports", "text.py", "def whisper(s):\n    return s.lower() + '...'\n",
       "", {}, true},
      // Imports that only bind names in a package's __init__.py (format 6):
      // one of a name the module binds is no module-level code; one of a
      // name it does not bind is; a name no longer imported selects the
      // tests whose code names it.
      {"an import added of a name the module binds", "__init__.py", "from .table import TABLE\n",
       "from .table import TABLE\nfrom .calc import LIMIT\n", {}, false, false},
      {"an import added of a name the module does not bind", "__init__.py", "from .table import TABLE\n",
       "from .table import TABLE\nfrom .calc import NOPE\n", {}, true},
      {"a name no longer imported", "__init__.py", "from .calc import add, mul, sub, unused, Vec",
       "from .calc import add, mul, sub, Vec", Paths({"test_source"})},
      // An import from the standard library (format 10), in any module:
      // of a name typing binds, no module-level code (test_star copies
      // text.py's names); of one it does not bind, every test that loads
      // the package fails.
      {"a standard-library name imported", "text.py", "from typing import TYPE_CHECKING, overload\n",
       "from typing import TYPE_CHECKING, Optional, overload\n", Paths({"test_star"}), false, false},
      {"a standard-library import of a name it does not bind", "text.py",
       "from typing import TYPE_CHECKING, overload\n", "from typing import TYPE_CHECKING, NoSuchForm, overload\n", {},
       true},
      {"syntax error", "text.py", "def shout(s):", "def shout(s:", {}, true},
  };
}

class Definitions : public ::ste::testing::DefinitionSuiteTest<Setup> {
 protected:
  void SetUp() override {
    W("shapes/__init__.py", kInit);
    W("shapes/calc.py", kCalc);
    W("shapes/text.py", kText);
    W("shapes/table.py", kTable);
    W("shapes/meta.py", kMeta);
    for (const auto& [name, body] : kTestBodies) {
      W("tests/" + name + ".py", TestFile(name));
      all_.insert("tests/" + name + ".py");
    }
    ::ste::testing::InitGitRepo(root_);
    ste_env_ = {"STE_INTEGRATIONS=" + kIntegrations, "PYTHONDONTWRITEBYTECODE=1",
                GetParam().fallback ? "STE_DEFS_TRACER=profile" : "STE_DEFS_TRACER="};
  }
  void Configure(const std::string& granularity) {
    DefinitionSuiteTest::Configure("[tests]\ninclude = [\"tests/test_*.py\"]\n[runner]\n" + GetParam().runner +
                                   "[inventory]\nignore = [\"**/__pycache__/**\"]\n[selection]\ngranularity = \"" +
                                   granularity + "\"\n");
  }
  std::set<std::string> Apply(const Change& c, std::set<std::string>* failing) {
    return Edit(c.name, "shapes/" + c.file, c.from, c.to, failing);
  }
  // Two or more at a time (nproc): the Generic suite's ground truth runs
  // every test after each of its changes.
  size_t GroundTruthJobs() override { return std::max(2u, std::thread::hardware_concurrency()); }
  // (pytest, not unittest's runner, which starts faster: some cases' test
  // files are pytest's functions.)
  Spawned RunAlone(const std::string& test) override {
    return Spawn({kPython, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", test}, {"PYTHONDONTWRITEBYTECODE=1"},
                 root_);
  }
};

TEST_P(Definitions, AChangedDefinitionSelectsTheTestsThatRanIt) {
  Configure("definition");
  // Which tracer ran: the record says so once when it was the slow one.
  const std::string slow = " of " + std::to_string(all_.size()) +
                           " tests tracked definitions with the slower fallback tracer: "
                           "STE_DEFS_TRACER=profile (";
  if (GetParam().fallback) {
    EXPECT_NE(record_out_.find(slow), std::string::npos) << record_out_;
  } else {
    EXPECT_EQ(record_out_.find("slower fallback tracer"), std::string::npos) << record_out_;
  }
  const bool ground_truth = GetParam().name == "Generic";  // the tests, run alone, are the same for all
  const std::set<std::string> file_level = FileLevel(GetParam());
  for (const Change& c : Changes()) {
    SCOPED_TRACE(c.name);
    std::set<std::string> failing;
    std::set<std::string> selected = Apply(c, ground_truth ? &failing : nullptr);
    // The tests at file level see every change of content (a comment too).
    std::set<std::string> expected = c.all ? all_ : c.expected;
    expected.insert(file_level.begin(), file_level.end());
    // test_noprofile runs whisper, and the fast tracer saw it despite
    // sys.setprofile(None).
    if (!GetParam().fallback && expected.count("tests/test_whisper.py")) {
      expected.insert("tests/test_noprofile.py");
    }
    EXPECT_EQ(selected, expected) << last_err_;
    if (ground_truth) {
      for (const std::string& t : failing) {
        EXPECT_EQ(selected.count(t), 1u) << t << " fails after the change but was not selected";
      }
      if (c.outcome_changes) {
        EXPECT_FALSE(failing.empty()) << "the change was meant to fail a test";
      }
    }
  }
}

TEST_P(Definitions, AtFileLevelEveryChangeToTheEagerPackageSelectsEveryTest) {
  Configure("file");
  for (const Change& c : Changes()) {
    if (c.name == "comment in a body") continue;  // file level: every importer too
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Apply(c, nullptr), all_);
  }
}

// The tests in a package: pytest looks up each test file's package, up the
// tree, and in a forked child (kind = "pytest") that stats tests/__init__.py
// which the parent loaded. A check is no read: an edit the module view
// does not see (a comment, a docstring nobody reads) selects none.
TEST_P(Definitions, APackageThatPytestOnlyLooksUpIsItsModuleLevel) {
  if (GetParam().name == "Unittest") GTEST_SKIP() << "unittest does not look packages up by stat";
  W("tests/__init__.py", "\"\"\"The tests.\"\"\"\n# a package\n");
  Configure("definition");
  std::set<std::string> expected = FileLevel(GetParam());
  EXPECT_EQ(Edit("a comment", "tests/__init__.py", "# a package", "# the tests' package", nullptr), expected)
      << last_err_;
  EXPECT_EQ(Edit("a docstring", "tests/__init__.py", "The tests.", "Our tests.", nullptr), expected) << last_err_;
  EXPECT_EQ(Edit("module-level code", "tests/__init__.py", "# a package", "KIND = len('ab')", nullptr), all_)
      << last_err_;
}

// What a batch runner's parent ran is listed in its scope once: the
// tracker pins it, and a test file's child that runs it again does not list
// it again (ste_defs.py, "Pinned"). So a test file's helper that the parent
// ran (conftest.py imports it and calls it) stays every test's, not only
// its own file's: a change to it selects the other test that calls it.
TEST_P(Definitions, ATestFilesHelperTheParentRanSelectsTheOtherTestsThatRunIt) {
  if (GetParam().name != "Pytest" && GetParam().name != "PytestProfile") {
    GTEST_SKIP() << "conftest.py runs in pytest's batch runner's parent";
  }
  W("tests/__init__.py", "");
  W("tests/test_helpers.py", "def helper():\n    return 1\n\n\ndef test_helper():\n    assert helper() == 1\n");
  W("tests/test_uses_helper.py",
    "def test_uses_helper():\n    from tests.test_helpers import helper\n\n    assert helper() == 1\n");
  W("conftest.py", "from tests.test_helpers import helper\n\nVALUE = helper()\n");
  all_.insert("tests/test_helpers.py");
  all_.insert("tests/test_uses_helper.py");
  Configure("definition");
  std::set<std::string> failing;
  std::set<std::string> got = Edit("the helper", "tests/test_helpers.py", "return 1", "return 2", &failing);
  EXPECT_EQ(failing, Paths({"test_helpers", "test_uses_helper"})) << "the ground truth";
  for (const std::string& t : failing) EXPECT_TRUE(got.count(t)) << t << " missed\n" << last_err_;
}

// A record keeps each source's fingerprints on disk by content
// (.ste/fingerprints): the next record fingerprints only what changed, and
// selects as one that fingerprinted everything.
TEST_P(Definitions, ASecondRecordFingerprintsOnlyTheSourcesThatChanged) {
  if (GetParam().name != "Pytest") GTEST_SKIP() << "the same for every runner: one is enough";
  Configure("definition");
  const std::string none_kept = " kept from a record of the same bytes (.ste/fingerprints)";
  ASSERT_NE(record_out_.find(none_kept), std::string::npos) << record_out_;
  EXPECT_NE(record_out_.find(", 0" + none_kept), std::string::npos) << "the first record: none kept\n" << record_out_;
  const std::string text = root_ + "/shapes/text.py";
  const std::string before = ReadFile(text);
  std::string after = before;
  after.replace(after.find("return s.upper() + '!'"), 22, "return s.upper() + '!'  # loud");
  WriteFile(text, after);
  Git({"commit", "-qam", "a comment"});
  Spawned r = Ste({"record", "--progress", "none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": 1 fingerprinted, "), std::string::npos) << "only text.py's bytes changed\n" << r.out;
  EXPECT_EQ(r.out.find(", 0" + none_kept), std::string::npos) << r.out;
  // The same selections as from fingerprints made now.
  EXPECT_EQ(Edit("whisper body", "shapes/text.py", "return s.lower() + '...'", "return s.lower() + '.'", nullptr),
            Paths({"test_whisper", "test_fork", "test_noprofile"}))
      << last_err_;
  EXPECT_EQ(Edit("a plain function added", "shapes/text.py", "def whisper(s):",
                 "def loud(s):\n    return s.upper()\n\n\ndef whisper(s):", nullptr),
            Paths({"test_probe", "test_star", "test_fork"}))
      << last_err_;
}

// `select --scheduler` (the scheduler loads the baseline, this side hashes
// and fingerprints the changed files) answers as the local select does.
TEST_P(Definitions, TheSchedulerSelectsAsTheLocalSelectDoes) {
  Configure("definition");
  ::ste::testing::SchedulerProcess scheduler(ste_, "sqlite:" + root_ + "/.ste/ste.db", MakeTempDir());
  ASSERT_FALSE(scheduler.address().empty()) << scheduler.process().err();
  for (const Change& c : Changes()) {
    if (c.name != "add body" && c.name != "class attribute" && c.name != "comment in a body") continue;
    SCOPED_TRACE(c.name);
    const std::string path = root_ + "/shapes/" + c.file;
    const std::string before = ReadFile(path);
    std::string after = before;
    after.replace(after.find(c.from), c.from.size(), c.to);
    WriteFile(path, after);
    std::set<std::string> local = Select();
    Spawned remote = Ste({"select", "--scheduler", scheduler.address()});
    EXPECT_EQ(remote.exit_code, 0) << remote.err;
    EXPECT_EQ(SelectedTests(remote.out), local) << remote.err;
    EXPECT_EQ(SelectedMode(remote.err), SelectedMode(last_err_));
    WriteFile(path, before);
  }
}

INSTANTIATE_TEST_SUITE_P(Python, Definitions, ::testing::Values(kGeneric, kPytest, kUnittest, kPytestProfile),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ste
