// Copyright: the ste authors.
#include "ste/selection_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<uint32_t> Ids(const Roaring& r) {
  std::vector<uint32_t> out(r.cardinality());
  r.toUint32Array(out.data());
  return out;
}

std::unique_ptr<SelectionIndex> Build(SelectionIndexBuilder* b) {
  absl::StatusOr<std::string> image = b->Finish();
  EXPECT_TRUE(image.ok()) << image.status();
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index =
      SelectionIndex::FromBytes(*std::move(image));
  EXPECT_TRUE(index.ok()) << index.status();
  return index.ok() ? *std::move(index) : nullptr;
}

std::vector<uint32_t> LookupIds(const SelectionIndex& index,
                                std::string_view path,
                                DepKind kind = DepKind::kContent) {
  absl::StatusOr<Roaring> r = index.Lookup(path, kind);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Ids(*r) : std::vector<uint32_t>{};
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "ste_index_test.XXXXXX")
            .string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------

TEST(SelectionIndexScopeTest, ValidScopes) {
  EXPECT_TRUE(ValidateScope("//r").ok());
  EXPECT_TRUE(ValidateScope("//r/tests/test_a.py").ok());
  EXPECT_TRUE(ValidateScope("//r/a b/\n\xff").ok());
  for (std::string_view bad :
       {"", "/", "//", "r", "/r", "//r/", "//r//a", "///r", "//r/a/"}) {
    EXPECT_EQ(ValidateScope(bad).code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_FALSE(ValidateScope(std::string("//r/a\0b", 7)).ok());
}

TEST(SelectionIndexScopeTest, SlashSortsFirst) {
  // The trap: in plain byte order '.' (0x2E) and '-' (0x2D) sort before
  // '/' (0x2F), which would split the subtree of //r/a.
  EXPECT_LT(std::string_view("//r/a.x"), std::string_view("//r/a/b"));
  EXPECT_LT(CompareScopes("//r/a/b", "//r/a.x"), 0);
  EXPECT_LT(CompareScopes("//r/a/c", "//r/a-"), 0);
  EXPECT_LT(CompareScopes("//r/a", "//r/a/b"), 0);
  EXPECT_LT(CompareScopes("//r/a/zzz", "//r/aa"), 0);
  EXPECT_GT(CompareScopes("//r/b", "//r/a/b"), 0);
  EXPECT_EQ(CompareScopes("//r/a", "//r/a"), 0);
  EXPECT_LT(CompareScopes("//r/a/\xff", "//r/a\x01"), 0);
  EXPECT_LT(CompareScopes("//r/\x7f", "//r/\x80"), 0);  // unsigned bytes
}

TEST(SelectionIndexScopeTest, Contains) {
  EXPECT_TRUE(ScopeContains("//r", "//r"));
  EXPECT_TRUE(ScopeContains("//r", "//r/a/b"));
  EXPECT_TRUE(ScopeContains("//r/a", "//r/a/b"));
  EXPECT_FALSE(ScopeContains("//r/a", "//r/a.x"));
  EXPECT_FALSE(ScopeContains("//r/a", "//r/ab"));
  EXPECT_FALSE(ScopeContains("//r/a/b", "//r/a"));
}

TEST(SelectionIndexBuilderTest, IdsFollowScopeOrderAndSubtreesAreContiguous) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/a.x", "//r/a/c", "//r/b", "//r/a/b", "//r/a",
                          "//r/a-", "//r/a/b/c"})
                  .ok());
  const std::vector<std::string> expected = {
      "//r/a", "//r/a/b", "//r/a/b/c", "//r/a/c", "//r/a-", "//r/a.x", "//r/b"};
  ASSERT_EQ(b.test_count(), expected.size());
  for (uint32_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(b.test_scope(i), expected[i]);
    EXPECT_EQ(b.FindTest(expected[i]), i);
  }
  EXPECT_EQ(b.FindTest("//r/a/d"), std::nullopt);
  ASSERT_TRUE(b.AddScopeDependency("//r/a", "a_init", DepKind::kContent).ok());
  ASSERT_TRUE(
      b.AddScopeDependency("//r/a/b", "b_init", DepKind::kContent).ok());
  ASSERT_TRUE(b.AddScopeDependency("//r/a.x", "ax", DepKind::kContent).ok());
  auto index = Build(&b);
  ASSERT_NE(index, nullptr);
  EXPECT_THAT(LookupIds(*index, "a_init"), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(LookupIds(*index, "b_init"), ElementsAre(1, 2));
  EXPECT_THAT(LookupIds(*index, "ax"), ElementsAre(5));
  EXPECT_EQ(index->TestsUnder("//r/a"), std::make_pair(0u, 4u));
  EXPECT_EQ(index->TestsUnder("//r/a/b"), std::make_pair(1u, 3u));
  EXPECT_EQ(index->TestsUnder("//r"), std::make_pair(0u, 7u));
  EXPECT_EQ(index->TestsUnder("//r/zzz").first,
            index->TestsUnder("//r/zzz").second);
  for (uint32_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(index->test_scope(i), expected[i]);
    EXPECT_EQ(index->FindTest(expected[i]), i);
  }
  EXPECT_EQ(index->FindTest("//r/a/d"), std::nullopt);
  EXPECT_EQ(index->FindTest("//r"), std::nullopt);
}

TEST(SelectionIndexBuilderTest, RejectsBadInput) {
  SelectionIndexBuilder b;
  EXPECT_EQ(b.AddTestDependency(0, "x", DepKind::kContent).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(b.AddTests({"//r/a", "//r/b", "//r/a"}).code(),
            absl::StatusCode::kInvalidArgument);
  SelectionIndexBuilder c;
  EXPECT_EQ(c.AddTests({"//r/a", "r/b"}).code(),
            absl::StatusCode::kInvalidArgument);
  SelectionIndexBuilder d;
  ASSERT_TRUE(d.AddTests({"//r/a", "//r/b"}).ok());
  EXPECT_EQ(d.AddTests({"//r/c"}).code(),
            absl::StatusCode::kFailedPrecondition);
  const uint32_t p = d.InternPath("x");
  EXPECT_EQ(d.InternPath("x"), p);
  EXPECT_EQ(d.InternPath("y"), p + 1);
  EXPECT_EQ(d.path_count(), 2u);
  const uint32_t unknown = 7;
  EXPECT_EQ(d.AddTestDependencies(0, {&unknown, 1}, DepKind::kContent).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.AddTestDependencies(2, {&p, 1}, DepKind::kContent).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.AddTestDependencies(0, {&p, 1}, static_cast<DepKind>(0)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.AddScopeDependency("//r/", "x", DepKind::kContent).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.SetOpaque(2).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(d.Finish().ok());
  EXPECT_EQ(d.Finish().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(d.AddTestDependencies(0, {&p, 1}, DepKind::kContent).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(SelectionIndexTest, RootScopeDependencyAppliesToEveryTest) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/x/t1", "//r/t2", "//r/y/z/t3"}).ok());
  ASSERT_TRUE(
      b.AddScopeDependency("//r", "Gemfile.lock", DepKind::kContent).ok());
  ASSERT_TRUE(b.AddScopeDependency("//r/nothing", "n", DepKind::kContent).ok());
  ASSERT_TRUE(b.AddScopeDependency("//q", "q", DepKind::kContent).ok());
  auto index = Build(&b);
  ASSERT_NE(index, nullptr);
  EXPECT_THAT(LookupIds(*index, "Gemfile.lock"), ElementsAre(0, 1, 2));
  EXPECT_EQ(index->key_count(), 1u);  // scopes without tests add nothing
  EXPECT_TRUE(LookupIds(*index, "n").empty());
}

TEST(SelectionIndexTest, PerTestDependenciesKindsAndUnion) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/t0", "//r/t1", "//r/t2", "//r/t3"}).ok());
  const uint32_t a = b.InternPath("lib/a.rb");
  const uint32_t c = b.InternPath("lib/c.rb");
  const uint32_t d = b.InternPath("lib");
  const std::vector<uint32_t> t2 = {c, a, a};  // any order, duplicates
  ASSERT_TRUE(b.AddTestDependencies(2, t2, DepKind::kContent).ok());
  ASSERT_TRUE(b.AddTestDependencies(0, {&a, 1}, DepKind::kContent).ok());
  ASSERT_TRUE(b.AddTestDependencies(3, {&d, 1}, DepKind::kListing).ok());
  ASSERT_TRUE(b.AddTestDependency(1, "lib/b.rb", DepKind::kAbsent).ok());
  ASSERT_TRUE(b.AddTestDependency(1, "lib/a.rb", DepKind::kAbsent).ok());
  ASSERT_TRUE(b.AddTestDependencies(2, {}, DepKind::kContent).ok());
  auto index = Build(&b);
  ASSERT_NE(index, nullptr);
  EXPECT_THAT(LookupIds(*index, "lib/a.rb"), ElementsAre(0, 2));
  EXPECT_THAT(LookupIds(*index, "lib/a.rb", DepKind::kAbsent), ElementsAre(1));
  EXPECT_THAT(LookupIds(*index, "lib/c.rb"), ElementsAre(2));
  EXPECT_THAT(LookupIds(*index, "lib", DepKind::kListing), ElementsAre(3));
  EXPECT_TRUE(LookupIds(*index, "lib").empty());
  EXPECT_TRUE(LookupIds(*index, "lib/zz.rb").empty());

  // Keys in (path, kind) order.
  ASSERT_EQ(index->key_count(), 5u);
  EXPECT_EQ(index->KeyAt(0).value(), (DepKey{"lib", DepKind::kListing}));
  EXPECT_EQ(index->KeyAt(1).value(), (DepKey{"lib/a.rb", DepKind::kContent}));
  EXPECT_EQ(index->KeyAt(2).value(), (DepKey{"lib/a.rb", DepKind::kAbsent}));
  EXPECT_EQ(index->KeyAt(3).value(), (DepKey{"lib/b.rb", DepKind::kAbsent}));
  EXPECT_EQ(index->KeyAt(4).value(), (DepKey{"lib/c.rb", DepKind::kContent}));

  const std::vector<DepKey> changed = {{"lib/c.rb", DepKind::kContent},
                                       {"lib", DepKind::kListing},
                                       {"nope", DepKind::kContent},
                                       {"lib/b.rb", DepKind::kAbsent}};
  absl::StatusOr<Roaring> u = index->Union(changed);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_THAT(Ids(*u), ElementsAre(1, 2, 3));
  absl::StatusOr<Roaring> none = index->Union({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->isEmpty());

  auto matches = index->KeysMatchingPath("lib/a.rb");
  ASSERT_TRUE(matches.ok()) << matches.status();
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[0].first, (DepKey{"lib/a.rb", DepKind::kContent}));
  EXPECT_THAT(Ids((*matches)[0].second), ElementsAre(0, 2));
  EXPECT_EQ((*matches)[1].first, (DepKey{"lib/a.rb", DepKind::kAbsent}));
  EXPECT_THAT(Ids((*matches)[1].second), ElementsAre(1));
  EXPECT_TRUE(index->KeysMatchingPath("lib/a").value().empty());

  auto deps = index->DependenciesOf(1);
  ASSERT_TRUE(deps.ok());
  EXPECT_THAT(*deps, ElementsAre(DepKey{"lib/a.rb", DepKind::kAbsent},
                                 DepKey{"lib/b.rb", DepKind::kAbsent}));
  auto deps2 = index->DependenciesOf(2);
  ASSERT_TRUE(deps2.ok());
  EXPECT_THAT(*deps2, ElementsAre(DepKey{"lib/a.rb", DepKind::kContent},
                                  DepKey{"lib/c.rb", DepKind::kContent}));
}

TEST(SelectionIndexTest, OpaqueFlag) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/a", "//r/b", "//r/c"}).ok());
  ASSERT_TRUE(b.SetOpaque(1).ok());
  ASSERT_TRUE(b.SetOpaque(1).ok());
  auto index = Build(&b);
  ASSERT_NE(index, nullptr);
  EXPECT_FALSE(index->opaque(0));
  EXPECT_TRUE(index->opaque(1));
  EXPECT_FALSE(index->opaque(2));
  EXPECT_THAT(Ids(index->OpaqueTests()), ElementsAre(1));
}

TEST(SelectionIndexTest, EmptyIndexIsValid) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({}).ok());
  ASSERT_TRUE(b.AddScopeDependency("//r", "x", DepKind::kContent).ok());
  auto index = Build(&b);
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->test_count(), 0u);
  EXPECT_EQ(index->key_count(), 0u);
  EXPECT_EQ(index->size_bytes(), 136u);  // the header, no outside path
  EXPECT_TRUE(LookupIds(*index, "x").empty());
  EXPECT_EQ(index->DumpJson().value(), "");
  EXPECT_EQ(index->FindTest("//r/a"), std::nullopt);
}

TEST(SelectionIndexTest, ByteStringPathsAndJsonDump) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/t \"q\"", "//r/u"}).ok());
  const std::string newline = "dir/with\nnewline and space";
  const std::string latin1 = "caf\xe9.txt";  // not UTF-8
  const std::string utf8 = "caf\xc3\xa9.txt";
  const std::string nul("a\0b", 3);
  for (const std::string& p : {newline, latin1, utf8, nul}) {
    ASSERT_TRUE(b.AddTestDependency(0, p, DepKind::kContent).ok());
  }
  ASSERT_TRUE(b.AddTestDependency(1, "tab\there\\", DepKind::kAbsent).ok());
  ASSERT_TRUE(b.SetOpaque(1).ok());
  auto index = Build(&b);
  ASSERT_NE(index, nullptr);
  for (const std::string& p : {newline, latin1, utf8, nul}) {
    EXPECT_THAT(LookupIds(*index, p), ElementsAre(0)) << p;
  }
  EXPECT_TRUE(LookupIds(*index, "caf").empty());
  EXPECT_TRUE(LookupIds(*index, "a").empty());
  absl::StatusOr<std::string> dump = index->DumpJson();
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(*dump,
            "{\"test\":\"//r/t \\\"q\\\"\",\"opaque\":false,\"deps\":["
            "{\"path\":\"a\\u0000b\",\"kind\":\"content\"},"
            "{\"path\":\"caf\xc3\xa9.txt\",\"kind\":\"content\"},"
            "{\"path\":\"caf\xef\xbf\xbd.txt\",\"path_hex\":"
            "\"636166e92e747874\",\"kind\":\"content\"},"
            "{\"path\":\"dir/with\\nnewline and space\",\"kind\":\"content\"}"
            "]}\n"
            "{\"test\":\"//r/u\",\"opaque\":true,\"deps\":["
            "{\"path\":\"tab\\there\\\\\",\"kind\":\"absent\"}]}\n");
}

TEST(SelectionIndexTest, RoundTripThroughFile) {
  TempDir dir;
  const std::string path = dir.path() + "/index.bin";
  std::string image;
  for (int pass = 0; pass < 2; ++pass) {
    SelectionIndexBuilder b;
    ASSERT_TRUE(b.AddTests({"//r/a/t1", "//r/a/t2", "//r/b/t3"}).ok());
    ASSERT_TRUE(
        b.AddScopeDependency("//r/a", "a/helper", DepKind::kContent).ok());
    ASSERT_TRUE(b.AddTestDependency(2, "b/x", DepKind::kAbsent).ok());
    ASSERT_TRUE(b.SetOpaque(2).ok());
    if (pass == 0) {
      ASSERT_TRUE(b.WriteFile(path).ok());
    } else {
      image = b.Finish().value();
    }
  }
  auto from_file = SelectionIndex::Open(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  auto from_bytes = SelectionIndex::FromBytes(image);
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status();
  EXPECT_EQ((*from_file)->size_bytes(), image.size());
  EXPECT_EQ((*from_file)->DumpJson().value(),
            (*from_bytes)->DumpJson().value());
  EXPECT_THAT(LookupIds(**from_file, "a/helper"), ElementsAre(0, 1));
  EXPECT_TRUE((*from_file)->opaque(2));
  // Only the index is left behind, readable by others.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_THAT(names, ElementsAre("index.bin"));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(SelectionIndexTest, WriteFileFailsCleanly) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/a"}).ok());
  absl::Status s = b.WriteFile("/nonexistent-dir/for/sure/index.bin");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent-dir"));
  auto missing = SelectionIndex::Open("/nonexistent-dir/index.bin");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(SelectionIndexTest, ScopeRangesCrossContainerBoundaries) {
  // More than 65536 tests: runs span two roaring containers.
  std::vector<std::string> scopes;
  for (int i = 0; i < 70000; ++i) {
    scopes.push_back(absl::StrCat("//r/d", i / 1000, "/t", 1000 + i % 1000));
  }
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests(scopes).ok());
  ASSERT_TRUE(b.AddScopeDependency("//r", "root", DepKind::kContent).ok());
  ASSERT_TRUE(b.AddScopeDependency("//r/d65", "d65", DepKind::kContent).ok());
  const uint32_t p = b.InternPath("every-other");
  for (uint32_t t = 0; t < 70000; t += 2) {
    ASSERT_TRUE(b.AddTestDependencies(t, {&p, 1}, DepKind::kContent).ok());
  }
  auto index = Build(&b);
  ASSERT_NE(index, nullptr);
  Roaring root = index->Lookup("root", DepKind::kContent).value();
  EXPECT_EQ(root.cardinality(), 70000u);
  const auto range = index->TestsUnder("//r/d65");
  EXPECT_EQ(range.second - range.first, 1000u);
  Roaring d65 = index->Lookup("d65", DepKind::kContent).value();
  EXPECT_EQ(d65.cardinality(), 1000u);
  EXPECT_EQ(d65.minimum(), range.first);
  EXPECT_EQ(d65.maximum(), range.second - 1);
  EXPECT_EQ(index->Lookup("every-other", DepKind::kContent)->cardinality(),
            35000u);
}

// Random tests, paths and dependencies against a plain reference model,
// several thread counts, tests fed out of order from several threads, both
// format versions and several key block sizes (one key per block, blocks
// that split a path's kinds, one block for everything).
TEST(SelectionIndexTest, MatchesReferenceModel) {
  std::mt19937 rng(42);
  struct Config {
    int threads;
    uint32_t version;
    uint32_t keys_per_block;
  };
  for (const Config& config : {Config{1, 2, 64}, Config{2, 1, 64}, Config{3, 2, 1},
                               Config{7, 2, 5}, Config{2, 2, 65536}}) {
    const int threads = config.threads;
    SCOPED_TRACE(absl::StrCat("version ", config.version, ", ", config.keys_per_block,
                              " keys per block"));
    const int n_tests = 1 + static_cast<int>(rng() % 300);
    const int n_paths = 1 + static_cast<int>(rng() % 200);
    std::set<std::string> scope_set;
    while (static_cast<int>(scope_set.size()) < n_tests) {
      std::string s = "//r";
      const int depth = 1 + static_cast<int>(rng() % 3);
      for (int d = 0; d < depth; ++d) {
        s += "/";
        s += "ab.-"[rng() % 4];
        s += "xy"[rng() % 2];
      }
      scope_set.insert(s);
    }
    std::vector<std::string> scopes(scope_set.begin(), scope_set.end());
    std::shuffle(scopes.begin(), scopes.end(), rng);
    SelectionIndexBuilder b(
        SelectionIndexBuilder::Options{threads, config.version, config.keys_per_block});
    ASSERT_TRUE(b.AddTests(scopes).ok());
    std::vector<std::string> paths;
    for (int p = 0; p < n_paths; ++p) {
      switch (rng() % 5) {  // absolute and view paths too
        case 0:
          paths.push_back(absl::StrCat("/usr/lib/p", rng() % 1000, "/", p));
          break;
        case 1:
          paths.push_back(absl::StrCat("p", rng() % 1000, "/\x01ste-def:f", p));
          break;
        default:
          paths.push_back(absl::StrCat("p", rng() % 1000, "/", p));
      }
      b.InternPath(paths.back());
    }
    std::map<DepKey, std::set<uint32_t>> want;
    // Per-test sets, to be fed by several threads.
    std::vector<std::vector<std::vector<uint32_t>>> per_test(
        n_tests, std::vector<std::vector<uint32_t>>(3));
    for (int t = 0; t < n_tests; ++t) {
      const int n = static_cast<int>(rng() % 40);
      for (int i = 0; i < n; ++i) {
        const uint32_t p = rng() % n_paths;
        const int k = static_cast<int>(rng() % 3);
        per_test[t][k].push_back(p);
        want[DepKey{paths[p], static_cast<DepKind>(k + 1)}].insert(t);
      }
      // Runs: many tests share a block of consecutive path ids.
      if (rng() % 2 == 0) {
        for (int p = 0; p < std::min(n_paths, 50); ++p) {
          per_test[t][0].push_back(p);
          want[DepKey{paths[p], DepKind::kContent}].insert(t);
        }
      }
    }
    for (int i = 0; i < 20; ++i) {
      std::string scope = scopes[rng() % scopes.size()];
      if (rng() % 2 == 0) scope = scope.substr(0, scope.rfind('/'));
      const uint32_t p = rng() % n_paths;
      const DepKind kind = static_cast<DepKind>(1 + rng() % 3);
      ASSERT_TRUE(b.AddScopeDependency(scope, paths[p], kind).ok()) << scope;
      for (int t = 0; t < n_tests; ++t) {
        if (ScopeContains(scope, b.test_scope(t))) {
          want[DepKey{paths[p], kind}].insert(t);
        }
      }
    }
    std::set<uint32_t> opaque;
    for (int i = 0; i < 5; ++i) opaque.insert(rng() % n_tests);
    {
      std::vector<uint32_t> order(n_tests);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<std::thread> feeders;
      for (int f = 0; f < 3; ++f) {
        feeders.emplace_back([&, f] {
          for (size_t i = f; i < order.size(); i += 3) {
            const uint32_t t = order[i];
            for (int k = 0; k < 3; ++k) {
              ASSERT_TRUE(b.AddTestDependencies(t, per_test[t][k],
                                                static_cast<DepKind>(k + 1))
                              .ok());
            }
            if (opaque.count(t)) {
              ASSERT_TRUE(b.SetOpaque(t).ok());
            }
          }
        });
      }
      for (std::thread& th : feeders) th.join();
    }
    auto index = Build(&b);
    ASSERT_NE(index, nullptr);
    EXPECT_EQ(index->format_version(), config.version);
    ASSERT_EQ(index->key_count(), want.size());
    size_t i = 0;
    std::vector<std::string_view> outside;
    for (const auto& [key, tests] : want) {
      EXPECT_EQ(index->KeyAt(i).value(), key);
      const std::vector<uint32_t> ids(tests.begin(), tests.end());
      EXPECT_EQ(Ids(index->BitmapAt(i).value()), ids);
      EXPECT_EQ(LookupIds(*index, key.path, key.kind), ids);
      // Just below and just above the key: absent.
      EXPECT_TRUE(index->Lookup(key.path + '\0', key.kind)->isEmpty());
      EXPECT_TRUE(index->Lookup(key.path.substr(0, key.path.size() - 1), key.kind)->isEmpty());
      if ((key.path[0] == '/' || key.path.find('\x01') != std::string::npos) &&
          (outside.empty() || outside.back() != key.path)) {
        outside.push_back(key.path);
      }
      ++i;
    }
    EXPECT_EQ(index->OutsideAndViewPaths(), outside);
    EXPECT_TRUE(index->VerifyAll().ok());
    // Unions of random key sets, some absent, against the model.
    for (int round = 0; round < 20; ++round) {
      std::vector<DepKey> keys;
      std::set<uint32_t> expected;
      for (int k = 0; k < 1 + round * 3; ++k) {
        DepKey key{paths[rng() % n_paths], static_cast<DepKind>(1 + rng() % 3)};
        auto it = want.find(key);
        if (it != want.end()) expected.insert(it->second.begin(), it->second.end());
        keys.push_back(std::move(key));
      }
      EXPECT_EQ(Ids(index->Union(keys).value()),
                std::vector<uint32_t>(expected.begin(), expected.end()));
    }
    for (int k = 0; k < 10; ++k) {
      const std::string& path = paths[rng() % n_paths];
      std::vector<DepKey> expected;
      for (const auto& [key, tests] : want) {
        if (key.path == path) expected.push_back(key);
      }
      std::vector<DepKey> got;
      const auto matching = index->KeysMatchingPath(path).value();
      for (const auto& [key, bitmap] : matching) got.push_back(key);
      EXPECT_EQ(got, expected) << path;
    }
    for (int t = 0; t < n_tests; ++t) {
      EXPECT_EQ(index->opaque(t), opaque.count(t) == 1);
      std::vector<DepKey> expected;
      for (const auto& [key, tests] : want) {
        if (tests.count(t)) expected.push_back(key);
      }
      EXPECT_EQ(index->DependenciesOf(t).value(), expected);
    }
  }
}

}  // namespace
}  // namespace ste

namespace ste {
namespace {

// CRoaring 0.2.66 turns a run container of more than 2048 runs into a
// bitset when a range is added to it, whatever its cardinality; a bitset
// of 4096 values or fewer cannot travel in the portable format (every
// reader takes it for an array: roaring_validate.h). A path that a pair of
// consecutive tests read (a range: a run container), then 2,100 lone
// tests, then another pair, made such a bitmap, and the index refused its
// own key ("not a roaring bitmap of the recorded size"), so every select
// that needed it was all. Found by `ste report` on 100,000 synthetic tests.
TEST(SelectionIndexBuilderTest, ABitmapThatCRoaringLeavesAsASmallBitsetIsWrittenReadably) {
  SelectionIndexBuilder b;
  std::vector<std::string> scopes;
  for (int i = 0; i < 6000; i++) scopes.push_back(absl::StrFormat("//r/t%05d", i));
  ASSERT_TRUE(b.AddTests(scopes).ok());
  std::set<uint32_t> readers = {0, 1};
  for (uint32_t i = 3; i < 3 + 2 * 2100; i += 2) readers.insert(i);
  readers.insert(5000);
  readers.insert(5001);
  for (uint32_t t : readers) ASSERT_TRUE(b.AddTestDependency(t, "shared.py", DepKind::kContent).ok());
  absl::StatusOr<std::string> image = b.Finish();
  ASSERT_TRUE(image.ok()) << image.status();
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(*image);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_TRUE((*index)->VerifyAll().ok()) << (*index)->VerifyAll();
  absl::StatusOr<Roaring> got = (*index)->Lookup("shared.py", DepKind::kContent);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->cardinality(), readers.size());
  std::set<uint32_t> back;
  for (uint32_t id : *got) back.insert(id);
  EXPECT_EQ(back, readers);
}

}  // namespace
}  // namespace ste
