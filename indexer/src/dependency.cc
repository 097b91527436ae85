// Copyright: the ste authors.
#include "ste/dependency.h"

#include "absl/strings/str_cat.h"

namespace ste {

std::string_view DepKindName(DepKind kind) {
  switch (kind) {
    case DepKind::kContent:
      return "content";
    case DepKind::kAbsent:
      return "absent";
    case DepKind::kListing:
      return "listing";
  }
  return "unknown";
}

std::optional<DepKind> ParseDepKind(std::string_view name) {
  if (name == "content") return DepKind::kContent;
  if (name == "absent") return DepKind::kAbsent;
  if (name == "listing") return DepKind::kListing;
  return std::nullopt;
}

std::string DepKeyDebugString(const DepKey& key) {
  const std::string_view name = DepKindName(key.kind);
  return absl::StrCat(absl::string_view(name.data(), name.size()), ":",
                      key.path);
}

}  // namespace ste
