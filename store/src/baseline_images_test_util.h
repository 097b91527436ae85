// Copyright: the ste authors. Real selection index and inventory images for
// the tests of baseline files, retention and the loader (which read them
// with their own readers): built with SelectionIndexBuilder and
// Inventory::FromEntries, not written by hand.
#ifndef STE_SCHEDULER_BASELINE_IMAGES_TEST_UTIL_H_
#define STE_SCHEDULER_BASELINE_IMAGES_TEST_UTIL_H_

#include <xxhash.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/baseline_archive.h"
#include "ste/baseline_store.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"
#include "ste/test_recorder.h"

namespace ste {
namespace testing_util {

// An index of `tests` (repo-relative), test i depending on lib/<i>.sh and
// every test on `shared` (content).
inline std::string IndexImage(const std::vector<std::string>& tests,
                              const std::string& shared = "lib/common.sh") {
  SelectionIndexBuilder builder;
  std::vector<std::string> scopes;
  for (const std::string& t : tests) scopes.push_back(ScopeOfTest(t));
  EXPECT_TRUE(builder.AddTests(scopes).ok());
  for (const std::string& t : tests) {
    std::optional<uint32_t> id = builder.FindTest(ScopeOfTest(t));
    EXPECT_TRUE(id.has_value());
    EXPECT_TRUE(builder.AddTestDependency(*id, "lib/" + t + ".dep", DepKind::kContent).ok());
    EXPECT_TRUE(builder.AddTestDependency(*id, shared, DepKind::kContent).ok());
  }
  absl::StatusOr<std::string> image = builder.Finish();
  EXPECT_TRUE(image.ok()) << image.status();
  return image.ok() ? *image : "";
}

// An inventory of `paths` (regular files, hash of the path + `salt`).
inline std::string InventoryImage(const std::vector<std::string>& paths,
                                  const std::string& salt = "") {
  std::vector<InventoryEntry> entries;
  for (const std::string& p : paths) {
    InventoryEntry e;
    e.path = p;
    e.type = FileType::kRegular;
    e.mode = 0100644;
    e.size = p.size();
    const std::string content = p + salt;
    e.hash = XXH3_128bits(content.data(), content.size());
    entries.push_back(e);
  }
  absl::StatusOr<Inventory> inventory = Inventory::FromEntries(std::move(entries), 1700000000000000000);
  EXPECT_TRUE(inventory.ok()) << inventory.status();
  return inventory.ok() ? inventory->Serialize() : "";
}

// A complete archive of two tests (one failed), recorded at `commit`.
inline BaselineArchive SampleArchive(const std::string& commit = "0123456789abcdef0123456789abcdef01234567",
                                     int64_t mri = 12) {
  BaselineArchive a;
  a.origin_id = 4;
  a.commit = commit;
  a.mri = mri;
  a.created_unix = 1700000000;
  a.completed_unix = 1700000060;
  a.exported_unix = 1700000100;
  a.index = IndexImage({"tests/test_a.sh", "tests/test_b.sh"});
  a.inventory = InventoryImage({"lib/common.sh", "tests/test_a.sh", "tests/test_b.sh"}, commit);
  a.results = {{"tests/test_a.sh", TestOutcome::kPassed, 0, 0.125, false},
               {"tests/test_b.sh", TestOutcome::kFailed, 1, 2.5, true}};
  return a;
}

// Stores `a` through the life cycle (Begin, blobs, results, Complete).
inline int64_t StoreArchive(Store& store, const BaselineArchive& a) {
  absl::StatusOr<int64_t> id = store.Begin(a.commit, a.mri);
  EXPECT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(store.PutBlob(*id, "index", a.index).ok());
  EXPECT_TRUE(store.PutBlob(*id, "inventory", a.inventory).ok());
  EXPECT_TRUE(store.PutResults(*id, a.results).ok());
  absl::Status done = store.Complete(*id);
  EXPECT_TRUE(done.ok()) << done;
  return *id;
}

}  // namespace testing_util
}  // namespace ste

#endif  // STE_SCHEDULER_BASELINE_IMAGES_TEST_UTIL_H_
