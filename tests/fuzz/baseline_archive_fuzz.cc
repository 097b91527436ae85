// Copyright: the ste authors. Fuzz target: a baseline export
// (ste/baseline_archive.h) decoded by DecodeBaselineArchive, what
// `ste baseline import` reads from a file anyone could have handed over.
//
// Property: an archive the decoder accepts verifies, and encodes to bytes
// that decode to the same baseline (an import never takes what an export
// would refuse to write).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "checksum_repair.h"
#include "fuzz_check.h"
#include "ste/baseline_archive.h"

namespace {

void Read(std::string_view input) {
  const char* data = input.data();
  const size_t size = input.size();
  absl::string_view bytes(data, size);
  absl::StatusOr<ste::BaselineArchive> archive = ste::DecodeBaselineArchive(bytes, "fuzz.stebase");
  if (!archive.ok()) return;
  STE_FUZZ_CHECK(ste::VerifyBaselineArchive(*archive).ok());
  absl::StatusOr<std::string> encoded = ste::EncodeBaselineArchive(*archive);
  STE_FUZZ_CHECK(encoded.ok());
  absl::StatusOr<ste::BaselineArchive> again = ste::DecodeBaselineArchive(*encoded, "again");
  STE_FUZZ_CHECK(again.ok());
  STE_FUZZ_CHECK(again->commit == archive->commit && again->mri == archive->mri);
  STE_FUZZ_CHECK(again->index == archive->index && again->inventory == archive->inventory);
  STE_FUZZ_CHECK(again->results.size() == archive->results.size());
  STE_FUZZ_CHECK(again->blobs == archive->blobs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Exactly sized copies, so that ASan sees a read one byte past the end.
  const std::vector<char> raw(data, data + size);
  Read(std::string_view(raw.data(), raw.size()));
  std::vector<char> repaired = raw;
  ste::fuzz::RepairBaselineArchive(repaired.data(), repaired.size());
  if (repaired != raw) Read(std::string_view(repaired.data(), repaired.size()));
  return 0;
}
