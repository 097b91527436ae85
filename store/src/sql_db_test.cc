// Copyright: the ste authors. The SQL seam (sql_db.h): SQLite's spelling
// of the statements written once, and typed values through the SQLite
// adapter on a real database file. (The PostgreSQL adapter runs under
// the whole contract suite: store_contract_test.cc.)
#include "sql_db.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "postgres_store.h"
#include "relational_store.h"
#include "sqlite_db.h"
#include "sqlite_store.h"
#include "store_test_util.h"

namespace ste {
namespace {

TEST(SqliteSpellingTest, NumbersParametersAndDropsTheSchema) {
  EXPECT_EQ(SqliteSpelling("SELECT state FROM ste.baselines WHERE id = $1 AND mri <= $12"),
            "SELECT state FROM baselines WHERE id = ?1 AND mri <= ?12");
  EXPECT_EQ(SqliteSpelling("DELETE FROM ste.blobs b JOIN ste.results r"),
            "DELETE FROM blobs b JOIN results r");
}

TEST(SqliteSpellingTest, LeavesQuotedTextAndOtherNamesAlone) {
  EXPECT_EQ(SqliteSpelling("SELECT 'ste.x $1', paste.y FROM t WHERE a = $2"),
            "SELECT 'ste.x $1', paste.y FROM t WHERE a = ?2");
  EXPECT_EQ(SqliteSpelling("SELECT '$' || $1"), "SELECT '$' || ?1");
}

TEST(SqliteSpellingTest, TheLatestCompletedStatementIsTheOneEachBackEndChecks) {
  EXPECT_STREQ(kLatestCompletedStatement, kPostgresLatestCompletedSql);
  EXPECT_EQ(SqliteSpelling(kLatestCompletedStatement), kLatestCompletedSql);
}

TEST(SqliteSqlDbTest, TypedValuesRoundTripAndStatementsAreReused) {
  ScopedTempDir dir;
  absl::StatusOr<std::unique_ptr<SqliteDb>> raw = SqliteDb::Open(dir.path() + "/t.db", 1000);
  ASSERT_TRUE(raw.ok()) << raw.status();
  std::unique_ptr<SqlDb> db = SqlDbOverSqlite(std::move(*raw));
  ASSERT_TRUE(db->Exec("CREATE TABLE t(i INTEGER, d REAL, b INTEGER, s TEXT, x BLOB)").ok());
  const std::string bytes("a\0b", 3);
  for (int i = 0; i < 2; ++i) {  // the second time through the prepared statement
    absl::StatusOr<SqlTransaction> txn = db->Begin(TxnKind::kWrite);
    ASSERT_TRUE(txn.ok()) << txn.status();
    ASSERT_TRUE(db->Exec("INSERT INTO ste.t VALUES ($1, $2, $3, $4, $5)",
                         SqlParams().Int(int64_t{1} << 40).Double(0.1).Bool(true).Text("é").Bytes(
                             bytes))
                    .ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  absl::StatusOr<std::unique_ptr<SqlRows>> rows =
      db->Query("SELECT i, d, b, s, x FROM t WHERE i = $1", SqlParams().Int(int64_t{1} << 40));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ((*rows)->size(), 2);
  EXPECT_EQ((*rows)->Int(1, 0), int64_t{1} << 40);
  EXPECT_EQ((*rows)->Double(1, 1), 0.1);
  EXPECT_TRUE((*rows)->Bool(1, 2));
  EXPECT_EQ((*rows)->Text(1, 3), "é");
  EXPECT_EQ((*rows)->Bytes(1, 4), bytes);
  EXPECT_TRUE((*rows)->ParseStatus().ok());
  // A failed statement leaves nothing open: a write transaction follows.
  EXPECT_FALSE(db->Query("SELECT nope FROM t").ok());
  absl::StatusOr<SqlTransaction> snapshot = db->Begin(TxnKind::kSnapshot);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_TRUE(snapshot->Commit().ok());
  absl::StatusOr<SqlTransaction> write = db->Begin(TxnKind::kWrite);
  EXPECT_TRUE(write.ok()) << write.status();
}

}  // namespace
}  // namespace ste
