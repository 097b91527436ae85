#include "ste/store_url.h"

#include "absl/strings/str_cat.h"

namespace ste {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

absl::StatusOr<StoreUrl> StoreUrl::Parse(std::string_view url) {
  StoreUrl out;
  out.text = std::string(url);
  const std::string_view sqlite = "sqlite:";
  if (StartsWith(url, sqlite)) {
    if (url.size() == sqlite.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("store url \"", out.text, "\" names no file (write sqlite:PATH)"));
    }
    out.sqlite_path = std::string(url.substr(sqlite.size()));
    return out;
  }
  if (StartsWith(url, "postgresql://") || StartsWith(url, "postgres://")) {
    out.scheme = Scheme::kPostgres;
    return out;
  }
  if (StartsWith(url, "postgresql:") || StartsWith(url, "postgres:")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store url \"", out.text, "\" is not a PostgreSQL connection URI: write postgresql://..."));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "store url \"", out.text, "\" has an unknown scheme; use sqlite:PATH or postgresql://..."));
}

std::string StoreUrl::SqliteFile(std::string_view root) const {
  if (scheme != Scheme::kSqlite) return "";
  if (sqlite_path[0] == '/' || root.empty()) return sqlite_path;
  return absl::StrCat(std::string(root), "/", sqlite_path);
}

}  // namespace ste
