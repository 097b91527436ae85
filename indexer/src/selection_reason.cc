// The words of a SelectionReason (selection.h): what json, text, the
// GitHub summary and the wire say of it, and the way back from them.
#include "absl/strings/str_cat.h"
#include "ste/selection.h"

namespace ste {

std::string_view ReasonKindWord(const SelectionReason& r) {
  return r.rule ? std::string_view() : DepKindName(r.kind);
}

std::string_view ReasonChangeWord(const SelectionReason& r) {
  if (r.rule) {
    switch (*r.rule) {
      case SelectionRule::kNewTest: return "new test";
      case SelectionRule::kFailedInBaseline: return "failed in baseline";
      case SelectionRule::kMandatory: return "mandatory";
      case SelectionRule::kOpaque: return "opaque: it ran something ste could not trace";
    }
    return "unknown rule";
  }
  if (r.kind == DepKind::kListing && r.change == ChangeKind::kModified) return "changed";
  return ChangeKindName(r.change);
}

absl::StatusOr<SelectionReason> ReasonFromWords(std::string path, std::string_view kind,
                                                std::string_view change) {
  if (kind.empty()) {
    for (SelectionRule rule : kSelectionRules) {
      SelectionReason r = SelectionReason::Rule(rule);
      if (path.empty() && ReasonChangeWord(r) == change) return r;
    }
    return absl::InvalidArgumentError(absl::StrCat("an unknown selection rule '",
                                                   std::string(change), "'"));
  }
  std::optional<DepKind> k = ParseDepKind(kind);
  if (k) {
    for (ChangeKind c : {ChangeKind::kModified, ChangeKind::kAdded, ChangeKind::kDeleted}) {
      SelectionReason r = SelectionReason::Dependency(path, *k, c);
      if (ReasonChangeWord(r) == change) return r;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("an unknown selection reason '", std::string(kind),
                                                 " ", std::string(change), "' for ", path));
}

}  // namespace ste
