// Copyright: the ste authors. Puts right the checksums of a mutated image,
// so that a fuzz target reaches the checks behind them: a random change
// to a checksummed file is almost always caught by its checksum, and the
// reader's other checks (ranges, orders, sizes) would never be fuzzed.
// Each target runs the input as it is AND repaired.
//
// Each function follows the format its reader documents (cited), recomputes
// what it can locate, and leaves the rest: a repair never makes an image
// longer or shorter, and knows nothing the reader does not check anyway.
#ifndef STE_TESTS_FUZZ_CHECKSUM_REPAIR_H_
#define STE_TESTS_FUZZ_CHECKSUM_REPAIR_H_

#include <xxhash.h>

#include <cstdint>
#include <cstddef>
#include <cstring>
#include <string>

#include "ste/log_format.h"

namespace ste::fuzz {

inline uint64_t GetU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts only (x86-64, AArch64)
}
inline uint32_t GetU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void PutU64(char* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void PutU16(char* p, uint16_t v) { std::memcpy(p, &v, 2); }

// start + size <= limit, without overflow.
inline bool Within(uint64_t start, uint64_t size, uint64_t limit) {
  return start <= limit && size <= limit - start;
}

// ste/inventory.h, "On-disk format": the last 8 bytes are XXH3_64bits of
// every byte before them.
inline void RepairInventory(char* p, size_t n) {
  if (n < 56) return;
  PutU64(p + n - 8, XXH3_64bits(p, n - 8));
}

// ste/selection_index.h, "File format, version 1": each key's bitmap
// checksum, the file size, then the header checksum over the header and
// the tables. Version 2: each key's bitmap checksum, each key block's
// checksum (its fence), the file size, the header checksum.
inline void RepairIndex(char* p, size_t n) {
  if (n < 96) return;
  const uint64_t n_keys = GetU64(p + 32);
  if (GetU32(p + 8) == 2) {
    if (n < 128) return;
    PutU64(p + 112, n);  // file_size
    const uint64_t kpb = GetU32(p + 64);
    const uint64_t fences = GetU64(p + 88);
    if (kpb == 0 || fences > n) return;
    const uint64_t n_blocks = n_keys / kpb + (n_keys % kpb != 0);
    if (n_blocks > (n - fences) / 40) return;
    for (uint64_t j = 0; j < n_blocks; ++j) {
      char* f = p + fences + 40 * j;
      const uint64_t at = GetU64(f), size = GetU64(f + 8);
      if (!Within(at, size, n)) continue;
      const uint64_t keys = n_keys - j * kpb < kpb ? n_keys - j * kpb : kpb;
      for (uint64_t k = 0; k < keys && 40 * (k + 1) <= size; ++k) {
        char* e = p + at + 40 * k;
        const uint64_t off = GetU64(e + 16), bitmap_size = GetU64(e + 24);
        if (Within(off, bitmap_size, n)) PutU64(e + 32, XXH3_64bits(p + off, bitmap_size));
      }
      PutU64(f + 16, XXH3_64bits(p + at, size));
    }
    const uint64_t tables = GetU64(p + 72);
    if (tables < 128 || tables > n) return;
    PutU64(p + 120, XXH3_64bits_withSeed(p + tables, n - tables, XXH3_64bits(p, 120)));
    return;
  }
  PutU64(p + 80, n);  // file_size
  const uint64_t key_table = GetU64(p + 64);
  if (key_table <= n && n_keys <= (n - key_table) / 40) {
    for (uint64_t k = 0; k < n_keys; ++k) {
      char* e = p + key_table + 40 * k;
      const uint64_t off = GetU64(e + 16), size = GetU64(e + 24);
      if (Within(off, size, n)) PutU64(e + 32, XXH3_64bits(p + off, size));
    }
  }
  const uint64_t tables = GetU64(p + 56);
  if (tables < 96 || tables > n) return;
  PutU64(p + 88, XXH3_64bits_withSeed(p + tables, n - tables, XXH3_64bits(p, 88)));
}

// ste/baseline_archive.h, "File format": the embedded index and inventory,
// each section's checksum, the table checksum, the file checksum.
inline void RepairBaselineArchive(char* p, size_t n) {
  if (n < 64 + 16) return;
  PutU64(p + 32, n);  // file_size
  const uint32_t count = GetU32(p + 24);
  if (count > 16 || 64 + 32ull * count > n) return;
  for (uint32_t s = 0; s < count; ++s) {
    char* e = p + 64 + 32 * s;
    const uint32_t kind = GetU32(e);
    const uint64_t off = GetU64(e + 8), size = GetU64(e + 16);
    if (!Within(off, size, n)) continue;
    if (kind == 2) RepairIndex(p + off, size);
    if (kind == 3) RepairInventory(p + off, size);
    PutU64(e + 24, XXH3_64bits(p + off, size));
  }
  std::string table(p, 56);
  table.append(p + 64, 32 * count);
  PutU64(p + 56, XXH3_64bits(table.data(), table.size()));
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(p, n - 16));
  std::memcpy(p + n - 16, &c, 16);
}

// ste/log_format.h: walks the records as the writer lays them out (from
// the header, each `size` bytes) and sets each one's check.
inline void RepairLog(char* p, size_t n) {
  uint64_t off = STE_LOG_HEADER_SIZE;
  while (Within(off, STE_LOG_RECORD_HEADER_SIZE, n)) {
    SteRecordHeader rec;
    std::memcpy(&rec, p + off, sizeof rec);
    if (rec.size < STE_LOG_RECORD_HEADER_SIZE || rec.size % 8 != 0 ||
        !Within(off, rec.size, n)) {
      return;
    }
    if (rec.path_len < rec.size - STE_LOG_RECORD_HEADER_SIZE) {
      const uint16_t check = ste_log_check(rec.kind, rec.op, rec.scope_id,
                                           p + off + STE_LOG_RECORD_HEADER_SIZE, rec.path_len);
      PutU16(p + off + offsetof(SteRecordHeader, check), check);
    }
    off += rec.size;
  }
}

}  // namespace ste::fuzz

#endif  // STE_TESTS_FUZZ_CHECKSUM_REPAIR_H_
