// Fixed-width little-endian integers for ste's on-disk formats (inventory,
// selection index), whatever the host's byte order. memcpy compiles to one
// load or store on x86-64 and AArch64. Internal to indexer/.
#ifndef STE_INDEXER_LITTLE_ENDIAN_H_
#define STE_INDEXER_LITTLE_ENDIAN_H_

#include <cstdint>
#include <cstring>

namespace ste {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline uint32_t ToLittle32(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t ToLittle64(uint64_t v) { return __builtin_bswap64(v); }
#else
inline uint32_t ToLittle32(uint32_t v) { return v; }
inline uint64_t ToLittle64(uint64_t v) { return v; }
#endif

inline void EncodeU32(char* p, uint32_t v) {
  v = ToLittle32(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void EncodeU64(char* p, uint64_t v) {
  v = ToLittle64(v);
  std::memcpy(p, &v, sizeof(v));
}
inline uint32_t DecodeU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return ToLittle32(v);
}
inline uint64_t DecodeU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return ToLittle64(v);
}

}  // namespace ste

#endif  // STE_INDEXER_LITTLE_ENDIAN_H_
