// Fingerprinter: the language chosen by extension, one process per
// language, a failing language confined to its files, the scripts' own
// environment; and what the Ruby fingerprinter (integrations/ruby/
// ste_fingerprint.rb) puts in a unit and in the module-level code. Real
// python3 and ruby processes.
#include "ste/definitions.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ste/log_format.h"
#include "ste/log_reduction.h"

namespace ste {
namespace {

const std::string kIntegrations = std::string(STE_SOURCE_DIR) + "/integrations";

std::string TempDir() {
  char tmpl[] = "/tmp/ste-defs-test-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  return tmpl;
}

void Write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Hex(XXH128_hash_t h) {
  char buf[33];
  snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
           static_cast<unsigned long long>(h.low64));
  return buf;
}

// name -> hash of each unit; "" -> the module's; "const:<name>" -> a
// simple constant's.
std::map<std::string, std::string> Prints(const FileDefinitions& d) {
  std::map<std::string, std::string> out;
  out[""] = Hex(d.module);
  for (const DefinitionUnit& u : d.units) out[u.name] = Hex(u.hash);
  for (const DefinitionConst& c : d.consts) out["const:" + c.name] = Hex(c.hash);
  for (const DefinitionConst& c : d.sigs) out["sig:" + c.name] = Hex(c.hash);
  return out;
}

// The names (Prints) whose fingerprint changed from `base` to `now`, or
// that one of them lacks, sorted.
std::vector<std::string> ChangedPrints(const std::map<std::string, std::string>& base, const FileDefinitions& now) {
  const std::map<std::string, std::string> prints = Prints(now);
  std::set<std::string> changed;
  for (const auto& [name, hash] : base) {
    auto it = prints.find(name);
    if (it == prints.end() || it->second != hash) changed.insert(name);
  }
  for (const auto& [name, hash] : prints) {
    if (!base.count(name)) changed.insert(name);
  }
  return {changed.begin(), changed.end()};
}

const char kPython[] =
    "LIMIT = 1\n"
    "\n"
    "def add(a, b):\n"
    "    return a + b\n";

const char kRuby[] =
    "# frozen_string_literal: true\n"
    "module Geo\n"
    "  LIMIT = 1\n"
    "  class Polygon\n"
    "    include Comparable\n"
    "    attr_accessor :pts\n"
    "\n"
    "    # The area.\n"
    "    def area(scale = 1)\n"
    "      pts.size * scale\n"
    "    end\n"
    "\n"
    "    def self.create(n)\n"
    "      new\n"
    "    end\n"
    "\n"
    "    class << self\n"
    "      def origin\n"
    "        0\n"
    "      end\n"
    "    end\n"
    "\n"
    "    def /(other)\n"
    "      other\n"
    "    end\n"
    "\n"
    "    def area(scale = 1)\n"
    "      2\n"
    "    end\n"
    "  end\n"
    "end\n"
    "\n"
    "def helper\n"
    "  /#{1}/i\n"
    "end\n"
    "__END__\n"
    "data\n";

TEST(Fingerprinter, ChoosesTheScriptByExtensionAndKeepsTheOrder) {
  Fingerprinter f = Fingerprinter::ForIntegrations(kIntegrations);
  absl::StatusOr<std::vector<FileDefinitions>> run =
      f.Run({"lib/geo.rb", "src/calc.py", "README.md", "lib/other.rb"}, {kRuby, kPython, "# hi\n", "X = 1\n"});
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->size(), 4u);
  const FileDefinitions& rb = (*run)[0];
  ASSERT_TRUE(rb.parsed) << rb.error;
  std::vector<std::string> names;
  for (const DefinitionUnit& u : rb.units) names.push_back(u.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Geo::Polygon#area", "Geo::Polygon.create", "Geo::Polygon.origin",
                                             "Geo::Polygon#%2F", "Geo::Polygon#area#2", "helper"}));
  EXPECT_EQ(rb.units[0].first_line, 9u);
  EXPECT_EQ(rb.units[0].last_line, 11u);
  const FileDefinitions& py = (*run)[1];
  ASSERT_TRUE(py.parsed) << py.error;
  ASSERT_EQ(py.units.size(), 1u);
  EXPECT_EQ(py.units[0].name, "add");
  EXPECT_FALSE((*run)[2].parsed);
  EXPECT_NE((*run)[2].error.find("no fingerprinter for README.md"), std::string::npos) << (*run)[2].error;
  EXPECT_TRUE((*run)[3].parsed) << (*run)[3].error;
  EXPECT_TRUE((*run)[3].units.empty());
}

TEST(Fingerprinter, RunsOneProcessPerLanguage) {
  const std::string dir = TempDir();
  const std::string log = dir + "/runs";
  auto counted = [&](const std::string& tag, const std::string& command) {
    return std::vector<std::string>{"/bin/sh", "-c", "echo " + tag + " >> " + log + "; exec " + command};
  };
  Fingerprinter f({
      {".py", counted("py", "python3 -I -S -B " + kIntegrations + "/python/ste_fingerprint.py")},
      {".rb", counted("rb", "ruby --disable=all " + kIntegrations + "/ruby/ste_fingerprint.rb")},
  });
  absl::StatusOr<std::vector<FileDefinitions>> run =
      f.Run({"a.rb", "b.py", "c.rb", "d.py", "e.rb"}, {kRuby, kPython, "def x; end\n", kPython, "Y = 2\n"});
  ASSERT_TRUE(run.ok()) << run.status();
  for (const FileDefinitions& d : *run) EXPECT_TRUE(d.parsed) << d.error;
  EXPECT_EQ((*run)[2].units.at(0).name, "x");
  std::string runs = Read(log);
  EXPECT_TRUE(runs == "py\nrb\n" || runs == "rb\npy\n") << runs;
  Write(log, "");
  ASSERT_TRUE(f.Run({"only.py"}, {kPython}).ok());
  EXPECT_EQ(Read(log), "py\n") << "a language with no files runs nothing";

  // Many files: a process per core (at least 64 files each), the answers
  // in the order asked.
  Write(log, "");
  std::vector<std::string> paths, contents;
  for (int i = 0; i < 200; i++) {
    paths.push_back(absl::StrCat("m", i, ".py"));
    contents.push_back(absl::StrCat("def f", i, "():\n    return ", i, "\n"));
  }
  absl::StatusOr<std::vector<FileDefinitions>> many = f.Run(paths, contents);
  ASSERT_TRUE(many.ok()) << many.status();
  for (int i = 0; i < 200; i++) {
    ASSERT_TRUE((*many)[i].parsed) << i << ": " << (*many)[i].error;
    EXPECT_EQ((*many)[i].units.at(0).name, absl::StrCat("f", i));
  }
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(Read(log).size(), std::min<size_t>(cores, 3) * 3) << Read(log);
}

TEST(Fingerprinter, AFailingLanguageLeavesOnlyItsFilesUnparsed) {
  Fingerprinter f({
      {".py", {"python3", "-I", "-S", "-B", kIntegrations + "/python/ste_fingerprint.py"}},
      {".rb", {"/bin/sh", "-c", "cat > /dev/null; echo 'file 0'; echo 'bogus'"}},
  });
  absl::StatusOr<std::vector<FileDefinitions>> run = f.Run({"a.rb", "b.py", "c.rb"}, {kRuby, kPython, kRuby});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE((*run)[0].parsed);
  EXPECT_NE((*run)[0].error.find("out of protocol"), std::string::npos) << (*run)[0].error;
  EXPECT_FALSE((*run)[2].parsed);
  EXPECT_TRUE((*run)[1].parsed) << (*run)[1].error;
  Fingerprinter missing({{".rb", {"/nonexistent/ruby", "script"}}});
  run = missing.Run({"a.rb"}, {kRuby});
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE((*run)[0].parsed);
  EXPECT_FALSE((*run)[0].error.empty());
  EXPECT_FALSE(f.Run({"a.rb"}, {}).ok()) << "paths and contents must pair up";
}

TEST(Fingerprinter, TheScriptsDoNotSeeATestsRubyEnvironment) {
  // A RUBYLIB whose ripper.rb breaks the fingerprinter, a RUBYOPT that
  // would load a missing file: neither reaches the script.
  const std::string dir = TempDir();
  Write(dir + "/ripper.rb", "raise 'not the real ripper'\n");
  const char* old_lib = getenv("RUBYLIB");
  const char* old_opt = getenv("RUBYOPT");
  std::string saved_lib = old_lib ? old_lib : "", saved_opt = old_opt ? old_opt : "";
  setenv("RUBYLIB", dir.c_str(), 1);
  setenv("RUBYOPT", "-r/nonexistent/tracker.rb", 1);
  absl::StatusOr<std::vector<FileDefinitions>> run = Fingerprinter::ForIntegrations(kIntegrations).Run({"a.rb"}, {kRuby});
  if (old_lib) setenv("RUBYLIB", saved_lib.c_str(), 1); else unsetenv("RUBYLIB");
  if (old_opt) setenv("RUBYOPT", saved_opt.c_str(), 1); else unsetenv("RUBYOPT");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE((*run)[0].parsed) << (*run)[0].error;
}

// One edit of kRuby and the fingerprints it changes.
// `base` (at `path`) and each edit of it (its first `from` replaced by
// `to`; with `unique`, a `from` found twice fails the test too), all
// fingerprinted in one run: the base first.
template <typename Edit>
absl::StatusOr<std::vector<FileDefinitions>> FingerprintEdits(const std::string& path, const std::string& base,
                                                              const std::vector<Edit>& edits, bool unique) {
  std::vector<std::string> paths = {path}, contents = {base};
  for (const Edit& e : edits) {
    std::string after = base;
    size_t at = after.find(e.from);
    if (at == std::string::npos || (unique && after.find(e.from, at + 1) != std::string::npos)) {
      ADD_FAILURE() << e.name << ": '" << e.from << (at == std::string::npos ? "' not found" : "' ambiguous");
      return absl::InvalidArgumentError(e.name);
    }
    after.replace(at, e.from.size(), e.to);
    paths.push_back(path);
    contents.push_back(after);
  }
  return Fingerprinter::ForIntegrations(kIntegrations).Run(paths, contents);
}

struct RubyEdit {
  std::string name, from, to;
  std::vector<std::string> changed;  // "" = module-level code
};

// FingerprintEdits of `base`, then what each edit changed (ChangedPrints);
// an error if the run failed or any of them did not parse.
absl::StatusOr<std::vector<std::vector<std::string>>> ChangesOfEdits(const std::string& path, const std::string& base,
                                                                    const std::vector<RubyEdit>& edits, bool unique) {
  absl::StatusOr<std::vector<FileDefinitions>> run = FingerprintEdits(path, base, edits, unique);
  if (!run.ok()) return run.status();
  for (const FileDefinitions& d : *run) {
    if (!d.parsed) return absl::InvalidArgumentError(d.error);
  }
  const std::map<std::string, std::string> prints = Prints((*run)[0]);
  std::vector<std::vector<std::string>> out;
  for (size_t i = 1; i < run->size(); i++) out.push_back(ChangedPrints(prints, (*run)[i]));
  return out;
}

TEST(RubyFingerprint, ABodyEditChangesItsUnitAnythingElseTheModule) {
  const std::vector<RubyEdit> edits = {
      {"body", "pts.size * scale", "pts.size * scale * 2", {"Geo::Polygon#area"}},
      {"singleton body", "      new\n", "      allocate\n", {"Geo::Polygon.create"}},
      {"class << self body", "        0\n", "        1\n", {"Geo::Polygon.origin"}},
      {"regexp flag in a body", "/#{1}/i", "/#{1}/m", {"helper"}},
      {"comment in a body", "pts.size * scale\n", "pts.size * scale # sum\n", {"Geo::Polygon#area"}},
      {"comment outside", "# The area.", "# The surface.", {}},
      // (format 10: a unit's parameters are its `sig` part)
      {"parameter default", "def area(scale = 1)\n      pts", "def area(scale = 2)\n      pts",
       {"Geo::Polygon#area", "sig:Geo::Polygon#area"}},
      {"parameter name", "def self.create(n)", "def self.create(count)",
       {"Geo::Polygon.create", "sig:Geo::Polygon.create"}},
      {"constant", "LIMIT = 1", "LIMIT = 2", {"const:Geo::LIMIT"}},
      {"include", "include Comparable", "include Enumerable", {""}},
      {"attr_accessor", "attr_accessor :pts", "attr_accessor :pts, :name", {""}},
      {"visibility", "    attr_accessor :pts\n", "    attr_accessor :pts\n    private\n", {""}},
      {"magic comment", "frozen_string_literal: true", "frozen_string_literal: false", {""}},
      {"data after __END__", "data\n", "date\n", {""}},
  };
  // Units whose lines move change too: edits here keep the line count
  // except "visibility", whose later units all move.
  absl::StatusOr<std::vector<std::vector<std::string>>> changes = ChangesOfEdits("geo.rb", kRuby, edits, false);
  ASSERT_TRUE(changes.ok()) << changes.status();
  for (size_t i = 0; i < edits.size(); i++) {
    SCOPED_TRACE(edits[i].name);
    const std::vector<std::string>& changed = (*changes)[i];
    if (edits[i].name == "visibility") {
      ASSERT_FALSE(changed.empty());
      EXPECT_EQ(changed[0], "");
      continue;
    }
    EXPECT_EQ(changed, edits[i].changed);
  }
}

// A comment is code only where Ruby reads it as a magic comment: an
// encoding on the first line, frozen_string_literal before any token,
// shareable_constant_value and warn_indent anywhere as a whole comment. A
// documentation comment that says "encoding" or "-*-" past the first token
// is not.
const char kMagic[] =
    "# Header comment.\n"
    "module Codec\n"
    "  # Decodes the encoding of a body.\n"
    "  def self.decode(s)\n"
    "    s\n"
    "  end\n"
    "  # note\n"
    "  X = Array.new(1)\n"
    "end\n";

// A `break` (`next`, `redo`, `retry`) where it cannot go parses, but the
// compiler rejects it ("Invalid break"): no `require` loads the file, so
// every test that loads it fails. Before, only the method's unit changed.
TEST(RubyFingerprint, WhatOnlyTheCompilerRejectsDoesNotParse) {
  const std::vector<RubyEdit> edits = {
      {"break in a method", "pts.size * scale", "break", {}},
      {"next in a method", "pts.size * scale", "next", {}},
      {"redo in a method", "pts.size * scale", "redo", {}},
      {"break in a block", "pts.size * scale", "pts.each { break }", {}},
  };
  absl::StatusOr<std::vector<FileDefinitions>> run = FingerprintEdits("geo.rb", kRuby, edits, false);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE((*run)[0].parsed) << (*run)[0].error;
  for (size_t i = 0; i < 3; i++) {
    EXPECT_FALSE((*run)[i + 1].parsed) << edits[i].name;
    EXPECT_NE((*run)[i + 1].error.find("Invalid"), std::string::npos) << (*run)[i + 1].error;
  }
  EXPECT_TRUE((*run)[4].parsed) << (*run)[4].error;
}

TEST(RubyFingerprint, OnlyCommentsRubyReadsAsMagicAreCode) {
  const std::vector<RubyEdit> edits = {
      {"doc comment saying coding", "  # note\n", "  # The coding of a body: utf-8.\n", {}},
      {"doc comment saying encoding", "  # note\n", "  # encoding: ascii-8bit\n", {}},
      {"-*- past the first token", "  # note\n", "  # -*- a b -*-\n", {}},
      {"frozen_string_literal past the first token", "  # note\n", "  # frozen_string_literal: true\n", {}},
      {"shareable_constant_value", "  # note\n", "  # shareable_constant_value: literal\n", {""}},
      {"warn_indent", "  # note\n", "  # warn_indent: true\n", {""}},
      {"encoding on the first line", "# Header comment.\n", "# encoding: ascii-8bit\n", {""}},
      {"frozen_string_literal before any token", "# Header comment.\n", "# frozen_string_literal: true\n", {""}},
      {"-*- before any token", "# Header comment.\n", "# -*- coding: binary -*-\n", {""}},
  };
  absl::StatusOr<std::vector<std::vector<std::string>>> changes = ChangesOfEdits("codec.rb", kMagic, edits, true);
  ASSERT_TRUE(changes.ok()) << changes.status();
  for (size_t i = 0; i < edits.size(); i++) EXPECT_EQ((*changes)[i], edits[i].changed) << edits[i].name;
}

// A simple constant's value is a part of its own (its `const` line): a
// value edit changes that line only. That the constant exists is
// module-level code: adding or removing one, or a value that is not a
// literal (or a heredoc, or a name bound twice), changes the module.
const char kConsts[] =
    "module Mime\n"
    "  TYPES = { \".a\" => \"x/y\", \".b\" => %w[p q], c: [1, 2.5, nil, true] }.freeze\n"
    "  LIMIT = -1\n"
    "  NAME = \"n\".freeze\n"
    "  EMPTY = []\n"
    "  OBJ = Object.new\n"
    "  DOC = <<~T\n"
    "    t\n"
    "  T\n"
    "  TWICE = 1\n"
    "  TWICE ||= 2\n"
    "  def self.type(e)\n"
    "    TYPES[e]\n"
    "  end\n"
    "end\n"
    "TOP = :sym\n";

TEST(RubyFingerprint, ASimpleConstantsValueIsItsOwnPart) {
  const std::vector<RubyEdit> edits = {
      {"hash value", "\"x/y\"", "\"x/z\"", {"const:Mime::TYPES"}},
      {"nested array", "%w[p q]", "%w[p r]", {"const:Mime::TYPES"}},
      {"nested literal", "2.5, nil", "2.5, false", {"const:Mime::TYPES"}},
      {"freeze dropped", "true] }.freeze", "true] }", {"const:Mime::TYPES"}},
      {"negative number", "LIMIT = -1", "LIMIT = 1", {"const:Mime::LIMIT"}},
      {"string", "\"n\".freeze", "\"m\".freeze", {"const:Mime::NAME"}},
      {"top level", ":sym", ":other", {"const:TOP"}},
      // A regexp literal is made as the file is parsed; one with
      // interpolation runs code, and is no simple constant.
      {"a regexp", ":sym", "/a+b/i", {"const:TOP"}},
      {"an interpolated regexp", ":sym", "/a#{1}/", {"", "const:TOP"}},
      {"value over more lines", "EMPTY = []", "EMPTY = [\n    1,\n  ]", {"const:Mime::EMPTY"}},
      // (format 8: that a simple constant exists is its own part's, and
      // its anchor the statements before it that are none)
      {"constant added", "  EMPTY = []\n", "  EMPTY = []\n  MORE = 1\n", {"const:Mime::MORE"}},
      {"constant removed", "  EMPTY = []\n", "", {"const:Mime::EMPTY"}},
      {"constant renamed", "EMPTY = []", "NONE = []", {"const:Mime::EMPTY", "const:Mime::NONE"}},
      {"made not simple", "LIMIT = -1", "LIMIT = Integer(\"-1\")",
       {"", "const:Mime::LIMIT", "const:Mime::NAME", "const:Mime::EMPTY"}},
      // (format 9) Computed from literals by core methods: its own part
      // when the fingerprinter's evaluation computes it; not when it
      // raises (the file would not load) or calls a method of self.
      {"computed from literals", "LIMIT = -1", "LIMIT = [-1].map { |x| x * 2 }.first", {"const:Mime::LIMIT"}},
      {"computed, and failing", "LIMIT = -1", "LIMIT = -1 + \"a\"",
       {"", "const:Mime::LIMIT", "const:Mime::NAME", "const:Mime::EMPTY"}},
      // (format 9) A private_constant of simple constants assigned above
      // it is their parts'; of any other constant, module-level code.
      {"made private", "  EMPTY = []\n", "  EMPTY = []\n  private_constant :EMPTY, :LIMIT\n",
       {"const:Mime::EMPTY", "const:Mime::LIMIT"}},
      {"private_constant of a constant that is not simple", "  EMPTY = []\n",
       "  EMPTY = []\n  private_constant :EMPTY, :OBJ\n", {""}},
      {"computed by a method of self", "LIMIT = -1", "LIMIT = [-1].map { |x| twice(x) }.first",
       {"", "const:Mime::LIMIT", "const:Mime::NAME", "const:Mime::EMPTY"}},
      {"moved past other code", "  EMPTY = []\n  OBJ = Object.new\n", "  OBJ = Object.new\n  EMPTY = []\n",
       {"const:Mime::EMPTY"}},
      {"not a literal", "Object.new", "Object.new.freeze", {""}},
      {"heredoc", "    t\n", "    u\n", {""}},
      {"bound twice", "TWICE = 1", "TWICE = 3", {""}},
      {"a method naming it", "    TYPES[e]\n", "    TYPES.fetch(e)\n", {"Mime.type"}},
  };
  absl::StatusOr<std::vector<FileDefinitions>> run = FingerprintEdits("mime.rb", kConsts, edits, true);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE((*run)[0].parsed) << (*run)[0].error;
  std::vector<std::string> names;
  for (const DefinitionConst& c : (*run)[0].consts) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Mime::TYPES", "Mime::LIMIT", "Mime::NAME", "Mime::EMPTY", "TOP"}));
  const std::map<std::string, std::string> base = Prints((*run)[0]);
  for (size_t i = 0; i < edits.size(); i++) {
    SCOPED_TRACE(edits[i].name);
    ASSERT_TRUE((*run)[i + 1].parsed) << (*run)[i + 1].error;
    std::vector<std::string> changed = ChangedPrints(base, (*run)[i + 1]);  // changed, added or gone
    EXPECT_EQ(std::set<std::string>(changed.begin(), changed.end()),
              std::set<std::string>(edits[i].changed.begin(), edits[i].changed.end()));
  }
}

// Format 9: a private_constant folded into its constants' parts keeps its
// place among the body's other statements: moved above load-time code
// that reads the constant by its scoped name (which then fails: "private
// constant M::A referenced"), the constant's part changes, so the tests
// that named it, every loader here, are selected.
TEST(RubyFingerprint, AFoldedPrivateConstantKeepsItsPlace) {
  const std::string base =
      "module M\n"
      "  A = [1].freeze\n"
      "  B = M::A.dup\n"
      "  private_constant :A\n"
      "end\n";
  const std::vector<RubyEdit> edits = {
      {"moved above the code that reads it", "  B = M::A.dup\n  private_constant :A\n",
       "  private_constant :A\n  B = M::A.dup\n", {"const:M::A"}},
      {"a blank line added", "  private_constant :A\n", "\n  private_constant :A\n", {}},
      {"removed", "  private_constant :A\n", "", {"const:M::A"}},
  };
  absl::StatusOr<std::vector<std::vector<std::string>>> changes = ChangesOfEdits("m.rb", base, edits, true);
  ASSERT_TRUE(changes.ok()) << changes.status();
  for (size_t i = 0; i < edits.size(); i++) {
    SCOPED_TRACE(edits[i].name);
    EXPECT_EQ(std::set<std::string>((*changes)[i].begin(), (*changes)[i].end()),
              std::set<std::string>(edits[i].changed.begin(), edits[i].changed.end()));
  }
}

// Issue 24: a body is everything between a def's signature and its final
// `end`, whatever its tokens; the body node's span left some of them (a
// leading `(`, the `begin`/`end` of a wrapped body, a one-line def's `;`,
// an empty body's marker) in the module. Edits of kShop's bodies, and of
// what is not a body.
const char kShop[] =
    "# frozen_string_literal: true\n"
    "class Shop\n"
    "  TAX = 2\n"
    "\n"
    "  def total(items, rate = 1)\n"
    "    sum = items.sum\n"
    "    sum * rate\n"
    "  end\n"
    "\n"
    "  def name\n"
    "    \"shop\"\n"
    "  end\n"
    "\n"
    "  def count(items)\n"
    "    items.size\n"
    "  end\n"
    "\n"
    "  def noop\n"
    "  end\n"
    "\n"
    "  private\n"
    "\n"
    "  def double(a) = a + 1\n"
    "\n"
    "  def one; 1; end\n"
    "\n"
    "  def self.build(n)\n"
    "    new\n"
    "  end\n"
    "\n"
    "  class << self\n"
    "    def origin\n"
    "      0\n"
    "    end\n"
    "  end\n"
    "end\n";

// kShop with `from` (which must occur once) replaced by `to`.
struct ShopEdit {
  std::string name, from, to;
  std::string unit;  // the unit edited; "" = not a body: the module changes
  bool sig = false;  // its parameters too (format 10: its `sig` part, not the module)
};

// `text` (at `path`) and each of `edits` fingerprinted: the base has
// the units `names`, the first on lines first..last; an edit whose `unit`
// is "" changes the module's fingerprint, any other the fingerprint of
// that unit only (the module's and every other unit's stay).
void ExpectEachEditChangesItsUnitOnly(const std::string& path, const char* text, const std::vector<ShopEdit>& edits,
                                      const std::vector<std::string>& names, uint32_t first, uint32_t last) {
  absl::StatusOr<std::vector<FileDefinitions>> run = FingerprintEdits(path, text, edits, true);
  ASSERT_TRUE(run.ok()) << run.status();
  const FileDefinitions& base = (*run)[0];
  ASSERT_TRUE(base.parsed) << base.error;
  std::vector<std::string> got;
  for (const DefinitionUnit& u : base.units) got.push_back(u.name);
  ASSERT_EQ(got, names);
  EXPECT_EQ(base.units[0].first_line, first);
  EXPECT_EQ(base.units[0].last_line, last);
  for (size_t i = 0; i < edits.size(); i++) {
    SCOPED_TRACE(edits[i].name);
    const FileDefinitions& now = (*run)[i + 1];
    ASSERT_TRUE(now.parsed) << now.error;
    if (edits[i].unit.empty()) {
      EXPECT_NE(Hex(now.module), Hex(base.module));
      continue;
    }
    EXPECT_EQ(Hex(now.module), Hex(base.module));
    ASSERT_EQ(now.units.size(), base.units.size());
    ASSERT_EQ(now.sigs.size(), base.sigs.size());
    for (size_t u = 0; u < base.sigs.size(); u++) {
      ASSERT_EQ(now.sigs[u].name, base.sigs[u].name);
      EXPECT_EQ(Hex(now.sigs[u].hash) == Hex(base.sigs[u].hash), !(edits[i].sig && base.sigs[u].name == edits[i].unit))
          << "the parameters of " << base.sigs[u].name;
    }
    if (edits[i].sig) {
      EXPECT_NE(base.Sig(edits[i].unit), nullptr) << "the edited unit has a sig part";
    }
    for (size_t u = 0; u < base.units.size(); u++) {
      ASSERT_EQ(now.units[u].name, base.units[u].name);
      if (base.units[u].name == edits[i].unit) {
        EXPECT_NE(Hex(now.units[u].hash), Hex(base.units[u].hash)) << "the edited unit";
      } else {
        // Every other unit keeps its text, moved down or not; a moved one
        // changes only its place (AMoveChangesOnlyThePlace).
        EXPECT_EQ(Hex(now.units[u].hash), Hex(base.units[u].hash)) << base.units[u].name;
        EXPECT_EQ(Hex(now.units[u].place) == Hex(base.units[u].place),
                  now.units[u].first_line == base.units[u].first_line)
            << base.units[u].name;
      }
    }
  }
}

TEST(RubyFingerprint, AnyBodyEditChangesItsUnitOnlyAndTheRestTheModule) {
  const std::vector<ShopEdit> edits = {
      {"parentheses", "    sum * rate\n", "    (sum * rate)\n", "Shop#total"},
      {"begin/rescue around the body", "    sum = items.sum\n    sum * rate\n",
       "    begin\n      sum = items.sum\n      sum * rate\n    rescue StandardError\n      0\n    end\n",
       "Shop#total"},
      {"def-level rescue", "    sum * rate\n  end\n", "    sum * rate\n  rescue ArgumentError\n    0\n  end\n",
       "Shop#total"},
      {"def-level ensure", "    sum * rate\n  end\n", "    sum * rate\n  ensure\n    @done = true\n  end\n",
       "Shop#total"},
      {"def-level rescue/else/ensure", "    sum * rate\n  end\n",
       "    sum * rate\n  rescue ArgumentError => e\n    e\n  else\n    1\n  ensure\n    2\n  end\n", "Shop#total"},
      {"do block", "    items.size\n", "    items.each do |x|\n      x\n    end\n", "Shop#count"},
      {"brace block", "    items.size\n", "    items.map { |x| x * 2 }\n", "Shop#count"},
      {"heredoc", "    \"shop\"\n", "    <<~NAME\n      shop\n    NAME\n", "Shop#name"},
      {"heredoc argument last", "    \"shop\"\n", "    format(<<~NAME, 1)\n      shop %d\n    NAME\n", "Shop#name"},
      {"case/when", "    items.size\n", "    case items.size\n    when 0 then :none\n    else :some\n    end\n",
       "Shop#count"},
      {"if modifier", "    sum * rate\n", "    return 0 if items.empty?\n    sum * rate\n", "Shop#total"},
      {"unless modifier", "    sum * rate\n", "    sum * rate unless rate.zero?\n", "Shop#total"},
      {"while", "    items.size\n", "    n = 0\n    while n < items.size\n      n += 1\n    end\n    n\n",
       "Shop#count"},
      {"__method__ interpolated", "    \"shop\"\n", "    \"#{__method__} shop\"\n", "Shop#name"},
      {"first statement of an empty body", "  def noop\n  end\n", "  def noop\n    (nil)\n  end\n", "Shop#noop"},
      {"def self. body", "    new\n", "    begin\n      (new)\n    rescue\n      nil\n    end\n", "Shop.build"},
      {"class << self body", "      0\n", "      begin\n        (0)\n      ensure\n        1\n      end\n",
       "Shop.origin"},
      {"endless def expression", "def double(a) = a + 1", "def double(a) = a + 2", "Shop#double"},
      {"endless def parentheses", "def double(a) = a + 1", "def double(a) = (a + 1)", "Shop#double"},
      {"one-line def", "def one; 1; end", "def one; 2; end", "Shop#one"},
      {"one-line def parentheses", "def one; 1; end", "def one; (1); end", "Shop#one"},
      {"parameter added", "def total(items, rate = 1)", "def total(items, rate = 1, extra = nil)", "Shop#total", true},
      {"default value", "def total(items, rate = 1)", "def total(items, rate = 2)", "Shop#total", true},
      {"keyword parameter added", "def total(items, rate = 1)", "def total(items, rate = 1, max: 100)", "Shop#total",
       true},
      {"endless def parameter", "def double(a) =", "def double(a, b = 0) =", "Shop#double", true},
      {"renamed", "  def name\n", "  def title\n", ""},
      {"method added", "  private\n", "  def added\n    1\n  end\n\n  private\n", ""},
      {"code between two methods", "  end\n\n  def count", "  end\n  register :total\n\n  def count", ""},
      {"private call", "  private\n", "  protected\n", ""},
      {"private removed", "  private\n", "\n", ""},
      {"constant made not simple", "TAX = 2", "TAX = rate", ""},
      {"one-line def becomes endless", "def one; 1; end", "def one = 1", ""},
  };
  ExpectEachEditChangesItsUnitOnly("shop.rb", kShop, edits,
                                   {"Shop#total", "Shop#name", "Shop#count", "Shop#noop", "Shop#double", "Shop#one",
                                    "Shop.build", "Shop.origin"},
                                   5, 8);
}

// Issue 24: a def that is a call's argument (`private def x`; the call
// gets the method's name) is a unit like a plain def, named the same; until
// then it was module-level code (a body edit selected every test that
// loaded the file). The call itself is module-level code.
const char kCalls[] =
    "class Acct\n"
    "  private def fee(n)\n"
    "    n * 2\n"
    "  end\n"
    "\n"
    "  protected def rate = 3\n"
    "\n"
    "  public def open; true; end\n"
    "\n"
    "  private_class_method def self.make(id)\n"
    "    new\n"
    "  end\n"
    "\n"
    "  memoize def total(items)\n"
    "    items.sum\n"
    "  end\n"
    "\n"
    "  private memoize def cached\n"
    "    1\n"
    "  end\n"
    "end\n"
    "\n"
    "module Util\n"
    "  module_function def clamp(x)\n"
    "    x\n"
    "  end\n"
    "end\n";

TEST(RubyFingerprint, ADefPassedToACallIsAUnitNamedAsAPlainDef) {
  const std::vector<ShopEdit> edits = {
      {"private def body", "    n * 2\n", "    n * 3\n", "Acct#fee"},
      {"protected endless def", "def rate = 3", "def rate = 4", "Acct#rate"},
      {"public one-line def", "def open; true; end", "def open; false; end", "Acct#open"},
      {"private_class_method def self.", "    new\n", "    allocate\n", "Acct.make"},
      {"memoize def", "    items.sum\n", "    items.sum + 1\n", "Acct#total"},
      {"nested calls", "    1\n", "    2\n", "Acct#cached"},
      {"module_function def", "    x\n", "    x.clamp(0, 1)\n", "Util#clamp"},
      {"the call", "  private def fee", "  protected def fee", ""},
      {"the call removed", "  memoize def total", "  def total", ""},
      {"a parameter", "def fee(n)", "def fee(n, m = 1)", "Acct#fee", true},
  };
  ExpectEachEditChangesItsUnitOnly("acct.rb", kCalls, edits,
                                   {"Acct#fee", "Acct#rate", "Acct#open", "Acct.make", "Acct#total", "Acct#cached",
                                    "Util#clamp"},
                                   2, 4);
}

// Issue 24, item 1: a def in a body of a statement that runs where it
// stands (if/elsif/else, unless, case/when, begin/rescue/else/ensure, a
// call's block) is a unit: its body runs only when the method is called.
// The statement around it is module-level code. A block assigned to a
// constant names its methods under the constant.
const char kBranches[] =
    "module Esc\n"
    "  if defined?(CGI)\n"
    "    def self.html(s)\n"
    "      CGI.escapeHTML(s)\n"
    "    end\n"
    "  elsif defined?(ERB)\n"
    "    def self.html(s)\n"
    "      ERB::Util.h(s)\n"
    "    end\n"
    "  else\n"
    "    def self.html(s)\n"
    "      s.gsub(\"<\", \"&lt;\")\n"
    "    end\n"
    "  end\n"
    "\n"
    "  unless method_defined?(:wide)\n"
    "    def wide\n"
    "      1\n"
    "    end\n"
    "  end\n"
    "\n"
    "  begin\n"
    "    require \"zlib\"\n"
    "    def crc(s) = Zlib.crc32(s)\n"
    "  rescue LoadError\n"
    "    def crc(s) = 0\n"
    "  end\n"
    "\n"
    "  case RUBY_ENGINE\n"
    "  when \"ruby\"\n"
    "    def engine; :mri; end\n"
    "  else\n"
    "    def engine; :other; end\n"
    "  end\n"
    "\n"
    "  Point = Struct.new(:x, :y) do\n"
    "    def norm\n"
    "      x.abs + y.abs\n"
    "    end\n"
    "  end\n"
    "\n"
    "  class_eval do\n"
    "    private def hidden\n"
    "      2\n"
    "    end\n"
    "  end\n"
    "end\n";

TEST(RubyFingerprint, ADefInABranchOrABlockIsAUnit) {
  const std::vector<ShopEdit> edits = {
      {"if body", "      CGI.escapeHTML(s)\n", "      CGI.escapeHTML(s.to_s)\n", "Esc.html"},
      {"elsif body", "ERB::Util.h(s)", "ERB::Util.html_escape(s)", "Esc.html#2"},
      {"else body", "s.gsub(\"<\", \"&lt;\")", "s.gsub(\">\", \"&gt;\")", "Esc.html#3"},
      {"unless body", "      1\n", "      (1)\n", "Esc#wide"},
      {"begin body", "Zlib.crc32(s)", "Zlib.crc32(s.b)", "Esc#crc"},
      {"rescue body", "def crc(s) = 0", "def crc(s) = -1", "Esc#crc#2"},
      {"when body", ":mri", ":cruby", "Esc#engine"},
      {"case else body", ":other", ":jruby", "Esc#engine#2"},
      {"Struct block", "x.abs + y.abs", "(x.abs + y.abs)", "Esc::Point#norm"},
      {"a def passed to a call in a block", "      2\n", "      3\n", "Esc#hidden"},
      {"the condition", "if defined?(CGI)", "if defined?(::CGI)", ""},
      {"the rescued class", "rescue LoadError", "rescue StandardError", ""},
      {"the block's call", "Struct.new(:x, :y)", "Struct.new(:x, :y, :z)", ""},
      {"a parameter", "def norm\n", "def norm(k = 1)\n", "Esc::Point#norm", true},
      {"code beside the def", "    require \"zlib\"\n", "    require \"zlib/x\"\n", ""},
  };
  ExpectEachEditChangesItsUnitOnly("esc.rb", kBranches, edits,
                                   {"Esc.html", "Esc.html#2", "Esc.html#3", "Esc#wide", "Esc#crc", "Esc#crc#2",
                                    "Esc#engine", "Esc#engine#2", "Esc::Point#norm", "Esc#hidden"},
                                   3, 5);
}

// Issue 24, the move rule: a unit's hash is its text, its place (the `at`
// line) its text and position. A pure move keeps every hash and changes
// the places; lines added inside one method change its hash and the places
// of the methods below it only; `__LINE__` keeps the position in the hash.
TEST(RubyFingerprint, AMoveChangesOnlyThePlace) {
  auto edit = [](std::string s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  const std::string moved = edit(kShop, "class Shop\n", "\n\nclass Shop\n");
  const std::string grown = edit(kShop, "    items.size\n", "    n = items.size\n    n\n");
  const std::string lines = "class L\n  def here\n    __LINE__\n  end\n\n  def there\n    1\n  end\nend\n";
  absl::StatusOr<std::vector<FileDefinitions>> run = Fingerprinter::ForIntegrations(kIntegrations).Run(
      {"shop.rb", "shop.rb", "shop.rb", "l.rb", "l.rb"}, {kShop, moved, grown, lines, "# moved\n" + lines});
  ASSERT_TRUE(run.ok()) << run.status();
  for (const FileDefinitions& d : *run) ASSERT_TRUE(d.parsed) << d.error;
  const FileDefinitions& base = (*run)[0];
  auto same = [](XXH128_hash_t a, XXH128_hash_t b) { return a.low64 == b.low64 && a.high64 == b.high64; };
  for (const DefinitionUnit& u : base.units) {
    EXPECT_FALSE(same(u.place, u.hash)) << u.name << ": an `at` line of its own";
  }
  const FileDefinitions& m = (*run)[1];
  EXPECT_TRUE(same(m.module, base.module));
  ASSERT_EQ(m.units.size(), base.units.size());
  for (size_t i = 0; i < base.units.size(); i++) {
    EXPECT_EQ(m.units[i].first_line, base.units[i].first_line + 2);
    EXPECT_TRUE(same(m.units[i].hash, base.units[i].hash)) << base.units[i].name << ": moved, same text";
    EXPECT_FALSE(same(m.units[i].place, base.units[i].place)) << base.units[i].name << ": moved";
  }
  const FileDefinitions& g = (*run)[2];
  EXPECT_TRUE(same(g.module, base.module));
  ASSERT_EQ(g.units.size(), base.units.size());
  bool below = false;
  for (size_t i = 0; i < base.units.size(); i++) {
    SCOPED_TRACE(base.units[i].name);
    const bool edited = base.units[i].name == "Shop#count";
    EXPECT_EQ(same(g.units[i].hash, base.units[i].hash), !edited);
    EXPECT_EQ(same(g.units[i].place, base.units[i].place), !edited && !below);
    below = below || edited;
  }
  EXPECT_TRUE(below);
  const FileDefinitions &l = (*run)[3], &l2 = (*run)[4];
  ASSERT_EQ(l.units.size(), 2u);
  ASSERT_EQ(l2.units.size(), 2u);
  EXPECT_FALSE(same(l.units[0].hash, l2.units[0].hash)) << "__LINE__: its text computes its line";
  EXPECT_TRUE(same(l.units[1].hash, l2.units[1].hash));
  EXPECT_FALSE(same(l.units[1].place, l2.units[1].place));
}

TEST(RubyFingerprint, ADefinitionAddedRemovedOrRenamedIsModuleLevel) {
  const std::string base = "class A\n  def x\n    1\n  end\nend\n";
  const std::vector<std::string> others = {
      "class A\n  def x\n    1\n  end\n  def method_missing(n)\n    2\n  end\nend\n",
      "class A\n  def y\n    1\n  end\nend\n",
      "class A\nend\n",
      "class B\n  def x\n    1\n  end\nend\n",
  };
  std::vector<std::string> paths(others.size() + 1, "a.rb"), contents = {base};
  contents.insert(contents.end(), others.begin(), others.end());
  absl::StatusOr<std::vector<FileDefinitions>> run = Fingerprinter::ForIntegrations(kIntegrations).Run(paths, contents);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t i = 1; i < run->size(); i++) {
    ASSERT_TRUE((*run)[i].parsed);
    EXPECT_NE(Hex((*run)[i].module), Hex((*run)[0].module)) << others[i - 1];
  }
}

// Format 10: a unit's parameters are its `sig` part (ste selects for it
// the tests that ran the unit or whose code holds its method's name); an
// operator's stay module-level code (no name record could name it).
TEST(RubyFingerprint, AnOperatorsParametersAreModuleLevel) {
  const std::string base =
      "class V\n"
      "  def ==(other)\n"
      "    true\n"
      "  end\n"
      "\n"
      "  def size=(n)\n"
      "    @n = n\n"
      "  end\n"
      "end\n";
  const std::vector<RubyEdit> edits = {
      {"an operator's parameter renamed", "def ==(other)", "def ==(o)", {"", "V#=="}},
      {"a setter's parameter renamed", "def size=(n)\n    @n = n", "def size=(k)\n    @n = k", {"V#size=", "sig:V#size="}},
  };
  absl::StatusOr<std::vector<std::vector<std::string>>> changes = ChangesOfEdits("v.rb", base, edits, true);
  ASSERT_TRUE(changes.ok()) << changes.status();
  for (size_t i = 0; i < edits.size(); i++) {
    SCOPED_TRACE(edits[i].name);
    EXPECT_EQ((*changes)[i], edits[i].changed);
  }
}

TEST(RubyMethodName, TheNameATrackerRecordGives) {
  EXPECT_EQ(RubyMethodName("Geo::Polygon#area"), "area");
  EXPECT_EQ(RubyMethodName("Geo::Polygon.create"), "create");
  EXPECT_EQ(RubyMethodName("helper"), "helper");
  EXPECT_EQ(RubyMethodName("self.helper"), "helper");
  EXPECT_EQ(RubyMethodName("Esc.html#3"), "html");
  EXPECT_EQ(RubyMethodName("Shop#empty?"), "empty");
  EXPECT_EQ(RubyMethodName("Shop#size=#2"), "size");
  EXPECT_EQ(RubyMethodName("Vec#%2F"), "");
  EXPECT_EQ(RubyMethodName("Vec#=="), "");
  EXPECT_EQ(RubyMethodName("Vec#[]"), "");
}

TEST(RubyFingerprint, AParseErrorOrUnitsSharingALineAreNotDefinitions) {
  absl::StatusOr<std::vector<FileDefinitions>> run = Fingerprinter::ForIntegrations(kIntegrations).Run(
      {"bad.rb", "line.rb", "dyn.rb"},
      {"def x(\n", "class A; def x; 1; end; def y; 2; end; end\ndef z\n  3\nend\n",
       "class self::A\n  def x\n    1\n  end\nend\n"});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE((*run)[0].parsed);
  EXPECT_NE((*run)[0].error.find("SyntaxError"), std::string::npos) << (*run)[0].error;
  ASSERT_TRUE((*run)[1].parsed) << (*run)[1].error;
  ASSERT_EQ((*run)[1].units.size(), 1u);
  EXPECT_EQ((*run)[1].units[0].name, "z");
  ASSERT_TRUE((*run)[2].parsed) << (*run)[2].error;
  EXPECT_TRUE((*run)[2].units.empty()) << "a class not named by a constant path has no units";
}

// A forking runner: the parent loads lib/a.rb in the root scope and ends
// its account; a child reads lib/a.rb as data in its file's scope (the
// interceptor does not record that read again: the parent did) and runs
// A.x. The child's test keeps the file's content (file level); the
// other child's test depends on its definitions only.
// The protocol's answer for one file, written and read back: every part.
TEST(DefinitionCache, AnAnswerReadsBackAsWritten) {
  const std::string py =
      "\"\"\"Doc.\"\"\"\nTAX = 2\n\n\ndef area(w, h=1):\n    \"\"\"Area.\"\"\"\n    return w * h\n\n\n"
      "class C:\n    def m(self):\n        return TAX\n";
  absl::StatusOr<std::vector<FileDefinitions>> run =
      Fingerprinter::ForIntegrations(kIntegrations).Run({"a.py", "b.rb", "bad.py"}, {py, kRuby, "def (\n"});
  ASSERT_TRUE(run.ok()) << run.status();
  for (const FileDefinitions& d : *run) {
    std::optional<FileDefinitions> back = ParseFingerprintAnswer(FingerprintAnswer(d));
    ASSERT_TRUE(back.has_value()) << FingerprintAnswer(d);
    EXPECT_EQ(FingerprintAnswer(*back), FingerprintAnswer(d));
    EXPECT_EQ(back->parsed, d.parsed);
    EXPECT_EQ(Prints(*back), Prints(d));
    EXPECT_EQ(back->has_names, d.has_names);
  }
  EXPECT_TRUE((*run)[0].has_names && !(*run)[0].sigs.empty() && !(*run)[0].docs.empty() && !(*run)[0].consts.empty());
  EXPECT_TRUE((*run)[1].has_names) << "the Ruby script's names (format 8)";
  EXPECT_FALSE(ParseFingerprintAnswer("module 00\nend\n").has_value());
  EXPECT_FALSE(ParseFingerprintAnswer("").has_value());
}

// A record's few files at a time: one process per language, kept between
// calls; one that stops is started again, and what it did not answer is
// not parsed (file level).
TEST(DefinitionCache, KeepsOneProcessPerLanguageBetweenCalls) {
  const std::string dir = TempDir();
  const std::string log = dir + "/runs";
  auto counted = [&](const std::string& tag, const std::string& command) {
    const std::string wrapper = dir + "/" + tag + ".sh";
    Write(wrapper, "echo " + tag + " >> " + log + "\nexec " + command + "\n");
    return std::vector<std::string>{"/bin/sh", wrapper};
  };
  DefinitionCache cache(Fingerprinter({
      {".py", counted("py", "python3 -I -S -B " + kIntegrations + "/python/ste_fingerprint.py")},
      {".rb", counted("rb", "ruby --disable=all " + kIntegrations + "/ruby/ste_fingerprint.rb")},
  }));
  for (int i = 0; i < 6; i++) {
    const std::string file = absl::StrCat(dir, "/f", i, i % 2 ? ".rb" : ".py");
    Write(file, i % 2 ? absl::StrCat("def g", i, "; end\n") : absl::StrCat("def g", i, "():\n    return 1\n"));
    std::shared_ptr<const FileDefinitions> d = cache.Get(file);
    ASSERT_TRUE(d->parsed) << i << ": " << d->error;
    EXPECT_EQ(d->units.at(0).name, absl::StrCat("g", i));
  }
  std::string runs = Read(log);
  EXPECT_TRUE(runs == "py\nrb\n") << runs;
  EXPECT_EQ(cache.counts().fingerprinted, 6u);

  // A fingerprinter that answers one file, then exits.
  const std::string once = dir + "/once.sh";
  Write(once, "echo once >> " + log + "\nread n\nhead -c \"$n\" > /dev/null\necho 'file 0'\necho 'module " +
                  std::string(32, '0') + "'\necho end\n");
  DefinitionCache stopping(Fingerprinter({{".py", {"/bin/sh", once}}}));
  Write(log, "");
  std::vector<bool> parsed;
  for (int i = 0; i < 3; i++) {
    const std::string file = absl::StrCat(dir, "/s", i, ".py");
    Write(file, "x = 1\n");
    std::shared_ptr<const FileDefinitions> d = stopping.Get(file);
    parsed.push_back(d->parsed);
    if (!d->parsed) {
      EXPECT_NE(d->error.find("stopped before it answered"), std::string::npos) << d->error;
    }
  }
  EXPECT_EQ(parsed, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Read(log), "once\nonce\n");
}

// From one record to the next, by content (definitions.h, DefinitionCache).
TEST(DefinitionCache, KeepsFingerprintsOnDiskByContent) {
  const std::string dir = TempDir();
  const std::string disk = dir + "/cache/fingerprints";
  const std::string file = dir + "/geo.py";
  Write(file, "def area(w, h):\n    return w * h\n");
  auto fingerprinter = [&] { return Fingerprinter::ForIntegrations(kIntegrations); };
  std::string first;
  {
    DefinitionCache cache(fingerprinter(), disk);
    std::shared_ptr<const FileDefinitions> d = cache.Get(file);
    ASSERT_TRUE(d->parsed) << d->error;
    first = FingerprintAnswer(*d);
    EXPECT_EQ(cache.counts().fingerprinted, 1u);
    EXPECT_EQ(cache.counts().from_disk, 0u);
  }
  std::vector<std::string> entries;
  auto list = [&] {
    entries.clear();
    DIR* d = opendir(disk.c_str());
    if (d == nullptr) return;
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') entries.push_back(disk + "/" + e->d_name);
    }
    closedir(d);
  };
  list();
  ASSERT_EQ(entries.size(), 1u);
  {
    DefinitionCache cache(fingerprinter(), disk);
    std::shared_ptr<const FileDefinitions> d = cache.Get(file);
    EXPECT_EQ(FingerprintAnswer(*d), first);
    EXPECT_EQ(cache.counts().fingerprinted, 0u) << "the same bytes: from the disk";
    EXPECT_EQ(cache.counts().from_disk, 1u);
  }
  // Other bytes, a torn entry, another fingerprinter: fingerprinted.
  Write(file, "def area(w, h):\n    return h * w\n");
  {
    DefinitionCache cache(fingerprinter(), disk);
    EXPECT_TRUE(cache.Get(file)->parsed);
    EXPECT_EQ(cache.counts().fingerprinted, 1u);
  }
  list();
  ASSERT_EQ(entries.size(), 2u);
  for (const std::string& e : entries) Write(e, "module 12");
  {
    DefinitionCache cache(fingerprinter(), disk);
    EXPECT_TRUE(cache.Get(file)->parsed);
    EXPECT_EQ(cache.counts().fingerprinted, 1u) << "an entry that does not parse is a miss";
  }
  {
    const std::string script = dir + "/ste_fingerprint.py";
    Write(script, Read(kIntegrations + "/python/ste_fingerprint.py") + "\n# another version\n");
    DefinitionCache cache(Fingerprinter({{".py", {"python3", "-I", "-S", "-B", script}}}), disk);
    EXPECT_TRUE(cache.Get(file)->parsed);
    EXPECT_EQ(cache.counts().fingerprinted, 1u) << "another script: another identity";
  }
  {
    // A helper the script loads (ste_consts.rb) changed, the script not:
    // another identity too.
    const std::string rb = dir + "/geo.rb", ruby = dir + "/ruby";
    Write(rb, "module Geo\n  def self.area(w, h) = w * h\nend\n");
    ASSERT_EQ(mkdir(ruby.c_str(), 0755), 0);
    for (const char* f : {"ste_fingerprint.rb", "ste_consts.rb"}) {
      Write(ruby + "/" + f, Read(kIntegrations + "/ruby/" + f));
    }
    {
      DefinitionCache cache(Fingerprinter({{".rb", {"ruby", "--disable=all", ruby + "/ste_fingerprint.rb"}}}), disk);
      ASSERT_TRUE(cache.Get(rb)->parsed) << cache.Get(rb)->error;
      EXPECT_EQ(cache.counts().fingerprinted, 1u);
    }
    {
      DefinitionCache cache(Fingerprinter({{".rb", {"ruby", "--disable=all", ruby + "/ste_fingerprint.rb"}}}), disk);
      EXPECT_TRUE(cache.Get(rb)->parsed);
      EXPECT_EQ(cache.counts().from_disk, 1u) << "the same script and helper: from the disk";
    }
    Write(ruby + "/ste_consts.rb", Read(ruby + "/ste_consts.rb") + "\n# another rule\n");
    {
      DefinitionCache cache(Fingerprinter({{".rb", {"ruby", "--disable=all", ruby + "/ste_fingerprint.rb"}}}), disk);
      EXPECT_TRUE(cache.Get(rb)->parsed);
      EXPECT_EQ(cache.counts().fingerprinted, 1u) << "another helper: another identity";
      EXPECT_EQ(cache.counts().from_disk, 0u);
    }
  }
  // Pruned when unused for long (a use touches the entry).
  list();
  const size_t kept = entries.size();
  ASSERT_GE(kept, 3u);
  struct timespec old[2] = {{time(nullptr) - 40 * 86400, 0}, {time(nullptr) - 40 * 86400, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, entries[0].c_str(), old, 0), 0);
  DefinitionCache pruner(fingerprinter(), disk);
  EXPECT_EQ(pruner.PruneDisk(30), 1u);
  list();
  EXPECT_EQ(entries.size(), kept - 1);
  // A directory that cannot be made: no disk, the same answers.
  Write(dir + "/file", "");
  DefinitionCache nowhere(fingerprinter(), dir + "/file/fingerprints");
  EXPECT_TRUE(nowhere.Get(file)->parsed);
}

TEST(ResolveDefinitions, AFileReadAsDataInAForkedChildIsAContentDependencyThere) {
  const std::string root = TempDir();
  ASSERT_EQ(system(("mkdir -p " + root + "/lib").c_str()), 0);
  Write(root + "/lib/a.rb", "module A\n  def self.x\n    1\n  end\nend\n");
  const std::string file = root + "/lib/a.rb";
  auto log = [](std::vector<std::pair<std::string, std::string>> records) {
    ProcessLog l;
    for (auto& [scope, path] : records) {
      l.records.push_back(LogRecord{scope, path == "CONTENT" ? RecordKind::kContent : RecordKind::kAbsent,
                                    STE_OP_OPEN, path, 0});
    }
    return l;
  };
  // (ste_defs.rb's v2 marker: it says when code read line numbers; none
  // did. Its refs marker: it says which constant names code named, here
  // `Base` as the parent loaded the file and `Ext` in runs.rb; old.rb's
  // process does not say, so any name.)
  std::vector<ProcessLog> logs = {
      log({{"//r", "/\x01ste-defs-begin:1"}, {"//r", "/\x01ste-defs-v2:1"}, {"//r", "/\x01ste-refs:1"},
           {"//r", "/\x01ste-ref:Base"}, {"//r", "/\x01ste-defs-end:1"}}),
      log({{"//r", "/\x01ste-defs-begin:2"}, {"//r", "/\x01ste-defs-v2:2"}, {"//r", "/\x01ste-refs:2"},
           {"//r/t/reads.rb", file + "/\x01ste-code:2"}, {"//r/t/reads.rb", file + "/\x01ste-data"},
           {"//r/t/reads.rb", "/\x01ste-defs-end:2"}}),
      log({{"//r", "/\x01ste-defs-begin:3"}, {"//r", "/\x01ste-defs-v2:3"}, {"//r", "/\x01ste-refs:3"},
           {"//r/t/runs.rb", file + "/\x01ste-code:2"}, {"//r/t/runs.rb", "/\x01ste-ref:Ext"},
           {"//r/t/runs.rb", "/\x01ste-defs-end:3"}}),
      log({{"//r", "/\x01ste-defs-begin:4"}, {"//r", "/\x01ste-defs-v2:4"},
           {"//r/t/old.rb", file + "/\x01ste-code:2"}, {"//r/t/old.rb", "/\x01ste-defs-end:4"}}),
  };
  logs[0].records.insert(logs[0].records.begin() + 2,
                         LogRecord{"//r", RecordKind::kContent, STE_OP_OPEN, file, 0});
  logs[0].records.insert(logs[0].records.begin() + 3,
                         LogRecord{"//r", RecordKind::kAbsent, STE_OP_OPEN, file + "/\x01ste-code:0", 0});
  DefinitionCache cache(Fingerprinter::ForIntegrations(kIntegrations));
  PathPolicy policy;
  policy.root = root;
  policy.log_dir = "/nonexistent-ste/logs";
  policy.definitions = &cache;
  TestDependencies deps = ReduceLogs(logs, absl::OkStatus(), policy);
  std::map<std::string, std::set<std::string>> by_scope;
  for (const ScopeDependencies& s : deps.scopes) {
    for (const DepKey& k : s.deps) by_scope[s.scope].insert(k.path);
  }
  const std::string module = DefinitionViewPath("lib/a.rb", ""), x = DefinitionViewPath("lib/a.rb", "A.x");
  // (A tracker that makes ref records: the file's names too, as a listing
  // that selects nothing; without them, any name, and the names.)
  const std::string names = DefinitionPartPath("lib/a.rb", DefinitionPart::kNames, "");
  EXPECT_EQ(by_scope["//r"], (std::set<std::string>{module, names, NameRefPath("Base")}))
      << "the parent's content became the module's";
  EXPECT_EQ(by_scope["//r/t/reads.rb"], (std::set<std::string>{"lib/a.rb", module, x, names}));
  EXPECT_EQ(by_scope["//r/t/runs.rb"], (std::set<std::string>{module, x, names, NameRefPath("Ext")}));
  EXPECT_EQ(by_scope["//r/t/old.rb"], (std::set<std::string>{module, x, NameRefPath("*"), names}));
  for (const ScopeDependencies& s : deps.scopes) {
    for (const DepKey& k : s.deps) {
      if (k.path == names) {
        EXPECT_EQ(k.kind, s.scope == "//r/t/old.rb" ? DepKind::kContent : DepKind::kListing) << s.scope;
      }
    }
  }
}

}  // namespace
}  // namespace ste
