// Copyright: the ste authors. BaselineStore::Open: picks the
// implementation named by the URL's scheme.
#include "ste/baseline_store.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "postgres_store.h"
#include "sqlite_store.h"

namespace ste {

absl::StatusOr<std::unique_ptr<BaselineStore>> BaselineStore::Open(
    const std::string& url, const std::string& root) {
  absl::string_view u(url);
  if (absl::ConsumePrefix(&u, "sqlite:")) {
    if (u.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "store url \"", url, "\" names no file (write sqlite:PATH)"));
    }
    std::string path(u);
    if (path[0] != '/' && !root.empty()) path = absl::StrCat(root, "/", path);
    return OpenSqliteStore(path);
  }
  if (absl::StartsWith(u, "postgresql://") ||
      absl::StartsWith(u, "postgres://")) {
    return OpenPostgresStore(url, PostgresCacheDir(root));
  }
  if (absl::StartsWith(u, "postgresql:") || absl::StartsWith(u, "postgres:")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store url \"", url,
        "\" is not a PostgreSQL connection URI: write postgresql://..."));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("store url \"", url,
                   "\" has an unknown scheme; use sqlite:PATH or "
                   "postgresql://..."));
}

std::string_view TestOutcomeName(TestOutcome outcome) {
  switch (outcome) {
    case TestOutcome::kPassed:
      return "passed";
    case TestOutcome::kFailed:
      return "failed";
    case TestOutcome::kError:
      return "error";
  }
  return "unknown";
}

std::string_view BaselineStateName(BaselineState state) {
  switch (state) {
    case BaselineState::kBuilding:
      return "building";
    case BaselineState::kComplete:
      return "complete";
    case BaselineState::kFailed:
      return "failed";
  }
  return "unknown";
}

}  // namespace ste
