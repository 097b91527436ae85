// FindHazards (hazards.h) on an index built in memory.
#include "ste/hazards.h"

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

}  // namespace
}  // namespace ste
