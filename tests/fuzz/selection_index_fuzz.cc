// Copyright: the ste authors. Fuzz target: a selection index image
// (ste/selection_index.h) opened with SelectionIndex::FromBytes, as a
// select opens a baseline's index blob, then queried the ways select,
// `ste why` and `ste deps` do. Opening validates the tables; the bitmaps
// are verified by the queries that read them.
//
// Properties: the tables an opened index exposes are in order (the binary
// searches depend on it); a key found by position is found by Lookup.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checksum_repair.h"
#include "fuzz_check.h"
#include "ste/selection_index.h"

namespace {

void Read(std::string_view input) {
  const char* data = input.data();
  const size_t size = input.size();
  std::string bytes(data, size);
  absl::StatusOr<std::unique_ptr<ste::SelectionIndex>> opened =
      ste::SelectionIndex::FromBytes(std::move(bytes));
  if (!opened.ok()) return;
  const ste::SelectionIndex& index = **opened;
  for (uint32_t id = 0; id < index.test_count(); ++id) {
    std::string_view scope = index.test_scope(id);
    STE_FUZZ_CHECK(index.FindTest(scope) == id);
    std::pair<uint32_t, uint32_t> under = index.TestsUnder(scope);
    STE_FUZZ_CHECK(under.first <= id && id < under.second);
    (void)index.opaque(id);
    if (id < 4) (void)index.DependenciesOf(id);
  }
  (void)index.OpaqueTests();
  std::vector<ste::DepKey> keys;
  for (size_t i = 0; i < index.key_count(); ++i) {
    absl::StatusOr<ste::DepKey> key_at = index.KeyAt(i);
    absl::StatusOr<Roaring> at = index.BitmapAt(i);
    STE_FUZZ_CHECK(key_at.ok() || !at.ok());
    if (!key_at.ok()) continue;
    const ste::DepKey& key = *key_at;
    absl::StatusOr<Roaring> found = index.Lookup(key);
    STE_FUZZ_CHECK(at.ok() == found.ok());
    if (at.ok()) STE_FUZZ_CHECK(*at == *found);
    if (keys.size() < 16) keys.push_back(key);
    if (i < 4) {
      (void)index.KeysMatchingPath(key.path);
      (void)index.ViewsOf(key.path);
    }
  }
  for (std::string_view p : index.OutsideAndViewPaths()) STE_FUZZ_CHECK(!p.empty());
  const bool all_sound = index.VerifyAll().ok();
  if (all_sound) STE_FUZZ_CHECK(index.DumpJson().ok());
  (void)index.Union(keys);
  (void)index.Lookup("src/a.py", ste::DepKind::kContent);
  (void)index.DumpJson();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Exactly sized copies, so that ASan sees a read one byte past the end.
  const std::vector<char> raw(data, data + size);
  Read(std::string_view(raw.data(), raw.size()));
  std::vector<char> repaired = raw;
  ste::fuzz::RepairIndex(repaired.data(), repaired.size());
  if (repaired != raw) Read(std::string_view(repaired.data(), repaired.size()));
  return 0;
}
