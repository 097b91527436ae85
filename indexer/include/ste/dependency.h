// Copyright: the ste authors. The small shared vocabulary of dependencies.
//
// A dependency key is (path, kind). The path is a byte string: repo-relative
// inside the repository, absolute outside it. It may hold any byte (spaces,
// newlines, non-UTF-8 sequences); nothing here assumes text. The kind says
// which change to that path affects the tests that recorded it (see
// docs/concepts.md, "Dependency kinds").
#ifndef STE_DEPENDENCY_H_
#define STE_DEPENDENCY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace ste {

// The numeric values are part of on-disk formats (selection index, wire
// protocol): never renumber, only append.
enum class DepKind : uint8_t {
  kContent = 1,  // read/executed/stat'ed: affected when it changes or goes.
  kAbsent = 2,   // looked up and not found: affected when it comes to exist.
  kListing = 3,  // directory enumerated: affected when an entry comes or goes.
};

inline constexpr int kDepKindCount = 3;

// "content", "absent" or "listing"; "unknown" for a value outside the enum
// (only possible through a cast).
std::string_view DepKindName(DepKind kind);

// The inverse of DepKindName; nullopt for anything else (case-sensitive).
std::optional<DepKind> ParseDepKind(std::string_view name);

// True iff `raw` is the value of a DepKind enumerator.
constexpr bool IsValidDepKind(uint8_t raw) { return raw >= 1 && raw <= 3; }

// A dependency key. Ordered by path bytes (unsigned, memcmp order), then
// kind: the order of the selection index's key table.
struct DepKey {
  std::string path;
  DepKind kind = DepKind::kContent;

  friend bool operator==(const DepKey& a, const DepKey& b) {
    return a.kind == b.kind && a.path == b.path;
  }
  friend bool operator!=(const DepKey& a, const DepKey& b) { return !(a == b); }
  friend bool operator<(const DepKey& a, const DepKey& b) {
    // std::string compares with char_traits<char>::compare, which is
    // memcmp order (unsigned bytes) for std::string.
    int c = a.path.compare(b.path);
    if (c != 0) return c < 0;
    return a.kind < b.kind;
  }
  friend bool operator>(const DepKey& a, const DepKey& b) { return b < a; }
  friend bool operator<=(const DepKey& a, const DepKey& b) { return !(b < a); }
  friend bool operator>=(const DepKey& a, const DepKey& b) { return !(a < b); }

  template <typename H>
  friend H AbslHashValue(H h, const DepKey& key) {
    return H::combine(std::move(h), key.path, static_cast<uint8_t>(key.kind));
  }
};

// "content:lib/foo.rb" — for messages and logs, not for parsing (the path
// is not escaped).
std::string DepKeyDebugString(const DepKey& key);

}  // namespace ste

#endif  // STE_DEPENDENCY_H_
