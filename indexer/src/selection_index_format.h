// Copyright: the ste authors. Internal: the byte layout of the selection
// index (documented in ste/selection_index.h) shared by the builder and the
// reader.
#ifndef STE_INDEXER_SRC_SELECTION_INDEX_FORMAT_H_
#define STE_INDEXER_SRC_SELECTION_INDEX_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include "ste/little_endian.h"

namespace ste {
namespace index_format {

inline constexpr char kMagic[8] = {'S', 'T', 'E', 'I', 'D', 'X', '\0', '\1'};
// Version 2 is written; version 1 is still read (and written on request,
// SelectionIndexBuilder::Options::format_version, for tests and benches).
inline constexpr uint32_t kVersion = 2;
inline constexpr uint32_t kVersion1 = 1;
inline constexpr uint32_t kHeaderSize = 96;     // version 1
inline constexpr uint32_t kHeaderSizeV2 = 128;  // version 2
inline constexpr uint64_t kTestEntrySize = 16;
inline constexpr uint64_t kKeyEntrySize = 40;
inline constexpr uint64_t kBitmapAlign = 8;
inline constexpr uint32_t kTestFlagOpaque = 1u << 0;
inline constexpr uint32_t kKnownTestFlags = kTestFlagOpaque;
// Header flag: the file ends with the case section and its footer.
inline constexpr uint64_t kFlagCases = 1u << 0;
inline constexpr uint64_t kCaseFooterSize = 16;
inline constexpr uint64_t kCaseEntrySize = 16;
inline constexpr uint64_t kOwnEntrySize = 8;

// Version 2: keys per key block (the writer's choice; a reader takes any
// count from 1 to kMaxKeysPerBlock), and the fence entry.
inline constexpr uint32_t kKeysPerBlock = 64;
inline constexpr uint32_t kMaxKeysPerBlock = 1u << 16;
inline constexpr uint64_t kFenceEntrySize = 40;

// Header field offsets (version 1; version 2 shares 0..56).
inline constexpr size_t kOffMagic = 0;
inline constexpr size_t kOffVersion = 8;
inline constexpr size_t kOffHeaderSize = 12;
inline constexpr size_t kOffFlags = 16;
inline constexpr size_t kOffNTests = 24;
inline constexpr size_t kOffNKeys = 32;
inline constexpr size_t kOffBitmapsOffset = 40;
inline constexpr size_t kOffBitmapsSize = 48;
inline constexpr size_t kOffTestTableOffset = 56;
inline constexpr size_t kOffKeyTableOffset = 64;
inline constexpr size_t kOffStringsOffset = 72;
inline constexpr size_t kOffFileSize = 80;
inline constexpr size_t kOffChecksum = 88;

// Version 2 header field offsets, past the fields it shares with version 1
// (magic .. bitmaps_size).
inline constexpr size_t kOff2KeyBlocksOffset = 56;
inline constexpr size_t kOff2KeysPerBlock = 64;
inline constexpr size_t kOff2Reserved = 68;
inline constexpr size_t kOff2TestTableOffset = 72;
inline constexpr size_t kOff2ScopesOffset = 80;
inline constexpr size_t kOff2FencesOffset = 88;
inline constexpr size_t kOff2OutsidePathsOffset = 96;
inline constexpr size_t kOff2Reserved2 = 104;
inline constexpr size_t kOff2FileSize = 112;
inline constexpr size_t kOff2Checksum = 120;

// Version 2 fence entry field offsets.
inline constexpr size_t kFenceBlockOffset = 0;
inline constexpr size_t kFenceBlockSize = 8;
inline constexpr size_t kFenceBlockChecksum = 16;
inline constexpr size_t kFencePathOffset = 24;
inline constexpr size_t kFencePathSize = 32;
inline constexpr size_t kFenceKind = 36;
inline constexpr size_t kFenceReserved = 37;

// Test entry field offsets.
inline constexpr size_t kTestScopeOffset = 0;
inline constexpr size_t kTestScopeSize = 8;
inline constexpr size_t kTestFlags = 12;

// Key entry field offsets.
inline constexpr size_t kKeyPathOffset = 0;
inline constexpr size_t kKeyPathSize = 8;
inline constexpr size_t kKeyKind = 12;
inline constexpr size_t kKeyReserved = 13;
inline constexpr size_t kKeyBitmapOffset = 16;
inline constexpr size_t kKeyBitmapSize = 24;
inline constexpr size_t kKeyBitmapChecksum = 32;

// The shared little-endian codecs (little_endian.h), under this format's names.
using ::ste::DecodeU32;
using ::ste::DecodeU64;
using ::ste::EncodeU32;
using ::ste::EncodeU64;

inline uint64_t AlignUp(uint64_t v) {
  return (v + kBitmapAlign - 1) & ~(kBitmapAlign - 1);
}

// The header checksum: XXH3_64bits_withSeed(tables, seed = XXH3_64bits(
// header[0, checksum_offset))). `tables` is file[test_table_offset,
// file_size); checksum_offset is kOffChecksum (version 1) or kOff2Checksum.
uint64_t HeaderChecksum(const char* header, const char* tables,
                        size_t tables_size, size_t checksum_offset = kOffChecksum);

// True iff the outside and view paths section holds `path`: absolute
// (outside the repository) or a view (inventory.h, "Views").
bool IsOutsideOrViewPath(std::string_view path);

// XXH3-64 of one serialized bitmap; version 2 checks each key block by the same.
uint64_t BitmapChecksum(const char* data, size_t size);

}  // namespace index_format
}  // namespace ste

#endif  // STE_INDEXER_SRC_SELECTION_INDEX_FORMAT_H_
