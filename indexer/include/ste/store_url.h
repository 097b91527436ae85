// `[store] url` (and `--store`), parsed once: which back-end, and for
// SQLite which file. The one place the schemes are known; the config
// checks a url with it when ste.toml is read, and the store opens by it.
//
//   sqlite:PATH              a SQLite database; PATH relative to the
//                            repository root unless absolute
//   postgresql://... or      a PostgreSQL server (a libpq connection URI,
//   postgres://...           passed to libpq as written)
#ifndef STE_STORE_URL_H_
#define STE_STORE_URL_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ste {

struct StoreUrl {
  enum class Scheme { kSqlite, kPostgres };

  Scheme scheme = Scheme::kSqlite;
  std::string text;         // the url as written
  std::string sqlite_path;  // kSqlite: PATH as written (not empty)

  // InvalidArgument, saying what to write instead, for an unknown scheme,
  // "sqlite:" without a path, or "postgresql:" without "//".
  static absl::StatusOr<StoreUrl> Parse(std::string_view url);

  // kSqlite: the database file, PATH under `root` unless absolute (or
  // `root` is empty); "" for PostgreSQL.
  std::string SqliteFile(std::string_view root) const;
};

}  // namespace ste

#endif  // STE_STORE_URL_H_
