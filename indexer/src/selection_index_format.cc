// Copyright: the ste authors. Scope order and checksums of the selection
// index (format: ste/selection_index.h).
#include "selection_index_format.h"

#include <xxhash.h>

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ste/inventory.h"
#include "ste/selection_index.h"

namespace ste {

absl::Status ValidateScope(std::string_view scope) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid scope \"",
        absl::CHexEscape(absl::string_view(scope.data(), scope.size())),
        "\": ", absl::string_view(why.data(), why.size())));
  };
  if (scope.size() < 3 || scope[0] != '/' || scope[1] != '/') {
    return invalid("must start with \"//\" and a name");
  }
  // An empty name shows as "//" after the start, or a trailing '/'.
  if (scope[2] == '/' || scope.back() == '/' ||
      scope.find("//", 2) != std::string_view::npos) {
    return invalid("empty name");
  }
  if (scope.find('\0') != std::string_view::npos) {
    return invalid("NUL byte");
  }
  return absl::OkStatus();
}

int CompareScopes(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  // memcmp finds the common prefix fast; only the first differing byte
  // needs the '/'-first rank.
  auto first_diff = std::mismatch(a.begin(), a.begin() + n, b.begin());
  if (first_diff.first == a.begin() + n) {
    return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
  }
  auto rank = [](char c) -> int {
    return c == '/' ? 0 : static_cast<int>(static_cast<unsigned char>(c)) + 1;
  };
  return rank(*first_diff.first) < rank(*first_diff.second) ? -1 : 1;
}

bool ScopeContains(std::string_view ancestor, std::string_view scope) {
  if (scope.size() < ancestor.size()) return false;
  if (scope.compare(0, ancestor.size(), ancestor) != 0) return false;
  return scope.size() == ancestor.size() || scope[ancestor.size()] == '/';
}

namespace index_format {

uint64_t HeaderChecksum(const char* header, const char* tables,
                        size_t tables_size, size_t checksum_offset) {
  const uint64_t seed = XXH3_64bits(header, checksum_offset);
  return XXH3_64bits_withSeed(tables, tables_size, seed);
}

bool IsOutsideOrViewPath(std::string_view path) {
  return !path.empty() && (path[0] == '/' || IsViewPath(path));
}

uint64_t BitmapChecksum(const char* data, size_t size) {
  return XXH3_64bits(data, size);
}

}  // namespace index_format
}  // namespace ste
