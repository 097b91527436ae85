// Copyright: the ste authors. Fuzz target: an inventory image
// (ste/inventory.h, the binary format) read by Inventory::Parse, as a
// select reads a baseline's inventory from a store or a blob cache.
//
// Properties: an image Parse accepts serializes to one it accepts again,
// with the same entries; and diffing it with itself gives no change.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checksum_repair.h"
#include "fuzz_check.h"
#include "ste/inventory.h"

namespace {

void Read(std::string_view input) {
  const char* data = input.data();
  const size_t size = input.size();
  std::string_view bytes(data, size);
  absl::StatusOr<ste::Inventory> inv = ste::Inventory::Parse(bytes);
  if (!inv.ok()) return;
  absl::StatusOr<ste::Inventory> again = ste::Inventory::Parse(inv->Serialize());
  STE_FUZZ_CHECK(again.ok());
  STE_FUZZ_CHECK(again->taken_at_ns() == inv->taken_at_ns());
  STE_FUZZ_CHECK(again->entries() == inv->entries());
  STE_FUZZ_CHECK(ste::Inventory::Diff(*inv, *again).changes.empty());
  for (const ste::InventoryEntry& e : *inv) {
    STE_FUZZ_CHECK(inv->Find(e.path) != nullptr);
  }
  (void)inv->ToJsonLines();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Exactly sized copies, so that ASan sees a read one byte past the end.
  const std::vector<char> raw(data, data + size);
  Read(std::string_view(raw.data(), raw.size()));
  std::vector<char> repaired = raw;
  ste::fuzz::RepairInventory(repaired.data(), repaired.size());
  if (repaired != raw) Read(std::string_view(repaired.data(), repaired.size()));
  return 0;
}
