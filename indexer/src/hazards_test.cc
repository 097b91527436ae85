// FindHazards (hazards.h) on an index built in memory.
#include "ste/hazards.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ste {
namespace {

TEST(FindHazards, ReadersLookersAndListersOfAWriteButNeverTheWriterItself) {
  SelectionIndexBuilder b;
  ASSERT_TRUE(b.AddTests({"//r/t_w.sh", "//r/t_r.sh", "//r/t_a.sh", "//r/t_l.sh", "//r/t_x.sh"}).ok());
  auto add = [&](const char* test, const std::string& path, DepKind kind) {
    ASSERT_TRUE(b.AddTestDependency(*b.FindTest(std::string("//r/") + test), path, kind).ok());
  };
  add("t_w.sh", "out/state", DepKind::kContent);  // the writer reads it too
  add("t_r.sh", "out/state", DepKind::kContent);
  add("t_a.sh", "out/state", DepKind::kAbsent);
  add("t_l.sh", "out", DepKind::kListing);
  add("t_x.sh", "out/other", DepKind::kContent);
  add("t_x.sh", "top", DepKind::kContent);
  absl::StatusOr<std::string> image = b.Finish();
  ASSERT_TRUE(image.ok());
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(*image);
  ASSERT_TRUE(index.ok());
  absl::StatusOr<std::vector<Hazard>> h = FindHazards(**index, {{"t_w.sh", {"out/state"}}, {"t_r.sh", {"top"}}});
  ASSERT_TRUE(h.ok()) << h.status();
  std::vector<std::string> got;
  for (const Hazard& x : *h) got.push_back(x.writer + " " + x.path + " " + x.reader + " " + std::string(DepKindName(x.kind)));
  EXPECT_EQ(got, (std::vector<std::string>{"t_r.sh top t_x.sh content", "t_w.sh out/state t_a.sh absent",
                                           "t_w.sh out/state t_l.sh listing", "t_w.sh out/state t_r.sh content"}));
}

TEST(FindHazards, ALimitKeepsTheFirstFoundAndCountsThemAll) {
  SelectionIndexBuilder b;
  std::vector<std::string> scopes;
  for (int i = 0; i < 50; i++) scopes.push_back("//r/t" + std::to_string(100 + i) + ".sh");
  ASSERT_TRUE(b.AddTests(scopes).ok());
  // Every test reads the shared file, the writer (t100) too.
  ASSERT_TRUE(b.AddScopeDependency("//r", "shared.cfg", DepKind::kContent).ok());
  absl::StatusOr<std::string> image = b.Finish();
  ASSERT_TRUE(image.ok());
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(*image);
  ASSERT_TRUE(index.ok());
  const std::map<std::string, std::vector<std::string>> writes = {{"t100.sh", {"shared.cfg"}}};
  size_t total = 0;
  absl::StatusOr<std::vector<Hazard>> few = FindHazards(**index, writes, 3, &total);
  ASSERT_TRUE(few.ok()) << few.status();
  EXPECT_EQ(total, 49u);  // every reader but the writer
  ASSERT_EQ(few->size(), 3u);
  EXPECT_EQ((*few)[0].reader, "t101.sh");
  EXPECT_EQ((*few)[2].reader, "t103.sh");
  absl::StatusOr<std::vector<Hazard>> all = FindHazards(**index, writes, SIZE_MAX, &total);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 49u);
  EXPECT_EQ(total, 49u);
}

TEST(HazardGroups, EachPairRunsAsRecordedOnOneWorkerAndAFileEveryoneReadsIsLeftOut) {
  const std::vector<std::string> tests = {"t_a", "t_b", "t_c", "t_d", "t_e", "t_f", "t_g", "t_h", "t_i"};
  std::vector<Hazard> hazards = {
      // t_c wrote what t_a read (so t_a ran after it), and what t_b looked
      // for and did not find (so t_b ran before it).
      {"t_c", "out/x", "t_a", DepKind::kContent},
      {"t_c", "out/x", "t_b", DepKind::kAbsent},
      // A pair of its own.
      {"t_e", "out/y", "t_d", DepKind::kListing},
      // A reader outside the build, and a writer reading its own file.
      {"t_f", "out/z", "t_gone", DepKind::kContent},
      {"t_f", "out/z", "t_f", DepKind::kContent},
  };
  // t_g wrote what three others read: more than max_readers 2.
  for (const char* r : {"t_h", "t_i", "t_a"}) hazards.push_back({"t_g", "shared", r, DepKind::kContent});
  std::vector<std::vector<std::string>> groups = HazardGroups(hazards, tests, 2, 32);
  EXPECT_EQ(groups, (std::vector<std::vector<std::string>>{{"t_b", "t_c", "t_a"}, {"t_e", "t_d"}}));
  // A group past max_group is not made.
  groups = HazardGroups(hazards, tests, 2, 2);
  EXPECT_EQ(groups, (std::vector<std::vector<std::string>>{{"t_e", "t_d"}}));
  // A cycle keeps its tests together, in the build's order.
  groups = HazardGroups({{"t_a", "p", "t_b", DepKind::kContent}, {"t_b", "q", "t_a", DepKind::kContent}}, tests);
  EXPECT_EQ(groups, (std::vector<std::vector<std::string>>{{"t_a", "t_b"}}));
}

}  // namespace
}  // namespace ste
