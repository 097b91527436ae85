// The definition views (definitions.h) of Python files: what the real
// ste_fingerprint.py puts in a unit and in the module, which unit holds a
// line, the entries of the views, and select time's "only changed files
// are fingerprinted". (definitions_test.cc: the Fingerprinter's languages,
// and Ruby's fingerprints.)
#include "ste/definitions.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ste/inventory.h"

namespace ste {
namespace {

const std::string kScript = std::string(STE_SOURCE_DIR) + "/integrations/python/ste_fingerprint.py";

Fingerprinter WithPython(const std::string& python, const std::string& script = kScript) {
  return Fingerprinter({{".py", {python, "-I", "-S", "-B", script}}});
}
Fingerprinter Real() { return WithPython("/usr/bin/python3"); }

const char kGeo[] =
    "import math\n"                 // 1
    "\n"                            // 2
    "def area(w, h):\n"             // 3
    "    return w * h\n"            // 4
    "\n"                            // 5
    "class Shape:\n"                // 6
    "    sides = 4\n"               // 7
    "\n"                            // 8
    "    @property\n"               // 9
    "    def name(self):\n"         // 10
    "        return 'square'\n"     // 11
    "\n"                            // 12
    "    @name.setter\n"            // 13
    "    def name(self, v):\n"      // 14
    "        pass\n"                // 15
    "\n"                            // 16
    "    class Inner:\n"            // 17
    "        def deep(self):\n"     // 18
    "            return 1\n";       // 19

FileDefinitions One(const std::string& content) {
  absl::StatusOr<std::vector<FileDefinitions>> r = Real().Run({"a.py"}, {content});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || r->size() != 1) return {};
  return (*r)[0];
}

bool Same(XXH128_hash_t a, XXH128_hash_t b) { return a.low64 == b.low64 && a.high64 == b.high64; }

// The text fingerprint of `d`'s unit `name` (a failure when there is none).
XXH128_hash_t UnitHash(const FileDefinitions& d, const std::string& name) {
  for (const DefinitionUnit& u : d.units) {
    if (u.name == name) return u.hash;
  }
  ADD_FAILURE() << "no unit " << name;
  return XXH128_hash_t{0, 0};
}

// `text` with its first `from` replaced by `to`, fingerprinted.
FileDefinitions Variant(const std::string& text, const std::string& from, const std::string& to) {
  std::string s = text;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return One(s);
}

TEST(PythonDefinitions, TheFingerprinterNamesEveryUnitWithItsLines) {
  FileDefinitions d = One(kGeo);
  ASSERT_TRUE(d.parsed) << d.error;
  std::vector<std::string> names;
  for (const DefinitionUnit& u : d.units) names.push_back(u.name);
  EXPECT_EQ(names, (std::vector<std::string>{"area", "Shape.name", "Shape.name#2", "Shape.Inner.deep"}));
  EXPECT_EQ(d.units[0].first_line, 3u);
  EXPECT_EQ(d.units[0].last_line, 4u);
  EXPECT_EQ(d.units[1].first_line, 9u) << "a decorated definition starts at its first decorator";
  EXPECT_EQ(d.units[1].last_line, 11u);
  ASSERT_NE(d.UnitAt(4), nullptr);
  EXPECT_EQ(d.UnitAt(4)->name, "area");
  EXPECT_EQ(d.UnitAt(13)->name, "Shape.name#2");
  EXPECT_EQ(d.UnitAt(7), nullptr) << "a class attribute is module-level code";
  EXPECT_EQ(d.UnitAt(0), nullptr);
  EXPECT_EQ(d.UnitAt(1), nullptr);
  EXPECT_EQ(d.UnitAt(100), nullptr);
}

TEST(PythonDefinitions, ABodyChangeChangesOnlyItsUnitAndModuleLevelChangesTheModule) {
  FileDefinitions base = One(kGeo);
  auto variant = [&](const std::string& from, const std::string& to) { return Variant(kGeo, from, to); };
  FileDefinitions body = variant("return w * h", "return h * w");
  EXPECT_TRUE(Same(body.module, base.module));
  EXPECT_FALSE(Same(body.units[0].hash, base.units[0].hash));
  EXPECT_TRUE(Same(body.units[1].hash, base.units[1].hash));

  FileDefinitions comment = variant("return w * h", "return w * h  # why");
  EXPECT_TRUE(Same(comment.module, base.module));
  EXPECT_TRUE(Same(comment.units[0].hash, base.units[0].hash)) << "a comment is no code";

  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"sides = 4", "sides = 5"},
           {"import math", "import os"},
           {"def area(w, h):", "def area(w, h=math.pi):"},  // an attribute may fail as the module runs
           {"def area(w, h):", "def area(w, h=pi):"},       // a name bound nowhere before
           {"def area(w, h):", "def area(w, key=lambda x=pi: x):"},  // a lambda's own default
           {"def area(w, h):", "def area(w, h: math.Real):"},
           {"        return 'square'\n", "        \"\"\"Doc.\"\"\"\n        return 'square'\n"},  // a docstring
           {"        return 'square'\n", "        yield 'square'\n"},  // now a generator
           {"@property", "@staticmethod"},
           {"class Inner:", "class Inner(object):"},
       }) {
    FileDefinitions v = variant(from, to);
    EXPECT_FALSE(Same(v.module, base.module)) << from << " -> " << to;
  }
  // A plain function's header is its unit and its own part, not the
  // module's: a default that cannot fail, a parameter, an annotation
  // under `from __future__ import annotations`.
  ASSERT_EQ(base.sigs.size(), 1u);
  EXPECT_EQ(base.sigs[0].name, "area");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"def area(w, h):", "def area(w, h=1):"},
           {"def area(w, h):", "def area(w, h=(1, 'a'), *, k=math):"},
           {"def area(w, h):", "def area(w, h, d=None):"},
           {"def area(w, h):", "def area(w, h, key=lambda x, y=1: x.missing):"},
           // A plain function's docstring's presence and whether it yields
           // are read without running it: its header's.
           {"    return w * h\n", "    \"\"\"Doc.\"\"\"\n    return w * h\n"},
           {"    return w * h\n", "    yield w * h\n"},
       }) {
    FileDefinitions v = variant(from, to);
    EXPECT_TRUE(Same(v.module, base.module)) << from << " -> " << to;
    EXPECT_FALSE(Same(v.units[0].hash, base.units[0].hash)) << from << " -> " << to;
    ASSERT_EQ(v.sigs.size(), 1u);
    EXPECT_FALSE(Same(v.sigs[0].hash, base.sigs[0].hash)) << from << " -> " << to;
  }
  FileDefinitions lazy = One(std::string("from __future__ import annotations\n") + kGeo);
  FileDefinitions noted = Variant(std::string("from __future__ import annotations\n") + kGeo, "def area(w, h):",
                                  "def area(w: Missing, h) -> math.Real:");
  EXPECT_TRUE(Same(lazy.module, noted.module)) << "annotations that are never evaluated";
  // The body of `if TYPE_CHECKING:` never runs; its `else:` does.
  const std::string checked = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import os\nelse:\n    x = 1\n";
  EXPECT_TRUE(Same(One(checked).module, Variant(checked, "import os", "from os import sep").module));
  EXPECT_FALSE(Same(One(checked).module, Variant(checked, "x = 1", "x = 2").module));
  EXPECT_FALSE(Same(One(checked).module, Variant(checked, "from typing import TYPE_CHECKING", "TYPE_CHECKING = True").module));
  // Format 9: in a class's body too (sympy's `Add` declares its
  // constructor's overloads so), nested classes as well; not where the
  // class's body binds the name itself (looked up there first), nor in a
  // body that binds names unseen (`exec`, `locals()`).
  const std::string in_class =
      "from typing import TYPE_CHECKING, overload\nclass A:\n    class B:\n        if TYPE_CHECKING:\n"
      "            def f(self) -> int: ...\n    if TYPE_CHECKING:\n        def g(self, x: int) -> int: ...\n"
      "    else:\n        y = 1\n    def g(self, x):\n        return x\n";
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"def g(self, x: int) -> int: ...", "@overload\n        def g(self, x: str) -> str: ...\n"
                                               "        @overload\n        def g(self, x: int) -> int: ..."},
           {"def f(self) -> int: ...", "def f(self, k: int = 1) -> int: ..."},
       }) {
    EXPECT_TRUE(Same(One(in_class).module, Variant(in_class, from, to).module)) << from << " -> " << to;
  }
  EXPECT_FALSE(Same(One(in_class).module, Variant(in_class, "y = 1", "y = 2").module));
  for (const char* own : {"    TYPE_CHECKING = True\n", "    exec('TYPE_CHECKING = 1')\n",
                                  "    for TYPE_CHECKING in (1,): pass\n"}) {
    std::string bound = in_class;
    bound.insert(bound.find("    if TYPE_CHECKING:\n        def g"), std::string(own));
    EXPECT_FALSE(Same(One(bound).module,
                      Variant(bound, "def g(self, x: int) -> int: ...", "def g(self, x: str) -> str: ...").module))
        << own;
  }

  // A unit moved down a line: its text did not change, its place did (a
  // test that reads lines depends on that), the module did not.
  FileDefinitions moved = variant("import math\n", "import math\n\n");
  EXPECT_TRUE(Same(moved.module, base.module));
  for (size_t i = 0; i < base.units.size(); i++) {
    EXPECT_TRUE(Same(moved.units[i].hash, base.units[i].hash)) << base.units[i].name;
    EXPECT_FALSE(Same(moved.units[i].place, base.units[i].place)) << base.units[i].name;
  }
  // Lines added inside one unit: that unit's text, and the places of it
  // and of those below it.
  FileDefinitions grown = variant("    return w * h\n", "    x = w * h\n\n    return x\n");
  EXPECT_TRUE(Same(grown.module, base.module));
  EXPECT_FALSE(Same(grown.units[0].hash, base.units[0].hash));
  for (size_t i = 1; i < base.units.size(); i++) {
    EXPECT_TRUE(Same(grown.units[i].hash, base.units[i].hash)) << base.units[i].name;
    EXPECT_FALSE(Same(grown.units[i].place, base.units[i].place)) << base.units[i].name;
  }
  // A blank line inside a body: only places.
  FileDefinitions blank = variant("    return w * h\n", "\n    return w * h\n");
  EXPECT_TRUE(Same(blank.units[0].hash, base.units[0].hash));
  EXPECT_FALSE(Same(blank.units[0].place, base.units[0].place));
}

// Issue 24, item 1 (format 5): a def in a block of a compound statement at
// the top or in a class (try/except, if/else, with, for, while, match) is a
// unit: a body edit changes it only. The statement around it, and the
// def's header there, are module-level code. A name repeated in the file
// (a branch's def or class of the same name) is "#k"-suffixed, a class's
// docstring and methods with it.
const char kBranches[] =
    "import sys\n"                                  // 1
    "try:\n"                                        // 2
    "    from _speedups import crc\n"               // 3
    "except ImportError:\n"                         // 4
    "    def crc(b):\n"                             // 5
    "        return sum(b) % 255\n"                 // 6
    "if sys.platform == 'win32':\n"                 // 7
    "    class Path:\n"                             // 8
    "        \"\"\"Windows.\"\"\"\n"                   // 9
    "        def sep(self):\n"                      // 10
    "            return '\\\\'\n"                     // 11
    "else:\n"                                       // 12
    "    class Path:\n"                             // 13
    "        \"\"\"POSIX.\"\"\"\n"                     // 14
    "        def sep(self):\n"                      // 15
    "            return '/'\n"                      // 16
    "with open(__file__) as f:\n"                   // 17
    "    def first():\n"                            // 18
    "        return 1\n"                            // 19
    "for k in range(2):\n"                          // 20
    "    def loop():\n"                             // 21
    "        return k\n"                            // 22
    "class Box:\n"                                  // 23
    "    if True:\n"                                // 24
    "        def size(self):\n"                     // 25
    "            return 0\n";                       // 26

TEST(PythonDefinitions, ADefInACompoundStatementIsAUnit) {
  FileDefinitions base = One(kBranches);
  ASSERT_TRUE(base.parsed) << base.error;
  std::vector<std::string> names;
  for (const DefinitionUnit& u : base.units) names.push_back(u.name);
  ASSERT_EQ(names, (std::vector<std::string>{"crc", "Path.sep", "Path#2.sep", "first", "loop", "Box.size"}));
  EXPECT_EQ(base.UnitAt(6)->name, "crc");
  EXPECT_EQ(base.UnitAt(16)->name, "Path#2.sep");
  EXPECT_EQ(base.UnitAt(7), nullptr) << "the if statement is module-level code";
  std::vector<std::string> docs;
  for (const DefinitionDoc& d : base.docs) docs.push_back(d.name);
  EXPECT_EQ(docs, (std::vector<std::string>{"Path", "Path#2"}));
  for (const auto& [from, to, unit] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"return sum(b) % 255", "return sum(b) % 256", "crc"},
           {"return '\\\\'", "return '\\\\\\\\'", "Path.sep"},
           {"return '/'", "return ':'", "Path#2.sep"},
           {"return 1", "return 2", "first"},
           {"return k", "return -k", "loop"},
           {"return 0", "return 1", "Box.size"},
       }) {
    FileDefinitions v = Variant(kBranches, from, to);
    ASSERT_EQ(v.units.size(), base.units.size()) << from;
    EXPECT_TRUE(Same(v.module, base.module)) << from << " -> " << to;
    for (size_t i = 0; i < base.units.size(); i++) {
      EXPECT_EQ(Same(v.units[i].hash, base.units[i].hash), base.units[i].name != unit) << from << ": " << base.units[i].name;
    }
  }
  // A docstring of a class in a branch: its own part, by its own name.
  FileDefinitions doc = Variant(kBranches, "POSIX.", "Unix.");
  EXPECT_TRUE(Same(doc.module, base.module));
  ASSERT_EQ(doc.docs.size(), 2u);
  EXPECT_TRUE(Same(doc.docs[0].hash, base.docs[0].hash));
  EXPECT_FALSE(Same(doc.docs[1].hash, base.docs[1].hash));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"except ImportError:", "except (ImportError, OSError):"},
           {"if sys.platform == 'win32':", "if sys.platform.startswith('win'):"},
           {"def crc(b):", "def crc(b, seed=0):"},
           {"for k in range(2):", "for k in range(3):"},
           {"    if True:\n", "    if False:\n"},
       }) {
    EXPECT_FALSE(Same(Variant(kBranches, from, to).module, base.module)) << from << " -> " << to;
  }
}

// Format 4 ("names" in ste_fingerprint.py): a plain function or simple
// constant added or removed is no module-level code; the code of the
// module that names it changes, and the `names` line does.
TEST(PythonDefinitions, AnAddedPlainFunctionOrConstantChangesWhatNamesItNotTheModule) {
  const std::string base_text =
      "import math\n"
      "TAX = 20\n"
      "def area(w, h):\n"
      "    return w * h\n"
      "def total(xs):\n"
      "    return len(xs)\n"
      "class Shop:\n"
      "    def price(self, n):\n"
      "        return n * TAX\n";
  FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed && base.has_names) << base.error;
  // A helper added, and one function changed to call it.
  FileDefinitions added = Variant(base_text, "def total(xs):", "def helper():\n    return 1\ndef total(xs):");
  EXPECT_TRUE(Same(added.module, base.module)) << "a plain function added is no module-level code";
  EXPECT_FALSE(Same(added.names, base.names));
  EXPECT_TRUE(Same(UnitHash(added, "area"), UnitHash(base, "area")));
  EXPECT_TRUE(Same(UnitHash(added, "total"), UnitHash(base, "total")));
  ASSERT_NE(added.Sig("helper"), nullptr);
  FileDefinitions calls = Variant(base_text, "def total(xs):\n    return len(xs)",
                                  "def helper():\n    return 1\ndef total(xs):\n    return len(xs) + helper()");
  EXPECT_TRUE(Same(calls.module, base.module));
  EXPECT_FALSE(Same(UnitHash(calls, "total"), UnitHash(base, "total")));
  EXPECT_TRUE(Same(UnitHash(calls, "Shop.price"), UnitHash(base, "Shop.price")));
  // A function of the module named like a builtin its code used: that code
  // changes (the name now finds the module's function).
  FileDefinitions shadow = Variant(base_text, "class Shop:", "def len(x):\n    return 0\nclass Shop:");
  EXPECT_TRUE(Same(shadow.module, base.module));
  EXPECT_FALSE(Same(UnitHash(shadow, "total"), UnitHash(base, "total")));
  EXPECT_TRUE(Same(UnitHash(shadow, "area"), UnitHash(base, "area")));
  // A constant added, and one removed: the same.
  FileDefinitions more = Variant(base_text, "TAX = 20\n", "TAX = 20\nRATE = 3\n");
  EXPECT_TRUE(Same(more.module, base.module));
  EXPECT_FALSE(Same(more.names, base.names));
  FileDefinitions fewer = Variant(base_text, "TAX = 20\n", "");
  EXPECT_TRUE(Same(fewer.module, base.module));
  EXPECT_FALSE(Same(UnitHash(fewer, "Shop.price"), UnitHash(base, "Shop.price"))) << "it names TAX, which is gone";
  // Module-level code that names one: the module changes.
  FileDefinitions read = Variant(base_text, "class Shop:", "RATE = 3\nLIMIT = RATE * 2\nclass Shop:");
  EXPECT_FALSE(Same(read.module, base.module));
  // A constant that moved past other module-level code: its part changes
  // (code that ran as the module loaded may have looked it up there);
  // among constants and plain functions only, nothing but the order.
  FileDefinitions moved = Variant(base_text, "import math\nTAX = 20\n", "TAX = 20\nimport math\n");
  EXPECT_TRUE(Same(moved.module, base.module));
  ASSERT_NE(moved.Const("TAX"), nullptr);
  EXPECT_FALSE(Same(moved.Const("TAX")->hash, base.Const("TAX")->hash));
  FileDefinitions swapped = Variant(base_text, "TAX = 20\ndef area(w, h):\n    return w * h\n",
                                    "def area(w, h):\n    return w * h\nTAX = 20\n");
  EXPECT_TRUE(Same(swapped.module, base.module));
  EXPECT_TRUE(Same(swapped.Const("TAX")->hash, base.Const("TAX")->hash));
  EXPECT_FALSE(Same(swapped.names, base.names)) << "the namespace's order";
  // A decorated function, a class, an import added: module-level code.
  for (const char* extra : {"@staticmethod\ndef deco():\n    pass\n", "class New:\n    pass\n",
                                   "import os\n", "X = math.pi\n"}) {
    FileDefinitions v = Variant(base_text, "class Shop:", std::string(extra) + "class Shop:");
    EXPECT_FALSE(Same(v.module, base.module)) << extra;
  }
  // A module with its own __getattr__ answers names it does not bind. One
  // that spells out every name it answers (format 6): another name added is
  // no module-level code, one of those is.
  const std::string lazy = base_text +
                           "def __getattr__(name):\n    if name == 'old':\n        return 1\n"
                           "    if name in ('older', 'oldest'):\n        return 2\n    raise AttributeError(name)\n";
  FileDefinitions lazy_added = Variant(lazy, "class Shop:", "def helper():\n    return 1\nclass Shop:");
  EXPECT_TRUE(Same(One(lazy).module, lazy_added.module));
  EXPECT_FALSE(Same(One(lazy).names, lazy_added.names));
  for (const char* answered : {"old", "oldest"}) {
    FileDefinitions v = Variant(lazy, "class Shop:", std::string("def ") + answered + "():\n    return 1\nclass Shop:");
    EXPECT_FALSE(Same(One(lazy).module, v.module)) << answered;
  }
  // Any other __getattr__ (an unguarded return, no raise at its end, an
  // assignment, a def in a branch, two): an added function stays
  // module-level code.
  for (const char* other : {"def __getattr__(name):\n    return 1\n",
                            "def __getattr__(name):\n    if name == 'old':\n        return 1\n",
                            "def __getattr__(name):\n    name = name.lower()\n    if name == 'old':\n        return 1\n"
                            "    raise AttributeError(name)\n",
                            "def __getattr__(name):\n    if name == 'old':\n        return 1\n    else:\n        return 2\n"
                            "    raise AttributeError(name)\n",
                            "__getattr__ = make_lazy()\n", "if LAZY:\n    def __getattr__(name):\n        raise AttributeError\n",
                            "def __getattr__(name):\n    raise KeyError\ndef __getattr__(name):\n    raise KeyError\n"}) {
    const std::string bound = base_text + other;
    EXPECT_FALSE(Same(One(bound).module, Variant(bound, "class Shop:", "def helper():\n    return 1\nclass Shop:").module))
        << other;
  }
}

// typing.overload's defs (format 6) are part of their implementation's
// unit: no module-level code, no anchor, no other binding of the name.
TEST(PythonDefinitions, TypingOverloadsArePartOfTheirImplementationsUnit) {
  const std::string base_text =
      "from __future__ import annotations\n"
      "import typing as t\n"
      "from typing import overload\n"
      "TAX = 1\n"
      "@t.overload\n"
      "def f(x: int) -> int: ...\n"
      "@t.overload\n"
      "def f(x: str) -> str: ...\n"
      "def f(x):\n"
      "    return x\n"
      "class C:\n"
      "    @overload\n"
      "    def m(self, x: int) -> int: ...\n"
      "    def m(self, x):\n"
      "        return x\n"
      "LIMIT = 2\n";
  const FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed) << base.error;
  std::set<std::string> names;
  for (const DefinitionUnit& u : base.units) names.insert(u.name);
  EXPECT_EQ(names, (std::set<std::string>{"f", "C.m"}));
  EXPECT_NE(base.Sig("f"), nullptr) << "the implementation is a plain function";
  // An overload retyped, added or removed: its implementation's unit.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"def f(x: str) -> str: ...", "def f(x: bytes) -> bytes: ..."},
           {"def f(x: str) -> str: ...\n", "def f(x: str) -> str: ...\n@t.overload\ndef f(x: float) -> float: ...\n"},
           {"@t.overload\ndef f(x: int) -> int: ...\n", ""}}) {
    FileDefinitions v = Variant(base_text, from, to);
    EXPECT_TRUE(Same(v.module, base.module)) << to;
    EXPECT_FALSE(Same(UnitHash(v, "f"), UnitHash(base, "f"))) << to;
    EXPECT_TRUE(Same(UnitHash(v, "C.m"), UnitHash(base, "C.m"))) << to;
    EXPECT_TRUE(Same(v.Const("LIMIT")->hash, base.Const("LIMIT")->hash)) << "no anchor moved: " << to;
  }
  FileDefinitions method = Variant(base_text, "def m(self, x: int) -> int: ...", "def m(self, x: float) -> float: ...");
  EXPECT_TRUE(Same(method.module, base.module));
  EXPECT_FALSE(Same(UnitHash(method, "C.m"), UnitHash(base, "C.m")));
  // What stays module-level (an overload's annotation edit changes the
  // module): a default that runs code, another module's `overload`, one
  // used before its import, one with no implementation right after it.
  for (const std::string& context : std::vector<std::string>{
           "import typing as t\n@t.overload\ndef g(x: T, y=compute()) -> T: ...\ndef g(x, y=0):\n    return x\n",
           "from mylib import overload\n@overload\ndef g(x: T) -> T: ...\ndef g(x):\n    return x\n",
           "@t.overload\ndef g(x: T) -> T: ...\ndef g(x):\n    return x\nimport typing as t\n",
           "import typing as t\n@t.overload\ndef g(x: T) -> T: ...\nG = 1\ndef g(x):\n    return x\n"}) {
    auto with = [&](const char* type) {
      std::string text = "from __future__ import annotations\n" + context;
      text.replace(text.find("x: T"), 4, std::string("x: ") + type);
      return One(text);
    };
    EXPECT_FALSE(Same(with("int").module, with("str").module)) << context;
  }
}

// Imports that only bind names (format 6): each name a from-import binds
// is a part of its own; a repeat of a module already imported leaves the
// module's code, a first import stays as which module it loads, where.
TEST(PythonDefinitions, ImportsThatOnlyBindNamesArePartsOfTheirOwn) {
  const std::string base_text =
      "from .a import f\n"
      "from .b import g as gee\n"
      "X = 1\n"
      "def use():\n"
      "    return h()\n";
  const FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed && base.has_full && base.has_binds) << base.error;
  ASSERT_EQ(base.imports.size(), 2u);
  EXPECT_EQ(base.imports[1].name, "gee");
  EXPECT_EQ(base.imports[1].level, 1u);
  EXPECT_EQ(base.imports[1].module, "b");
  EXPECT_EQ(base.imports[1].attr, "g");
  EXPECT_EQ(base.binds, (std::vector<std::string>{"X", "f", "gee", "use"}));
  // A repeat added: not the module's own code, a part of its own; the unit
  // that names it changes (it found no module's h before).
  FileDefinitions repeat = Variant(base_text, "X = 1\n", "from .a import h\nX = 1\n");
  EXPECT_TRUE(Same(repeat.module, base.module));
  EXPECT_FALSE(Same(repeat.module_full, base.module_full));
  EXPECT_FALSE(Same(repeat.names, base.names));
  ASSERT_NE(repeat.Import("h"), nullptr);
  EXPECT_FALSE(Same(UnitHash(repeat, "use"), UnitHash(base, "use")));
  // A name added to a first import: the same.
  FileDefinitions more = Variant(base_text, "from .a import f\n", "from .a import f, h\n");
  EXPECT_TRUE(Same(more.module, base.module));
  // What an import binds, from where: its part.
  FileDefinitions moved = Variant(base_text, "from .b import g as gee", "from .c import g as gee");
  EXPECT_FALSE(Same(moved.Import("gee")->hash, base.Import("gee")->hash));
  EXPECT_FALSE(Same(moved.module, base.module)) << "a first import of another module loads it";
  FileDefinitions other = Variant(base_text, "from .b import g as gee", "from .b import k as gee");
  EXPECT_FALSE(Same(other.Import("gee")->hash, base.Import("gee")->hash));
  EXPECT_TRUE(Same(other.module, base.module));
  // An import that moved past other module-level code: its part changes.
  FileDefinitions past = Variant(base_text, "X = 1\n", "X = 1\nprint(X)\nfrom .a import h\n");
  FileDefinitions before = Variant(base_text, "X = 1\n", "X = 1\nfrom .a import h\nprint(X)\n");
  EXPECT_FALSE(Same(past.Import("h")->hash, before.Import("h")->hash));
  // Not parts: a star, a dunder, `from . import sub` (it may load the
  // submodule), a name bound twice, a future statement (it changes how the
  // file compiles); their statements stay.
  for (const char* kept : {"from .a import *\n", "from .a import __version__\n", "from . import sub\n",
                           "from .a import X\n", "from __future__ import annotations\n"}) {
    FileDefinitions v = Variant(base_text, "def use():", std::string(kept) + "def use():");
    EXPECT_FALSE(Same(v.module, base.module)) << kept;
  }
  // Bound however the module runs: both branches of an if/else, a try's
  // body and all its handlers; not an if without else, nor a handler that
  // binds nothing.
  const FileDefinitions branches = One(
      "try:\n    from fast import pad\nexcept ImportError:\n    def pad(s):\n        return s\n"
      "if X:\n    class Pair: pass\nelse:\n    class Pair: pass\n"
      "if Y:\n    ONLY = 1\n"
      "try:\n    import json as codec\nexcept ImportError:\n    pass\n");
  EXPECT_EQ(branches.binds, (std::vector<std::string>{"Pair", "pad"}));
}

// Whether each of a package's imports that only bind names finds its name:
// the file it names (ImportedFile), and that file's names.
TEST(ImportsHold, TheFileAnImportNamesAndWhetherItBindsTheName) {
  std::vector<InventoryEntry> entries;
  for (const char* path : {"src/pkg/__init__.py", "src/pkg/a.py", "src/pkg/sub/__init__.py", "src/pkg/sub.py",
                           "src/pkg/fast.py", "src/pkg/fast.cpython-311-x86_64-linux-gnu.so", "src/pkg/sub/deep.py"}) {
    InventoryEntry e;
    e.path = path;
    e.type = FileType::kRegular;
    entries.push_back(e);
  }
  absl::StatusOr<Inventory> tree = Inventory::FromEntries(entries, 0);
  ASSERT_TRUE(tree.ok()) << tree.status();
  const ImportTree t = ImportTreeOf(*tree);
  auto imp = [](uint32_t level, const char* module) {
    DefinitionImport i;
    i.name = i.attr = "x";
    i.level = level;
    i.module = module;
    return i;
  };
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(1, "a"), t), "src/pkg/a.py");
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(1, "sub"), t), "src/pkg/sub/__init__.py") << "a package first";
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(1, "sub.deep"), t), "src/pkg/sub/deep.py");
  EXPECT_EQ(ImportedFile("src/pkg/sub/__init__.py", imp(2, "a"), t), "src/pkg/a.py");
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(0, "pkg.a"), t), "src/pkg/a.py");
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(0, "other.a"), t), "") << "another package";
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(1, "fast"), t), "") << "an extension module beside";
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(1, "missing"), t), "");
  EXPECT_EQ(ImportedFile("src/pkg/a.py", imp(1, "sub"), t), "") << "only in a package's __init__.py";
  EXPECT_EQ(ImportedFile("src/pkg/__init__.py", imp(4, "a"), t), "") << "above the root";

  FileDefinitions init;
  init.parsed = true;
  init.imports = {imp(1, "a")};
  init.imports[0].attr = "f";
  FileDefinitions a;
  a.parsed = true;
  a.has_binds = true;
  a.binds = {"X", "f"};
  auto defs_of = [&](const std::string& file) -> const FileDefinitions* { return file == "src/pkg/a.py" ? &a : nullptr; };
  EXPECT_TRUE(ImportsHold("src/pkg/__init__.py", init, t, defs_of));
  EXPECT_FALSE(ImportsHold("src/pkg/a.py", init, t, defs_of));
  init.imports[0].attr = "g";
  EXPECT_FALSE(ImportsHold("src/pkg/__init__.py", init, t, defs_of)) << "a.py does not bind g";
  init.imports[0].attr = "f";
  a.has_binds = false;
  EXPECT_FALSE(ImportsHold("src/pkg/__init__.py", init, t, defs_of)) << "a fingerprinter that does not say";
  a.has_binds = true;
  init.imports.push_back(imp(1, "sub"));
  EXPECT_FALSE(ImportsHold("src/pkg/__init__.py", init, t, defs_of)) << "sub's names not known";
}

// Format 10: a from-import whose names the fingerprinter's standard
// library binds (typing's, sys's) is a part of its own in any module, and
// the `stdlib` fingerprint leaves out only those: a module whose imports
// of the tree do not hold (not a package's __init__.py) still leaves them
// out. A name the standard library does not bind, a module a package puts
// in place (os.path), a relative import: as before.
TEST(PythonDefinitions, AStandardLibraryImportThatBindsItsNamesIsAPartInAnyModule) {
  const std::string base_text =
      "from typing import TYPE_CHECKING\n"
      "from .a import f\n"
      "from sys import argv\n"
      "import json\n"
      "\n"
      "def use():\n"
      "    return f, json, argv\n";
  const FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed) << base.error;
  ASSERT_EQ(base.imports.size(), 3u);
  EXPECT_TRUE(base.Import("TYPE_CHECKING")->stdlib);
  EXPECT_FALSE(base.Import("f")->stdlib) << "a relative import";
  EXPECT_TRUE(base.Import("argv")->stdlib) << "a builtin module";
  ASSERT_TRUE(base.has_stdlib);
  ASSERT_TRUE(base.has_full);
  // Names added to typing's import (sympy 9bb178420e: `Literal, overload`).
  const FileDefinitions more =
      Variant(base_text, "from typing import TYPE_CHECKING\n", "from typing import TYPE_CHECKING, Literal, overload\n");
  EXPECT_TRUE(more.Import("Literal")->stdlib);
  EXPECT_TRUE(Same(more.module, base.module));
  EXPECT_TRUE(Same(more.module_stdlib, base.module_stdlib));
  EXPECT_FALSE(Same(more.module_full, base.module_full));
  EXPECT_FALSE(Same(more.names, base.names));
  // The tree's import changed: the stdlib fingerprint holds it.
  const FileDefinitions tree_more = Variant(base_text, "from .a import f\n", "from .a import f, g\n");
  EXPECT_FALSE(Same(tree_more.module_stdlib, base.module_stdlib));
  EXPECT_TRUE(Same(tree_more.module, base.module));
  // A name typing does not bind, a module os puts in place, a star: the
  // statement stays in the stdlib fingerprint.
  for (const char* kept : {"from typing import ste_no_such_name\n", "from os.path import join\n",
                           "from typing import *\n"}) {
    const FileDefinitions v = Variant(base_text, "def use():", std::string(kept) + "def use():");
    EXPECT_FALSE(Same(v.module_stdlib, base.module_stdlib)) << kept;
    for (const DefinitionImport& i : v.imports) {
      if (i.name != "TYPE_CHECKING" && i.name != "argv") {
        EXPECT_FALSE(i.stdlib) << kept << ": " << i.name;
      }
    }
  }
  // Only the standard library's: no stdlib fingerprint (the module's is it).
  const FileDefinitions only = One("from typing import TYPE_CHECKING\nX = 1\n");
  EXPECT_FALSE(only.has_stdlib);
  EXPECT_TRUE(only.Import("TYPE_CHECKING")->stdlib);
  // The answer round-trips (the fingerprint cache keeps it as text).
  std::optional<FileDefinitions> again = ParseFingerprintAnswer(FingerprintAnswer(base));
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->has_stdlib);
  EXPECT_TRUE(Same(again->module_stdlib, base.module_stdlib));
  EXPECT_TRUE(again->Import("TYPE_CHECKING")->stdlib);
  EXPECT_FALSE(again->Import("f")->stdlib);
  // Which fingerprint the module view takes.
  const View view = *ParseView(DefinitionPartPath("src/pkg/mod.py", DefinitionPart::kModule, ""));
  auto module_view = [&](bool tree_holds, bool stdlib_holds) {
    return DefinitionViewEntry("v", view, base, base_text, tree_holds, stdlib_holds)->hash;
  };
  EXPECT_TRUE(Same(module_view(true, true), base.module));
  EXPECT_TRUE(Same(module_view(false, true), base.module_stdlib));
  EXPECT_TRUE(Same(module_view(true, false), base.module_full));
  EXPECT_TRUE(Same(module_view(false, false), base.module_full));
}

// A standard-library import holds unless a file of the tree could be found
// first under its top-level name: at the root, or in a folder that is no
// package (a runner may put it on sys.path); the same of an inventory and
// of the disk.
TEST(ImportsHold, StandardLibraryImportsUnlessAFileOfTheTreeMayShadowThem) {
  const std::vector<std::string> files = {
      "src/pkg/__init__.py", "src/pkg/json.py",  "src/pkg/sub/__init__.py", "src/pkg/sub/enum/__init__.py",
      "tests/typing.py",     "tools/csv/__init__.py", "tests/__pycache__/re.cpython-311.pyc",
      "lib/_speedups.cpython-311-x86_64-linux-gnu.so", "array.py", "docs/conf.txt"};
  std::vector<InventoryEntry> entries;
  char dir[] = "/tmp/ste-shadow-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  for (const std::string& f : files) {
    InventoryEntry e;
    e.path = f;
    e.type = FileType::kRegular;
    entries.push_back(e);
    const std::string path = std::string(dir) + "/" + f;
    for (size_t at = path.find('/', std::strlen(dir) + 1); at != std::string::npos; at = path.find('/', at + 1)) {
      mkdir(path.substr(0, at).c_str(), 0755);
    }
    std::ofstream(path) << "\n";
  }
  std::sort(entries.begin(), entries.end(), [](const InventoryEntry& a, const InventoryEntry& b) { return a.path < b.path; });
  absl::StatusOr<Inventory> tree = Inventory::FromEntries(entries, 0);
  ASSERT_TRUE(tree.ok()) << tree.status();
  for (const ImportTree& t : {ImportTreeOf(*tree), ImportTreeOnDisk(dir)}) {
    for (const char* name : {"typing", "csv", "_speedups", "array", "pkg"}) EXPECT_TRUE(t.may_shadow(name)) << name;
    for (const char* name : {"json", "enum", "re", "sub", "conf", "os"}) EXPECT_FALSE(t.may_shadow(name)) << name;
    FileDefinitions d;
    d.parsed = true;
    DefinitionImport i;
    i.name = i.attr = "x";
    i.module = "json.decoder";
    i.stdlib = true;
    d.imports = {i};
    EXPECT_TRUE(StdlibImportsHold(d, t));
    EXPECT_TRUE(ImportsHold("src/pkg/mod.py", d, t, [](const std::string&) { return nullptr; }))
        << "ImportsHold leaves the standard library's to StdlibImportsHold";
    d.imports[0].module = "typing";
    EXPECT_FALSE(StdlibImportsHold(d, t)) << "tests/typing.py";
    d.imports[0].module = "json";
    d.imports[0].stdlib = false;
    EXPECT_TRUE(StdlibImportsHold(d, t)) << "not the standard library's: ImportsHold's";
    EXPECT_FALSE(ImportsHold("src/pkg/mod.py", d, t, [](const std::string&) { return nullptr; }));
  }
  EXPECT_EQ(system(("rm -rf " + std::string(dir)).c_str()), 0);
}

// A compiled pattern is a simple constant (format 6): `re.compile` of a
// literal that compiles without a warning, re imported before it.
TEST(PythonDefinitions, ACompiledPatternIsASimpleConstant) {
  const std::string base_text =
      "import re\n"
      "DIGITS = re.compile(r'\\d+', re.I | re.M)\n"
      "WORDS = re.compile(b'\\\\w+', flags=re.X)\n"
      "def digits(s):\n"
      "    return DIGITS.findall(s)\n";
  const FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed) << base.error;
  ASSERT_NE(base.Const("DIGITS"), nullptr);
  ASSERT_NE(base.Const("WORDS"), nullptr);
  FileDefinitions edited = Variant(base_text, "r'\\d+'", "r'\\d'");
  EXPECT_TRUE(Same(edited.module, base.module));
  EXPECT_FALSE(Same(edited.Const("DIGITS")->hash, base.Const("DIGITS")->hash));
  EXPECT_TRUE(Same(UnitHash(edited, "digits"), UnitHash(base, "digits")));
  // Module-level code: a pattern that does not compile, or warns (a
  // nested set), flags that are not re's, re not imported before it.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"r'\\d+'", "r'(\\d+'"},
           {"r'\\d+'", "'[[a]'"},
           {"re.I | re.M", "re.I | MINE"},
           {"import re\nDIGITS = re.compile(r'\\d+', re.I | re.M)\n", "DIGITS = re.compile(r'\\d+', re.I | re.M)\nimport re\n"}}) {
    FileDefinitions v = Variant(base_text, from, to);
    EXPECT_EQ(v.Const("DIGITS"), nullptr) << to;
    EXPECT_FALSE(Same(v.module, base.module)) << to;
  }
}

// A lambda among a constant's values (format 8: a printer's or a parser's
// dispatch table) is part of the constant's value: making it runs
// nothing, and what calls it got it through the constant's name. Alone,
// or with a default that is not a literal, it stays module-level.
TEST(PythonDefinitions, ALambdaInAConstantsLiteralIsPartOfItsValue) {
  const std::string base_text =
      "TABLE = {\"a\": [(lambda x: True, \"A\")], \"b\": (lambda *x: x[0] > 1, \"B\"), \"c\": lambda x=1, *, k=(2, -3): x}\n"
      "ALONE = lambda x: x\n"
      "DEFAULTED = {\"c\": lambda x=missing(): x}\n"
      "def use():\n"
      "    return TABLE[\"a\"][0][0](1)\n";
  const FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed) << base.error;
  ASSERT_NE(base.Const("TABLE"), nullptr);
  EXPECT_EQ(base.Const("ALONE"), nullptr) << "a function: no name record covers it";
  EXPECT_EQ(base.Const("DEFAULTED"), nullptr) << "its default runs as the module loads";
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"A\")", "\"AA\")"}, {"lambda x: True", "lambda x: False"}, {"x[0] > 1", "x[0] > 2"}, {"k=(2, -3)", "k=(2, 3)"}}) {
    FileDefinitions v = Variant(base_text, from, to);
    ASSERT_NE(v.Const("TABLE"), nullptr) << to;
    EXPECT_TRUE(Same(v.module, base.module)) << to;
    EXPECT_FALSE(Same(v.Const("TABLE")->hash, base.Const("TABLE")->hash)) << to;
    EXPECT_TRUE(Same(UnitHash(v, "use"), UnitHash(base, "use"))) << to;
  }
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"lambda x: x\n", "lambda x: -x\n"}, {"x=missing()", "x=other()"}, {"k=(2, -3)", "k=compute()"}}) {
    FileDefinitions v = Variant(base_text, from, to);
    EXPECT_FALSE(Same(v.module, base.module)) << to;
  }
}

// Docstrings and simple constants are parts of their own; whether one
// exists, and anything that is not simple, stays module-level.
TEST(PythonDefinitions, DocstringsAndSimpleConstantsAreTheirOwnParts) {
  const std::string kShop =
      "\"\"\"The shop.\"\"\"\n"                 // 1
      "__version__ = \"1.0\"\n"                  // 2
      "__all__ = [\"Shop\"]\n"                   // 3
      "TAX = 20\n"                               // 4
      "RATES = {\"a\": (1, -2.5)}\n"              // 5
      "TWICE = 1\n"                              // 6
      "TWICE = 2\n"                              // 7
      "DERIVED = TAX * 2\n"                      // 8
      "\n"                                       // 9
      "@decorate\n"                              // 10
      "class Shop:\n"                            // 11
      "    \"\"\"A shop.\"\"\"\n"                  // 12
      "    FEE = 1\n"                            // 13
      "\n"                                       // 14
      "    def price(self, n):\n"                // 15
      "        \"\"\"The price\n"                  // 16
      "        of n.\"\"\"\n"                      // 17
      "        return n * TAX\n"                 // 18
      "\n"                                       // 19
      "def reset():\n"                           // 20
      "    global RESET\n"                       // 21
      "    RESET = 0\n"                          // 22
      "\n"                                       // 23
      "RESET = 1\n";                             // 24
  FileDefinitions base = One(kShop);
  ASSERT_TRUE(base.parsed) << base.error;
  std::vector<std::pair<std::string, uint32_t>> docs;
  for (const DefinitionDoc& d : base.docs) docs.emplace_back(d.name, d.line);
  EXPECT_EQ(docs, (std::vector<std::pair<std::string, uint32_t>>{{"<module>", 0}, {"Shop", 10}, {"Shop.price", 15}}));
  std::vector<std::string> consts;
  for (const DefinitionConst& c : base.consts) consts.push_back(c.name);
  EXPECT_EQ(consts, (std::vector<std::string>{"__version__", "TAX", "RATES"}))
      << "not __all__, a name bound twice, an expression, a class attribute, a name a function declares global";
  auto variant = [&](const std::string& from, const std::string& to) { return Variant(kShop, from, to); };
  FileDefinitions doc = variant("The price\n", "The total price\n");
  EXPECT_TRUE(Same(doc.module, base.module));
  EXPECT_TRUE(Same(doc.units[0].hash, base.units[0].hash)) << "a docstring is not the unit's code";
  EXPECT_TRUE(Same(doc.units[0].place, base.units[0].place)) << "same lines";
  EXPECT_FALSE(Same(doc.docs[2].hash, base.docs[2].hash));
  EXPECT_TRUE(Same(doc.docs[1].hash, base.docs[1].hash));
  FileDefinitions longer = variant("of n.", "of n,\n        all taxes included.");
  EXPECT_TRUE(Same(longer.units[0].hash, base.units[0].hash));
  EXPECT_FALSE(Same(longer.units[0].place, base.units[0].place)) << "the body's lines moved";
  FileDefinitions keys = variant("{\"a\": (1, -2.5)}", "{(\"a\", (-1, 2)): [1, {2: 3}]}");
  EXPECT_TRUE(Same(keys.module, base.module)) << "hashable keys, any values: still a constant";
  ASSERT_NE(keys.Const("RATES"), nullptr);
  EXPECT_FALSE(Same(keys.Const("RATES")->hash, base.Const("RATES")->hash));
  FileDefinitions version = variant("\"1.0\"", "\"1.1\"");
  EXPECT_TRUE(Same(version.module, base.module));
  EXPECT_FALSE(Same(version.consts[0].hash, base.consts[0].hash));
  EXPECT_TRUE(Same(version.consts[1].hash, base.consts[1].hash));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"\"\"A shop.\"\"\"\n", ""},               // a docstring removed
           {"TAX = 20", "TAX = compute()"},           // no longer simple
           {"TWICE = 2", "TWICE = 3"},                // bound twice: module-level
           {"TAX * 2", "TAX * 3"},
           {"FEE = 1", "FEE = 2"},                    // a class attribute
           {"RESET = 1", "RESET = 2"},                // declared global in a function
           {"[\"Shop\"]", "[\"Shop\", \"TAX\"]"},        // __all__
           // A key or member that is hashed and cannot be: a TypeError as
           // the module loads (before, each was a constant's value)
           {"{\"a\": (1, -2.5)}", "{[\"a\"]: (1, -2.5)}"},
           {"{\"a\": (1, -2.5)}", "{(\"a\", [1]): 1}"},
           {"{\"a\": (1, -2.5)}", "{\"a\", (1, [2])}"},
       }) {
    FileDefinitions v = variant(from, to);
    EXPECT_FALSE(Same(v.module, base.module)) << from << " -> " << to;
  }
}

// An annotated simple constant (format 7): its value is its part, its
// annotation module-level code (evaluated as the module loads, and kept in
// __annotations__). Before, the statement left the module whole and an
// annotation that fails at import changed nothing.
TEST(PythonDefinitions, AnAnnotatedConstantsAnnotationIsModuleLevelCode) {
  const std::string base_text =
      "TAX: int = 20\n"
      "def price(n):\n"
      "    return n * TAX\n";
  FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed) << base.error;
  ASSERT_NE(base.Const("TAX"), nullptr);
  FileDefinitions value = Variant(base_text, "= 20", "= 25");
  EXPECT_TRUE(Same(value.module, base.module));
  EXPECT_FALSE(Same(value.Const("TAX")->hash, base.Const("TAX")->hash));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"TAX: int", "TAX: Missing"},            // a NameError as the module loads
           {"TAX: int", "TAX: make_type()"},        // code that runs
           {"TAX: int = 20", "TAX = 20"},           // __annotations__ loses it
           {"TAX: int = 20\n", "TAX: int = 20\nRATE: int = 3\n"},  // one added
       }) {
    FileDefinitions v = Variant(base_text, from, to);
    EXPECT_FALSE(Same(v.module, base.module)) << from << " -> " << to;
  }
  // The same under `from __future__ import annotations` (kept as a string,
  // which typing.get_type_hints evaluates).
  const std::string future = "from __future__ import annotations\n" + base_text;
  FileDefinitions lazy = One(future);
  FileDefinitions lazy_changed = Variant(future, "TAX: int", "TAX: Missing");
  EXPECT_FALSE(Same(lazy_changed.module, lazy.module));
}

// What compiling a module says is module-level (format 7): the import
// system compiles the whole file at its first import, so a warning in one
// function's body is every importer's (a SyntaxError under -W error or
// pytest's filterwarnings = error). And a SyntaxError only the compiler
// finds makes the file unparsed: ast.parse accepts it, no import does.
TEST(PythonDefinitions, WhatCompilingSaysIsModuleLevelAndItsSyntaxErrorsUnparse) {
  const std::string base_text =
      "import re\n"
      "def digits(s):\n"
      "    return re.findall(r\"\\d+\", s)\n"
      "def other():\n"
      "    return 1\n";
  FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed) << base.error;
  FileDefinitions quiet = Variant(base_text, "r\"\\d+\"", "r\"\\d*\"");
  EXPECT_TRUE(Same(quiet.module, base.module)) << "a body edit the compiler says nothing of";
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"r\"\\d+\"", "\"\\d+\""},                  // an invalid escape sequence
           {"return 1", "return 1 is 1"},               // "is" with a literal
           {"return 1", "assert (1, 'never')\n    return 1"},  // an assert on a tuple
       }) {
    FileDefinitions v = Variant(base_text, from, to);
    ASSERT_TRUE(v.parsed) << v.error;
    EXPECT_FALSE(Same(v.module, base.module)) << from << " -> " << to;
  }
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"    return 1\n", "    break\n"},
           {"def other():", "def other(x, x):"},
           {"    return 1\n", "    nonlocal q\n"},
           {"    return 1\n", "    from os import *\n"},
       }) {
    FileDefinitions v = Variant(base_text, from, to);
    EXPECT_FALSE(v.parsed) << from << " -> " << to;
    EXPECT_TRUE(v.units.empty());
  }
}

// A class's `__class__` cell (format 7): the first method that names
// `super` (or `__class__`) gives the class one, which a metaclass that does
// not hand `__classcell__` on to type.__new__ turns into a RuntimeError as
// the module loads. So whether the class has one is module-level; a
// second such method is its unit's edit only.
TEST(PythonDefinitions, WhetherAClassHasAClassCellIsModuleLevel) {
  const std::string base_text =
      "from base import Base\n"
      "class Shape(Base):\n"
      "    def area(self):\n"
      "        return 1\n"
      "    def size(self):\n"
      "        return 2\n";
  FileDefinitions base = One(base_text);
  ASSERT_TRUE(base.parsed) << base.error;
  FileDefinitions first = Variant(base_text, "return 1", "return super().area()");
  EXPECT_FALSE(Same(first.module, base.module)) << "the class now has a __class__ cell";
  FileDefinitions cls = Variant(base_text, "return 1", "return __class__");
  EXPECT_TRUE(Same(cls.module, first.module));
  const std::string with_one = "from base import Base\n"
                               "class Shape(Base):\n"
                               "    def area(self):\n"
                               "        return super().area()\n"
                               "    def size(self):\n"
                               "        return 2\n";
  FileDefinitions second = Variant(with_one, "return 2", "return super().size()");
  EXPECT_TRUE(Same(second.module, first.module)) << "it had one";
  EXPECT_FALSE(Same(UnitHash(second, "Shape.size"), UnitHash(first, "Shape.size")));
  // A plain edit, or `super` in a function outside any class: no cell.
  EXPECT_TRUE(Same(Variant(base_text, "return 1", "return 3").module, base.module));
  FileDefinitions outside = Variant(base_text + "def helper():\n    return 1\n", "    return 1\n", "    return 0\n");
  FileDefinitions outside_super =
      Variant(base_text + "def helper():\n    return 1\n", "def helper():\n    return 1", "def helper():\n    return super");
  EXPECT_TRUE(Same(outside_super.module, outside.module));
}

TEST(PythonDefinitions, AFileThatDoesNotParseHasNoUnitsAndAnUnparsedModule) {
  absl::StatusOr<std::vector<FileDefinitions>> r = Real().Run({"a.py", "b.py", "c.py"}, {"def (\n", kGeo, ""});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_FALSE((*r)[0].parsed);
  EXPECT_NE((*r)[0].error.find("SyntaxError"), std::string::npos) << (*r)[0].error;
  EXPECT_TRUE((*r)[1].parsed) << "one bad file does not spoil the others";
  EXPECT_TRUE((*r)[2].parsed) << "an empty file parses";
  View module = *ParseView(DefinitionViewPath("a.py", ""));
  std::optional<InventoryEntry> e = DefinitionViewEntry("a.py/\x01ste-def", module, (*r)[0], "def (\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(Same(e->hash, UnparsedModuleHash("def (\n")));
  View unit = *ParseView(DefinitionViewPath("a.py", "f"));
  EXPECT_FALSE(DefinitionViewEntry("a.py/\x01ste-def:f", unit, (*r)[0], "def (\n").has_value());
}

TEST(PythonDefinitions, AFingerprinterThatCannotRunOrAnswersBadlyLeavesItsFilesUnparsed) {
  for (const Fingerprinter& f : {WithPython("/nonexistent/python3"), WithPython("/usr/bin/python3", "/nonexistent/x.py"),
                                 Fingerprinter({{".py", {"/bin/echo", "file 0", "module zz"}}})}) {
    absl::StatusOr<std::vector<FileDefinitions>> r = f.Run({"a.py"}, {"x = 1\n"});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->size(), 1u);
    EXPECT_FALSE((*r)[0].parsed);
    EXPECT_FALSE((*r)[0].error.empty());
  }
  EXPECT_TRUE(Real().Run({}, {}).ok());
}

TEST(PythonDefinitions, ViewPathsParseAndRead) {
  EXPECT_EQ(DefinitionViewPath("src/geo.py", ""), "src/geo.py/\x01ste-def");
  EXPECT_EQ(DefinitionViewPath("src/geo.py", "Shape.name"), "src/geo.py/\x01ste-def:Shape.name");
  std::optional<View> v = ParseView("src/geo.py/\x01ste-def:Shape.name");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind, ViewKind::kDefinition);
  EXPECT_EQ(v->dir, "src/geo.py");
  EXPECT_EQ(v->arg, "Shape.name");
  EXPECT_EQ(DescribeDefinition("src/geo.py/\x01ste-def:Shape.name"), "src/geo.py::Shape.name");
  EXPECT_EQ(DescribeDefinition("src/geo.py/\x01ste-def"), "src/geo.py (module-level code)");
  EXPECT_EQ(DescribeDefinition("src/\x01ste-dists"), "");
  EXPECT_FALSE(ParseView("src/geo.py/\x01ste-defx").has_value());
  EXPECT_FALSE(ParseView("src/geo.py/\x01ste-def:").has_value());
  // ComputeViews never computes them.
  EXPECT_FALSE(ComputeViews("/tmp", {"a.py/\x01ste-def"}, GlobSet(), nullptr).ok());
}

// Select time: an unchanged file keeps the baseline's entries without
// being read; a changed one is fingerprinted; a gone one has none.
TEST(PythonDefinitions, OnlyChangedFilesAreFingerprintedNow) {
  char dir[] = "/tmp/ste-defs-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string root = dir;
  auto write = [&](const std::string& rel, const std::string& s) { std::ofstream(root + "/" + rel) << s; };
  write("a.py", kGeo);
  write("b.py", "def f():\n    return 1\n");
  write("c.py", "def g():\n    return 1\n");
  ScanOptions scan;
  scan.root = root;
  absl::StatusOr<Inventory> base_tree = Inventory::Scan(scan, nullptr);
  ASSERT_TRUE(base_tree.ok());
  const std::vector<std::string> views = {"a.py/\x01ste-def", "a.py/\x01ste-def:area", "b.py/\x01ste-def",
                                          "b.py/\x01ste-def:f", "c.py/\x01ste-def:g"};
  absl::StatusOr<std::vector<InventoryEntry>> first = DefinitionViewsNow(root, views, nullptr, *base_tree, Real());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 5u);
  Inventory base = *base_tree;
  ASSERT_TRUE(base.AddEntries(*first).ok());
  // a.py: unchanged, but its stored fingerprint is made up: copied, not
  // recomputed. b.py: a body changed. c.py: gone.
  std::vector<InventoryEntry> entries = base.entries();
  for (InventoryEntry& e : entries) {
    if (e.path == "a.py/\x01ste-def:area") e.hash = {1, 2};
  }
  absl::StatusOr<Inventory> doctored = Inventory::FromEntries(entries, base.taken_at_ns());
  ASSERT_TRUE(doctored.ok());
  write("b.py", "def f():\n    return 2\n");
  ASSERT_EQ(unlink((root + "/c.py").c_str()), 0);
  absl::StatusOr<Inventory> head = Inventory::Scan(scan, nullptr);
  ASSERT_TRUE(head.ok());
  absl::StatusOr<std::vector<InventoryEntry>> now = DefinitionViewsNow(root, views, &*doctored, *head, Real());
  ASSERT_TRUE(now.ok()) << now.status();
  std::map<std::string, XXH128_hash_t> got;
  for (const InventoryEntry& e : *now) got[e.path] = e.hash;
  std::map<std::string, XXH128_hash_t> was;
  for (const InventoryEntry& e : *first) was[e.path] = e.hash;
  ASSERT_EQ(got.size(), 4u) << "c.py's view is gone";
  EXPECT_TRUE(Same(got["a.py/\x01ste-def:area"], XXH128_hash_t{1, 2})) << "copied from the baseline";
  EXPECT_TRUE(Same(got["b.py/\x01ste-def"], was["b.py/\x01ste-def"]));
  EXPECT_FALSE(Same(got["b.py/\x01ste-def:f"], was["b.py/\x01ste-def:f"]));
  // A file that changes after the scan is an error (select all).
  write("b.py", "def f():\n    return 3\n");
  EXPECT_FALSE(DefinitionViewsNow(root, views, &*doctored, *head, Real()).ok());
  // No fingerprinter: a changed file's module-level code counts as changed.
  absl::StatusOr<Inventory> head2 = Inventory::Scan(scan, nullptr);
  ASSERT_TRUE(head2.ok());
  absl::StatusOr<std::vector<InventoryEntry>> none =
      DefinitionViewsNow(root, views, &*doctored, *head2, WithPython("/nonexistent/python3"));
  ASSERT_TRUE(none.ok());
  for (const InventoryEntry& e : *none) {
    EXPECT_NE(e.path, "b.py/\x01ste-def:f");
    if (e.path == "b.py/\x01ste-def") {
      EXPECT_FALSE(Same(e.hash, was["b.py/\x01ste-def"]));
    }
  }
  for (const char* f : {"a.py", "b.py"}) unlink((root + "/" + f).c_str());
  rmdir(root.c_str());
}

TEST(PythonDefinitions, TheCacheFingerprintsAFileOnce) {
  char dir[] = "/tmp/ste-defs-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/a.py";
  std::ofstream(path) << kGeo;
  DefinitionCache cache(Real());
  cache.Prefetch({path, path});
  std::shared_ptr<const FileDefinitions> a = cache.Get(path);
  EXPECT_TRUE(a->parsed);
  std::ofstream(path) << "def (\n";  // the tree must not change; the cache keeps what it read
  EXPECT_EQ(cache.Get(path).get(), a.get());
  EXPECT_FALSE(cache.Get(std::string(dir) + "/missing.py")->parsed);
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace ste
