// Fixed-width little-endian integers: the one codec of ste's on-disk
// formats (inventory, selection index, baseline archives, view values),
// whatever the host's byte order. memcpy compiles to one load or store on
// x86-64 and AArch64. (The interceptor's per-process logs are in the
// host's order by design: ste/log_format.h.)
#ifndef STE_LITTLE_ENDIAN_H_
#define STE_LITTLE_ENDIAN_H_

#include <cstdint>
#include <cstring>
#include <string>

namespace ste {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline uint16_t ToLittle16(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t ToLittle32(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t ToLittle64(uint64_t v) { return __builtin_bswap64(v); }
#else
inline uint16_t ToLittle16(uint16_t v) { return v; }
inline uint32_t ToLittle32(uint32_t v) { return v; }
inline uint64_t ToLittle64(uint64_t v) { return v; }
#endif

inline void EncodeU16(char* p, uint16_t v) {
  v = ToLittle16(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void EncodeU32(char* p, uint32_t v) {
  v = ToLittle32(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void EncodeU64(char* p, uint64_t v) {
  v = ToLittle64(v);
  std::memcpy(p, &v, sizeof(v));
}
inline uint16_t DecodeU16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return ToLittle16(v);
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

// Appended to *out.
inline void AppendU16(std::string* out, uint16_t v) {
  char b[2];
  EncodeU16(b, v);
  out->append(b, 2);
}
inline void AppendU32(std::string* out, uint32_t v) {
  char b[4];
  EncodeU32(b, v);
  out->append(b, 4);
}
inline void AppendU64(std::string* out, uint64_t v) {
  char b[8];
  EncodeU64(b, v);
  out->append(b, 8);
}

}  // namespace ste

#endif  // STE_LITTLE_ENDIAN_H_
