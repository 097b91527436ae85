#include "ste/store_url.h"

#include "gtest/gtest.h"

namespace ste {
namespace {

TEST(StoreUrl, EachSchemeParsedOnce) {
  absl::StatusOr<StoreUrl> s = StoreUrl::Parse("sqlite:.ste/ste.db");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->scheme, StoreUrl::Scheme::kSqlite);
  EXPECT_EQ(s->sqlite_path, ".ste/ste.db");
  EXPECT_EQ(s->SqliteFile("/repo"), "/repo/.ste/ste.db");
  EXPECT_EQ(s->SqliteFile(""), ".ste/ste.db");
  EXPECT_EQ(StoreUrl::Parse("sqlite:/var/ste.db")->SqliteFile("/repo"), "/var/ste.db");

  for (const char* pg : {"postgresql://u@h/db", "postgres://h/db?sslmode=require"}) {
    absl::StatusOr<StoreUrl> p = StoreUrl::Parse(pg);
    ASSERT_TRUE(p.ok()) << pg;
    EXPECT_EQ(p->scheme, StoreUrl::Scheme::kPostgres);
    EXPECT_EQ(p->text, pg);
    EXPECT_EQ(p->SqliteFile("/repo"), "");
  }
}

TEST(StoreUrl, AWrongUrlSaysWhatToWrite) {
  struct Row {
    const char* url;
    const char* says;
  };
  const Row rows[] = {
      {"sqlite:", "names no file (write sqlite:PATH)"},
      {"postgresql:db", "is not a PostgreSQL connection URI"},
      {"postgres:db", "is not a PostgreSQL connection URI"},
      {"mysql://h/db", "unknown scheme; use sqlite:PATH or postgresql://"},
      {"", "unknown scheme"},
      {".ste/ste.db", "unknown scheme"},
  };
  for (const Row& r : rows) {
    absl::StatusOr<StoreUrl> s = StoreUrl::Parse(r.url);
    ASSERT_FALSE(s.ok()) << r.url;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(r.says), std::string_view::npos) << s.status();
  }
}

}  // namespace
}  // namespace ste
