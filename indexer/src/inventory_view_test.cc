// Copyright: the ste authors. Views (inventory.h, "Views"): parsing view
// paths, each view's value on real directories, and views in a Scan. The
// cross-check of ste-entry-points against CPython's own parsers is in
// inventory_view_crosscheck_test.cc.
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inventory_test_util.h"
#include "ste/inventory.h"

namespace ste {
namespace {

using test::TempTree;
using ::testing::HasSubstr;

const std::string kMark(1, kViewMark);

std::string V(const std::string& dir, const std::string& view) {
  return dir == "." ? kMark + view : dir + "/" + kMark + view;
}

// The value of a names view: its name, '\0', the names in byte order each
// followed by '\0' (inventory.h, "Views").
XXH128_hash_t NamesValue(const std::string& view, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string buf = view;
  buf.push_back('\0');
  for (const std::string& n : names) buf.append(n).push_back('\0');
  return XXH3_128bits(buf.data(), buf.size());
}

void AppendField(std::string_view s, std::string* out) {
  uint64_t n = s.size();
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out->append(s.data(), s.size());
}

// One contributing distribution of an entry-points view.
struct Contribution {
  std::string entry;
  char tag;  // 'P', 'H', 'O'
  std::vector<std::pair<std::string, std::string>> pairs;  // 'P'
  std::string file;                                         // 'H'
};

XXH128_hash_t EntryPointsValue(const std::string& view, std::vector<Contribution> cs) {
  std::sort(cs.begin(), cs.end(),
            [](const Contribution& a, const Contribution& b) { return a.entry < b.entry; });
  std::string buf = view;
  buf.push_back('\0');
  for (const Contribution& c : cs) {
    AppendField(c.entry, &buf);
    buf.push_back(c.tag);
    if (c.tag == 'P') {
      uint64_t n = c.pairs.size();
      for (int i = 0; i < 8; ++i) buf.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
      for (const auto& [name, value] : c.pairs) {
        AppendField(name, &buf);
        AppendField(value, &buf);
      }
    } else if (c.tag == 'H') {
      XXH128_canonical_t canonical;
      XXH128_canonicalFromHash(&canonical, XXH3_128bits(c.file.data(), c.file.size()));
      buf.append(reinterpret_cast<const char*>(canonical.digest), 16);
    }
  }
  return XXH3_128bits(buf.data(), buf.size());
}

bool Same(XXH128_hash_t a, XXH128_hash_t b) { return a.low64 == b.low64 && a.high64 == b.high64; }

// The entry of one view of `tree`.
InventoryEntry ViewOf(const TempTree& tree, const std::string& path, const GlobSet& ignore = GlobSet()) {
  absl::StatusOr<std::vector<InventoryEntry>> got =
      ComputeViews(tree.root(), {path}, ignore, nullptr);
  EXPECT_TRUE(got.ok()) << got.status();
  if (!got.ok() || got->size() != 1) return InventoryEntry{};
  EXPECT_EQ((*got)[0].path, path);
  return (*got)[0];
}

XXH128_hash_t HashOf(const TempTree& tree, const std::string& path) {
  InventoryEntry e = ViewOf(tree, path);
  EXPECT_EQ(e.type, FileType::kRegular) << path;
  return e.hash;
}

// ---- view paths ------------------------------------------------------------

TEST(ViewPath, TheMarkStartsTheLastComponent) {
  EXPECT_TRUE(IsViewPath(kMark + "ste-dists"));
  EXPECT_TRUE(IsViewPath("src/" + kMark + "ste-pth"));
  EXPECT_TRUE(IsViewPath("/usr/lib/" + kMark + "anything"));
  EXPECT_FALSE(IsViewPath("src/ste-dists"));
  EXPECT_FALSE(IsViewPath(kMark + "dir/file"));
  EXPECT_FALSE(IsViewPath("src/x" + kMark + "y"));
  EXPECT_FALSE(IsViewPath(""));
}

TEST(ViewPath, ParsesTheKnownViewsOnly) {
  std::optional<View> v = ParseView(kMark + "ste-dists");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->dir, ".");
  EXPECT_EQ(v->kind, ViewKind::kDists);
  v = ParseView("/usr/lib/python3/dist-packages/" + kMark + "ste-entry-points:pytest11");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->dir, "/usr/lib/python3/dist-packages");
  EXPECT_EQ(v->kind, ViewKind::kEntryPoints);
  EXPECT_EQ(v->arg, "pytest11");
  v = ParseView("src/" + kMark + "ste-dists:Foo.Bar");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->dir, "src");
  EXPECT_EQ(v->kind, ViewKind::kDistsNamed);
  EXPECT_EQ(v->arg, "foo_bar");
  v = ParseView("/" + kMark + "ste-pth");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->dir, "/");
  for (const std::string& unknown :
       {kMark + "ste-dist", kMark + "ste-dists:", kMark + "ste-entry-points:", kMark + "ste-pth:x",
        kMark + "", std::string("ste-dists"), std::string("src/ste-pth")}) {
    EXPECT_FALSE(ParseView(unknown)) << unknown;
    const size_t slash = unknown.rfind('/');
    EXPECT_FALSE(IsKnownViewComponent(slash == std::string::npos ? unknown : unknown.substr(slash + 1)))
        << unknown;
  }
  EXPECT_TRUE(IsKnownViewComponent(kMark + "ste-dists:x"));
  EXPECT_TRUE(IsKnownViewComponent(kMark + "ste-pth"));
  EXPECT_FALSE(IsKnownViewComponent("ste-pth"));
}

TEST(ViewPath, NormalizesDistributionNamesAsPrepared) {
  EXPECT_EQ(NormalizeDistName("Foo.Bar"), "foo_bar");
  EXPECT_EQ(NormalizeDistName("foo--bar__baz..Qux"), "foo_bar_baz_qux");
  EXPECT_EQ(NormalizeDistName("zope.interface"), "zope_interface");
  EXPECT_EQ(NormalizeDistName("-a-"), "_a_");
}

TEST(ViewPath, DescribesEachView) {
  EXPECT_EQ(DescribeView(*ParseView(kMark + "ste-pth")), "the *.pth names");
  EXPECT_EQ(DescribeView(*ParseView(kMark + "ste-dists")), "the *.dist-info and *.egg-info names");
  EXPECT_EQ(DescribeView(*ParseView(kMark + "ste-dists:Foo")), "the distributions named foo");
  EXPECT_EQ(DescribeView(*ParseView(kMark + "ste-entry-points:pytest11")),
            "entry points [pytest11] of its distributions");
  EXPECT_EQ(DescribeView(*ParseView("pyproject.toml/" + kMark + "ste-pytest-ini")),
            "its [tool.pytest] table (what pytest reads of it)");
}

// ---- ste-pth ---------------------------------------------------------------

TEST(PthView, SeesOnlyNamesEndingInPth) {
  TempTree t;
  t.Write("site/a.pth", "x\n");
  t.Write("site/mod.py", "");
  const std::string view = V("site", "ste-pth");
  EXPECT_TRUE(Same(HashOf(t, view), NamesValue("ste-pth", {"a.pth"})));
  const XXH128_hash_t before = HashOf(t, view);
  t.Write("site/NOTES.txt", "");
  t.Write("site/b.PTH", "");  // case matters: endswith(".pth")
  t.Write("site/x.pth.bak", "");
  t.MkDir("site/pkg");
  EXPECT_TRUE(Same(HashOf(t, view), before));
  t.Write("site/.hidden.pth", "");  // 3.6-3.12 read it: wider
  EXPECT_TRUE(Same(HashOf(t, view), NamesValue("ste-pth", {".hidden.pth", "a.pth"})));
  t.Remove("site/a.pth");
  EXPECT_TRUE(Same(HashOf(t, view), NamesValue("ste-pth", {".hidden.pth"})));
}

TEST(PthView, EditingAPthFileIsNotItsChange) {
  // The .pth files' contents are read by site.py, recorded as content.
  TempTree t;
  t.Write("site/a.pth", "x\n");
  const XXH128_hash_t before = HashOf(t, V("site", "ste-pth"));
  t.Write("site/a.pth", "y\n");
  EXPECT_TRUE(Same(HashOf(t, V("site", "ste-pth")), before));
}

// ---- ste-dists ---------------------------------------------------------------

TEST(DistsView, SeesDistInfoAndEggInfoNamesInAnyCase) {
  TempTree t;
  t.Write("README.md", "");
  const std::string view = V(".", "ste-dists");
  EXPECT_TRUE(Same(HashOf(t, view), NamesValue("ste-dists", {})));
  t.Write("NOTES.txt", "");
  t.MkDir("src");
  t.Write("x.dist-info.bak", "");
  t.MkDir("dist-info");
  t.MkDir("egg-info");  // only in a *.egg directory
  EXPECT_TRUE(Same(HashOf(t, view), NamesValue("ste-dists", {})));
  t.MkDir("foo-1.0.dist-info");
  t.MkDir("Bar-2.0.DIST-INFO");
  t.MkDir("baz.Egg-Info");
  t.Write("plain.egg-info", "a file counts: Lookup only looks at names\n");
  EXPECT_TRUE(Same(HashOf(t, view),
                   NamesValue("ste-dists", {"Bar-2.0.DIST-INFO", "baz.Egg-Info", "foo-1.0.dist-info",
                                            "plain.egg-info"})));
}

TEST(DistsView, AnEggDirectorysEggInfo) {
  TempTree t;
  t.MkDir("site/Foo_Bar-1.0-py3.11.egg/EGG-INFO");
  t.MkDir("site/Foo_Bar-1.0-py3.11.egg/foo_bar");
  t.MkDir("site/plain/EGG-INFO");
  EXPECT_TRUE(Same(HashOf(t, V("site/Foo_Bar-1.0-py3.11.egg", "ste-dists")),
                   NamesValue("ste-dists", {"EGG-INFO"})));
  EXPECT_TRUE(Same(HashOf(t, V("site/plain", "ste-dists")), NamesValue("ste-dists", {})));
  EXPECT_TRUE(Same(HashOf(t, V("site/Foo_Bar-1.0-py3.11.egg", "ste-dists:foo-bar")),
                   NamesValue("ste-dists:foo_bar", {"EGG-INFO"})));
  EXPECT_TRUE(Same(HashOf(t, V("site/Foo_Bar-1.0-py3.11.egg", "ste-dists:foo")),
                   NamesValue("ste-dists:foo", {})));
}

TEST(DistsView, ByNameSeesOnlyThatDistribution) {
  TempTree t;
  t.MkDir("site/Foo.Bar-1.0.dist-info");
  t.MkDir("site/foo_baz-1.0.dist-info");
  t.MkDir("site/foo-2.0.dist-info");
  t.MkDir("site/FOO_BAR.egg-info");
  const std::string view = V("site", "ste-dists:foo_bar");
  EXPECT_TRUE(Same(HashOf(t, view),
                   NamesValue("ste-dists:foo_bar", {"FOO_BAR.egg-info", "Foo.Bar-1.0.dist-info"})));
  const XXH128_hash_t before = HashOf(t, view);
  t.MkDir("site/other-1.0.dist-info");
  t.MkDir("site/foo_bar_extra-1.0.dist-info");
  EXPECT_TRUE(Same(HashOf(t, view), before));
  t.MkDir("site/foo.bar-2.0.dist-info");  // 3.8's prefix "foo.bar-" too
  EXPECT_FALSE(Same(HashOf(t, view), before));
  // A name with a byte Python might lowercase into a match always counts.
  const XXH128_hash_t with_dot = HashOf(t, view);
  t.MkDir("site/\xe2\x84\xaa" "afka-1.0.dist-info");  // KELVIN SIGN, lowercases to 'k'
  EXPECT_FALSE(Same(HashOf(t, view), with_dot));
}

TEST(DistsView, TheViewNameIsNormalizedToo) {
  TempTree t;
  t.MkDir("site/Foo.Bar-1.0.dist-info");
  EXPECT_TRUE(Same(HashOf(t, V("site", "ste-dists:Foo-Bar")),
                   NamesValue("ste-dists:foo_bar", {"Foo.Bar-1.0.dist-info"})));
}

// ---- ste-entry-points ---------------------------------------------------------

constexpr char kPlugin[] = "[pytest11]\nmyplugin = myplugin.plugin\n";
constexpr char kScripts[] = "[console_scripts]\ntool = tool.cli:main\n";

TEST(EntryPointsView, AConsoleScriptsOnlyPackageLeavesItUnchanged) {
  TempTree t;
  t.Write("site/a-1.0.dist-info/entry_points.txt", kPlugin);
  const std::string view = V("site", "ste-entry-points:pytest11");
  const XXH128_hash_t before = HashOf(t, view);
  EXPECT_TRUE(Same(before, EntryPointsValue("ste-entry-points:pytest11",
                                            {{"a-1.0.dist-info", 'P', {{"myplugin", "myplugin.plugin"}}, ""}})));
  t.Write("site/tool-2.0.dist-info/entry_points.txt", kScripts);
  t.Write("site/tool-2.0.dist-info/METADATA", "Name: tool\n");
  t.MkDir("site/nofile-1.0.dist-info");
  t.Write("site/tool.py", "");
  EXPECT_TRUE(Same(HashOf(t, view), before));
  // Reformatting what Python reads alike changes nothing.
  t.Write("site/a-1.0.dist-info/entry_points.txt",
          "# generated\n\n[console_scripts]\nx = y\n\n[pytest11]\nmyplugin   =   myplugin.plugin   \r\n");
  EXPECT_TRUE(Same(HashOf(t, view), before));
}

TEST(EntryPointsView, ANewPluginOrAChangedOneChangesIt) {
  TempTree t;
  t.Write("site/a-1.0.dist-info/entry_points.txt", kPlugin);
  const std::string view = V("site", "ste-entry-points:pytest11");
  const XXH128_hash_t one = HashOf(t, view);
  t.Write("site/b-1.0.dist-info/entry_points.txt", "[pytest11]\nother = other_plugin\n");
  const XXH128_hash_t two = HashOf(t, view);
  EXPECT_FALSE(Same(two, one));
  EXPECT_TRUE(Same(two, EntryPointsValue("ste-entry-points:pytest11",
                                         {{"a-1.0.dist-info", 'P', {{"myplugin", "myplugin.plugin"}}, ""},
                                          {"b-1.0.dist-info", 'P', {{"other", "other_plugin"}}, ""}})));
  t.Write("site/b-1.0.dist-info/entry_points.txt", "[pytest11]\nother = other_plugin:v2\n");
  EXPECT_FALSE(Same(HashOf(t, view), two));
  // Renamed (a new version): the distribution is another one.
  t.Rename("site/b-1.0.dist-info", "site/b-1.1.dist-info");
  t.Write("site/b-1.1.dist-info/entry_points.txt", "[pytest11]\nother = other_plugin\n");
  EXPECT_FALSE(Same(HashOf(t, view), two));
  // The order of a distribution's plugins is kept (registration order).
  t.Write("site/b-1.1.dist-info/entry_points.txt", "[pytest11]\nb = 2\na = 1\n");
  const XXH128_hash_t ba = HashOf(t, view);
  t.Write("site/b-1.1.dist-info/entry_points.txt", "[pytest11]\na = 1\nb = 2\n");
  EXPECT_FALSE(Same(HashOf(t, view), ba));
}

TEST(EntryPointsView, AFilePythonMayFailOnCountsWhole) {
  TempTree t;
  t.Write("site/a-1.0.dist-info/entry_points.txt", kPlugin);
  const std::string view = V("site", "ste-entry-points:pytest11");
  const XXH128_hash_t before = HashOf(t, view);
  // A line without '=' in another section: Python raises for the whole
  // distribution (EntryPoints are built as a list).
  const std::string bad = std::string(kScripts) + "oops\n";
  t.Write("site/tool-2.0.dist-info/entry_points.txt", bad);
  EXPECT_TRUE(Same(HashOf(t, view),
                   EntryPointsValue("ste-entry-points:pytest11",
                                    {{"a-1.0.dist-info", 'P', {{"myplugin", "myplugin.plugin"}}, ""},
                                     {"tool-2.0.dist-info", 'H', {}, bad}})));
  EXPECT_FALSE(Same(HashOf(t, view), before));
  // Non-ASCII, a form feed, a continuation line, "[[x]]", DEFAULT, '%':
  // each counts whole.
  for (const std::string& text :
       {std::string(kScripts) + "# caf\xc3\xa9\n", std::string("[console_scripts]\fa = b\n"),
        std::string(kScripts) + "   continued\n", std::string("[[console_scripts]]\na = b\n"),
        std::string("[DEFAULT]\na = b\n"), std::string(kScripts) + "p = 100%\n",
        std::string("a = b\n") + kScripts, std::string(kScripts) + "tool = again\n",
        std::string(kScripts) + kScripts, std::string(kScripts) + "= empty name\n",
        std::string("[]\na = b\n")}) {
    t.Write("site/tool-2.0.dist-info/entry_points.txt", text);
    EXPECT_TRUE(Same(HashOf(t, view),
                     EntryPointsValue("ste-entry-points:pytest11",
                                      {{"a-1.0.dist-info", 'P', {{"myplugin", "myplugin.plugin"}}, ""},
                                       {"tool-2.0.dist-info", 'H', {}, text}})))
        << text;
  }
  // Clean again: back to before.
  t.Write("site/tool-2.0.dist-info/entry_points.txt", std::string(kScripts) + "# comment\n");
  EXPECT_TRUE(Same(HashOf(t, view), before));
}

TEST(EntryPointsView, AMissingFileADirectoryOrAFileEntryContributeNothing) {
  TempTree t;
  t.Write("site/a-1.0.dist-info/entry_points.txt", kPlugin);
  const std::string view = V("site", "ste-entry-points:pytest11");
  const XXH128_hash_t before = HashOf(t, view);
  t.MkDir("site/nofile-1.0.dist-info");
  t.MkDir("site/dir-1.0.dist-info/entry_points.txt");  // IsADirectoryError
  t.Write("site/file-1.0.dist-info", "");              // NotADirectoryError
  t.Symlink("nowhere", "site/dangling-1.0.dist-info");
  EXPECT_TRUE(Same(HashOf(t, view), before));
  // A [pytest11] with no pairs is no plugin either.
  t.Write("site/empty-1.0.dist-info/entry_points.txt", "[pytest11]\n\n# none\n");
  EXPECT_TRUE(Same(HashOf(t, view), before));
}

TEST(EntryPointsView, AFifoIsMarked) {
  TempTree t;
  t.MkDir("site/a-1.0.dist-info");
  const std::string view = V("site", "ste-entry-points:pytest11");
  const XXH128_hash_t before = HashOf(t, view);
  ASSERT_EQ(mkfifo(t.Abs("site/a-1.0.dist-info/entry_points.txt").c_str(), 0644), 0);
  EXPECT_TRUE(Same(HashOf(t, view),
                   EntryPointsValue("ste-entry-points:pytest11", {{"a-1.0.dist-info", 'O', {}, ""}})));
  EXPECT_FALSE(Same(HashOf(t, view), before));
}

TEST(EntryPointsView, TheEggCaseReadsTheFileUnderEggInfo) {
  TempTree t;
  t.Write("site/foo-1.0.egg/EGG-INFO/entry_points.txt", kPlugin);
  EXPECT_TRUE(Same(HashOf(t, V("site/foo-1.0.egg", "ste-entry-points:pytest11")),
                   EntryPointsValue("ste-entry-points:pytest11",
                                    {{"EGG-INFO", 'P', {{"myplugin", "myplugin.plugin"}}, ""}})));
}

// ---- the directory itself -------------------------------------------------------

// ste-pytest-ini: a pyproject.toml as pytest's configuration discovery
// reads it, its [tool.pytest] table only.
const char kPyproject[] =
    "[project]\n"
    "name = \"geo\"\n"
    "version = \"1.0\"\n"
    "dependencies = [\"attrs>=22\"]\n"
    "\n"
    "[tool.pytest.ini_options]\n"
    "addopts = \"-q\"\n"
    "markers = [\"slow: slow ones\"]\n"
    "\n"
    "[tool.ruff]\n"
    "line-length = 100\n";

TEST(PytestIniView, OnlyThePytestTableCounts) {
  TempTree t;
  t.Write("pyproject.toml", kPyproject);
  const std::string view = V("pyproject.toml", "ste-pytest-ini");
  const InventoryEntry entry = ViewOf(t, view);
  EXPECT_EQ(entry.type, FileType::kRegular);
  const XXH128_hash_t before = entry.hash;
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = kPyproject;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    t.Write("pyproject.toml", text);
    return HashOf(t, view);
  };
  // A version, a dependency, another tool's table, a comment, the order
  // of keys or tables: pytest sees none of them.
  EXPECT_TRUE(Same(edited("version = \"1.0\"", "version = \"1.1\""), before));
  EXPECT_TRUE(Same(edited("attrs>=22", "attrs>=23"), before));
  EXPECT_TRUE(Same(edited("line-length = 100", "line-length = 88"), before));
  EXPECT_TRUE(Same(edited("[tool.ruff]\n", "# lint\n[tool.ruff]\n"), before));
  EXPECT_TRUE(Same(edited("addopts = \"-q\"\nmarkers = [\"slow: slow ones\"]\n",
                          "markers = [\"slow: slow ones\"]\naddopts = \"-q\"\n"),
                   before));
  // Its own table: any value, a key, a type.
  EXPECT_FALSE(Same(edited("addopts = \"-q\"", "addopts = \"-q -x\""), before));
  EXPECT_FALSE(Same(edited("markers = [\"slow: slow ones\"]", "markers = [\"slow: slow\"]"), before));
  EXPECT_FALSE(Same(edited("addopts = \"-q\"\n", "addopts = \"-q\"\ntestpaths = [\"tests\"]\n"), before));
  EXPECT_FALSE(Same(edited("addopts = \"-q\"", "addopts = [\"-q\"]"), before));
  // A [tool.pytest] key beside ini_options, and no table at all.
  EXPECT_FALSE(Same(edited("[tool.ruff]", "[tool.pytest.other]\nx = 1\n[tool.ruff]"), before));
  const XXH128_hash_t none = edited("[tool.pytest.ini_options]", "[tool.other]");
  EXPECT_FALSE(Same(none, before));
  t.Write("pyproject.toml", "[project]\nname = \"x\"\n");
  EXPECT_TRUE(Same(HashOf(t, view), none)) << "no [tool.pytest]: the same nothing for pytest";
  t.Write("pyproject.toml", "tool = 1\n");
  EXPECT_FALSE(Same(HashOf(t, view), none)) << "[tool] no table: pytest fails";
}

TEST(PytestIniView, AFileThatDoesNotParseCountsWholeAndAMissingOneIsMissing) {
  TempTree t;
  const std::string view = V("pyproject.toml", "ste-pytest-ini");
  t.Write("pyproject.toml", kPyproject);
  const XXH128_hash_t good = HashOf(t, view);
  // pytest fails on a file tomllib rejects: every change of it counts.
  t.Write("pyproject.toml", std::string(kPyproject) + "[project]\n");  // a table defined twice
  const XXH128_hash_t bad = HashOf(t, view);
  EXPECT_FALSE(Same(bad, good));
  t.Write("pyproject.toml", std::string(kPyproject) + "[project]\nname = \"y\"\n");
  EXPECT_FALSE(Same(HashOf(t, view), bad));
  t.Write("pyproject.toml", std::string(kPyproject) + "x = \"\xff\"\n");  // not UTF-8
  EXPECT_FALSE(Same(HashOf(t, view), good));
  // Missing, a directory: pytest reads nothing there.
  ASSERT_EQ(unlink((t.root() + "/pyproject.toml").c_str()), 0);
  EXPECT_EQ(ViewOf(t, view).type, FileType::kMissing);
  t.MkDir("pyproject.toml");
  EXPECT_EQ(ViewOf(t, view).type, FileType::kMissing);
  // Only a file named pyproject.toml has the view.
  EXPECT_FALSE(ParseView(V("setup.cfg", "ste-pytest-ini")).has_value());
  EXPECT_TRUE(ParseView(V("sub/pyproject.toml", "ste-pytest-ini")).has_value());
  EXPECT_TRUE(ParseView(V("/outside/pyproject.toml", "ste-pytest-ini")).has_value());
}

TEST(ViewDirectory, MissingOrNotADirectoryIsMissing) {
  TempTree t;
  for (const char* view : {"ste-pth", "ste-dists", "ste-dists:x", "ste-entry-points:g"}) {
    InventoryEntry e = ViewOf(t, V("gone", view));
    EXPECT_EQ(e.type, FileType::kMissing) << view;
    EXPECT_EQ(e.hash.low64 | e.hash.high64, 0u);
  }
  t.Write("file", "");
  EXPECT_EQ(ViewOf(t, V("file", "ste-dists")).type, FileType::kMissing);
  t.Symlink("file", "link-to-file");
  EXPECT_EQ(ViewOf(t, V("link-to-file", "ste-dists")).type, FileType::kMissing);
  // A directory replaced by a file.
  t.MkDir("site/a.dist-info");
  EXPECT_EQ(ViewOf(t, V("site", "ste-dists")).type, FileType::kRegular);
  std::filesystem::remove_all(t.Abs("site"));
  t.Write("site", "now a file\n");
  EXPECT_EQ(ViewOf(t, V("site", "ste-dists")).type, FileType::kMissing);
}

TEST(ViewDirectory, ASymlinkToADirectoryIsFollowedAsOsListdirDoes) {
  TempTree t;
  t.MkDir("real/a-1.0.dist-info");
  t.Symlink("real", "link");
  EXPECT_TRUE(Same(HashOf(t, V("link", "ste-dists")), NamesValue("ste-dists", {"a-1.0.dist-info"})));
}

TEST(ViewDirectory, AnExternalDirectory) {
  TempTree repo, outside;
  outside.MkDir("dist-packages/x-1.0.dist-info");
  const std::string view = outside.root() + "/dist-packages/" + kMark + "ste-dists";
  absl::StatusOr<std::vector<InventoryEntry>> got = ComputeViews(repo.root(), {view}, GlobSet(), nullptr);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].path, view);
  EXPECT_TRUE(Same((*got)[0].hash, NamesValue("ste-dists", {"x-1.0.dist-info"})));
}

TEST(ViewDirectory, IgnoredNamesAreInvisibleToARepoView) {
  TempTree t;
  t.MkDir("build-1.0.dist-info");
  t.MkDir("a-1.0.dist-info");
  absl::StatusOr<GlobSet> ignore = GlobSet::Compile({"build-*"});
  ASSERT_TRUE(ignore.ok());
  EXPECT_TRUE(Same(ViewOf(t, V(".", "ste-dists"), *ignore).hash,
                   NamesValue("ste-dists", {"a-1.0.dist-info"})));
}

TEST(ViewDirectory, AnUnknownViewIsAnError) {
  TempTree t;
  absl::StatusOr<std::vector<InventoryEntry>> got =
      ComputeViews(t.root(), {V(".", "ste-nonsense")}, GlobSet(), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  got = ComputeViews(t.root(), {"/a/../" + kMark + "ste-pth"}, GlobSet(), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  got = ComputeViews(t.root(), {"src/../" + kMark + "ste-pth"}, GlobSet(), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
}

// An I/O error (EIO) reading an entry_points.txt fails the computation; a
// directory that cannot be listed is what Python sees: no names.
class EioFileSystem : public ScanFileSystem {
 public:
  EioFileSystem(std::string fail_open, std::string deny_dir, std::string deny_open = "")
      : fail_open_(std::move(fail_open)), deny_dir_(std::move(deny_dir)), deny_open_(std::move(deny_open)) {}
  absl::StatusOr<FileStat> LinkStat(const std::string& p) override { return real_->LinkStat(p); }
  absl::StatusOr<FileStat> FollowStat(const std::string& p) override { return real_->FollowStat(p); }
  absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(const std::string& p, bool follow) override {
    if (p == deny_dir_) return absl::PermissionDeniedError("opendir " + p + ": Permission denied");
    return real_->OpenDirectory(p, follow);
  }
  absl::StatusOr<std::string> ReadLink(const std::string& p) override { return real_->ReadLink(p); }
  absl::StatusOr<std::unique_ptr<ReadableFile>> Open(const std::string& p, bool follow) override {
    if (p == fail_open_) return absl::DataLossError("open " + p + ": Input/output error");
    if (p == deny_open_) return absl::PermissionDeniedError("open " + p + ": Permission denied");
    return real_->Open(p, follow);
  }

 private:
  ScanFileSystem* real_ = RealScanFileSystem();
  std::string fail_open_, deny_dir_, deny_open_;
};

TEST(ViewDirectory, AnIoErrorFailsAndAnUnlistableDirectoryIsMissing) {
  TempTree t;
  t.Write("site/a-1.0.dist-info/entry_points.txt", kPlugin);
  EioFileSystem eio(t.Abs("site/a-1.0.dist-info/entry_points.txt"), t.Abs("denied"));
  absl::StatusOr<std::vector<InventoryEntry>> got =
      ComputeViews(t.root(), {V("site", "ste-entry-points:pytest11")}, GlobSet(), &eio);
  EXPECT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("entry_points.txt"));
  // The names views do not read it.
  got = ComputeViews(t.root(), {V("site", "ste-dists")}, GlobSet(), &eio);
  EXPECT_TRUE(got.ok()) << got.status();
  t.MkDir("denied/x.dist-info");
  got = ComputeViews(t.root(), {V("denied", "ste-dists")}, GlobSet(), &eio);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].type, FileType::kMissing);
}

TEST(ViewDirectory, APermissionErrorOnEntryPointsIsWhatReadTextSuppresses) {
  TempTree t;
  t.Write("site/a-1.0.dist-info/entry_points.txt", kPlugin);
  t.Write("site/b-1.0.dist-info/entry_points.txt", "[pytest11]\nb = b\n");
  EioFileSystem denied("", "", t.Abs("site/a-1.0.dist-info/entry_points.txt"));
  absl::StatusOr<std::vector<InventoryEntry>> got =
      ComputeViews(t.root(), {V("site", "ste-entry-points:pytest11")}, GlobSet(), &denied);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(Same((*got)[0].hash, EntryPointsValue("ste-entry-points:pytest11",
                                                    {{"b-1.0.dist-info", 'P', {{"b", "b"}}, ""}})));
}

// The same on the real file system, where mode 000 stops the reader.
TEST(ViewDirectory, AnUnreadableEntryPointsFileIsWhatReadTextSuppresses) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file";
  TempTree t;
  t.Write("site/a-1.0.dist-info/entry_points.txt", kPlugin);
  const std::string view = V("site", "ste-entry-points:pytest11");
  ASSERT_EQ(chmod(t.Abs("site/a-1.0.dist-info/entry_points.txt").c_str(), 0), 0);
  EXPECT_TRUE(Same(HashOf(t, view), EntryPointsValue("ste-entry-points:pytest11", {})));
}

// ---- views in a scan ------------------------------------------------------------

TEST(ViewScan, AScanComputesTheRequestedViewsWithZeroStats) {
  TempTree t;
  t.MkDir("a-1.0.dist-info");
  t.Write("x.pth", "");
  TempTree outside;
  outside.MkDir("site/b-1.0.dist-info");
  ScanOptions options = t.Options();
  const std::string ext_view = outside.root() + "/site/" + kMark + "ste-dists";
  options.view_paths = {V(".", "ste-dists"), V(".", "ste-pth"), ext_view, V(".", "ste-dists"),
                        V("missing", "ste-dists")};
  absl::StatusOr<Inventory> inv = Inventory::Scan(options, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status();
  const InventoryEntry* dists = inv->Find(V(".", "ste-dists"));
  ASSERT_NE(dists, nullptr);
  EXPECT_EQ(dists->type, FileType::kRegular);
  EXPECT_EQ(dists->size, 0u);
  EXPECT_EQ(dists->mtime_ns, 0);
  EXPECT_EQ(dists->ctime_ns, 0);
  EXPECT_EQ(dists->inode, 0u);
  EXPECT_EQ(dists->dev, 0u);
  EXPECT_EQ(dists->mode, 0u);
  EXPECT_TRUE(Same(dists->hash, NamesValue("ste-dists", {"a-1.0.dist-info"})));
  ASSERT_NE(inv->Find(ext_view), nullptr);
  EXPECT_TRUE(Same(inv->Find(ext_view)->hash, NamesValue("ste-dists", {"b-1.0.dist-info"})));
  ASSERT_NE(inv->Find(V("missing", "ste-dists")), nullptr);
  EXPECT_EQ(inv->Find(V("missing", "ste-dists"))->type, FileType::kMissing);
  // Sorted, unique: the format's invariant.
  absl::StatusOr<Inventory> round = Inventory::Parse(inv->Serialize());
  ASSERT_TRUE(round.ok()) << round.status();
  EXPECT_EQ(round->entries(), inv->entries());

  // Only the value makes a change: a new file, an mtime, a new dist.
  t.Write("NOTES.txt", "");
  absl::StatusOr<Inventory> later = Inventory::Scan(options, &*inv);
  ASSERT_TRUE(later.ok()) << later.status();
  for (const InventoryChange& c : Inventory::Diff(*inv, *later).changes) {
    EXPECT_FALSE(IsViewPath(c.path)) << c.path;
  }
  t.MkDir("c-1.0.dist-info");
  later = Inventory::Scan(options, &*inv);
  ASSERT_TRUE(later.ok()) << later.status();
  std::vector<std::string> views_changed;
  for (const InventoryChange& c : Inventory::Diff(*inv, *later).changes) {
    if (IsViewPath(c.path)) views_changed.push_back(c.path);
  }
  EXPECT_EQ(views_changed, std::vector<std::string>{V(".", "ste-dists")});
}

TEST(ViewScan, AnUnknownViewFailsTheScan) {
  TempTree t;
  ScanOptions options = t.Options();
  options.view_paths = {V(".", "ste-what")};
  EXPECT_TRUE(absl::IsInvalidArgument(Inventory::Scan(options, nullptr).status()));
}

TEST(ViewScan, AFileNamedLikeAViewIsReservedButListed) {
  TempTree t;
  t.Write(kMark + "ste-dists", "a real file\n");
  t.Write(kMark + "other", "not a known view name: an entry like any\n");
  absl::StatusOr<Inventory> inv = t.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->Find(kMark + "ste-dists"), nullptr);
  EXPECT_NE(inv->Find(kMark + "other"), nullptr);
  EXPECT_TRUE(Same(inv->Find(".")->hash, test::NamesHash({kMark + "ste-dists", kMark + "other"})));
  ScanOptions options = t.Options();
  options.view_paths = {V(".", "ste-dists")};
  inv = Inventory::Scan(options, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_TRUE(Same(inv->Find(kMark + "ste-dists")->hash, NamesValue("ste-dists", {})));
}

}  // namespace
}  // namespace ste
