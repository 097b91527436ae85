#include "ste/log_reader.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/log_format.h"
#include "ste/log_writer.h"

namespace ste {
namespace {

std::vector<LogEntry> SampleEntries() {
  return {
      {"//r", RecordKind::kContent, STE_OP_LOADED, "/usr/lib/libc.so.6"},
      {"//r/tests/a.py", RecordKind::kContent, STE_OP_OPEN, "/repo/lib/a.py"},
      {"//r/tests/a.py", RecordKind::kAbsent, STE_OP_STAT, "/repo/lib/a_missing.py"},
      {"//r/tests/a.py", RecordKind::kListing, STE_OP_OPENDIR, "/repo/fixtures"},
      {"//r/tests/b.py", RecordKind::kWrite, STE_OP_OPEN, "/repo/out\nput \xff"},
      {"//r/tests/b.py", RecordKind::kUnfollowed, STE_OP_EXEC, "/usr/bin/static"},
  };
}

TEST(LogReader, ReadsBackEveryRecordInOrder) {
  std::string bytes = EncodeLog(42, 7, 123, SampleEntries());
  ProcessLog log;
  ASSERT_TRUE(ParseLog(bytes, "x.stelog", &log).ok());
  EXPECT_EQ(log.pid, 42u);
  EXPECT_EQ(log.ppid, 7u);
  EXPECT_EQ(log.start_ns, 123u);
  ASSERT_EQ(log.records.size(), SampleEntries().size());
  for (size_t i = 0; i < log.records.size(); i++) {
    EXPECT_EQ(log.records[i].scope, SampleEntries()[i].scope);
    EXPECT_EQ(log.records[i].kind, SampleEntries()[i].kind);
    EXPECT_EQ(log.records[i].op, SampleEntries()[i].op);
    EXPECT_EQ(log.records[i].path, SampleEntries()[i].path);
  }
}

TEST(LogReader, TruncationAtEveryOffsetIsAnErrorAndNeverInventsRecords) {
  std::string bytes = EncodeLog(1, 1, 1, SampleEntries());
  for (size_t cut = 0; cut < bytes.size(); cut++) {
    ProcessLog log;
    absl::Status s = ParseLog(bytes.substr(0, cut), "t.stelog", &log);
    ASSERT_FALSE(s.ok()) << "cut at " << cut;
    EXPECT_NE(std::string(s.message()).find("t.stelog: offset "), std::string::npos) << s;
    ASSERT_LE(log.records.size(), SampleEntries().size());
    for (size_t i = 0; i < log.records.size(); i++) {
      EXPECT_EQ(log.records[i].path, SampleEntries()[i].path) << "cut at " << cut;
    }
  }
}

TEST(LogReader, AFlippedByteNeverCrashesAndNeverInventsAPath) {
  std::string bytes = EncodeLog(1, 1, 1, SampleEntries());
  std::vector<std::string> known;
  for (const LogEntry& e : SampleEntries()) known.push_back(e.path);
  for (size_t at = 0; at < bytes.size(); at++) {
    for (unsigned char bit : {0x01, 0x80}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(bad[at] ^ bit);
      ProcessLog log;
      absl::Status s = ParseLog(bad, "f.stelog", &log);
      for (const LogRecord& r : log.records) {
        bool is_known = false;
        for (const std::string& k : known) is_known |= r.path == k;
        // A flip inside a path is caught by the record check.
        EXPECT_TRUE(is_known) << "offset " << at << " produced path " << r.path;
      }
      if (s.ok()) {
        // Only header fields no reader depends on (ppid, start, flags,
        // reserved) may change without an error.
        EXPECT_EQ(log.records.size(), known.size()) << "offset " << at;
      }
    }
  }
}

TEST(LogReader, WrongMagicAndVersionAreRejected) {
  std::string bytes = EncodeLog(1, 1, 1, SampleEntries());
  ProcessLog log;
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_NE(std::string(ParseLog(bad_magic, "m", &log).message()).find("bad magic"),
            std::string::npos);
  std::string bad_version = bytes;
  uint32_t v = 99;
  std::memcpy(&bad_version[8], &v, 4);
  EXPECT_NE(std::string(ParseLog(bad_version, "v", &log).message()).find("version 99"),
            std::string::npos);
}

TEST(LogReader, AnIncompleteRecordIsSkippedAndTheRestIsRead) {
  // What a process killed inside a hook leaves: a reserved record whose
  // size word was never stored, followed by records of other threads.
  std::string bytes = EncodeLog(1, 1, 1, SampleEntries());
  // Record 2 starts after the header, scope def "//r", record 1, scope def.
  ProcessLog whole;
  ASSERT_TRUE(ParseLog(bytes, "w", &whole).ok());
  uint64_t victim = whole.records[1].offset;
  std::memset(&bytes[victim], 0, 4);
  ProcessLog log;
  absl::Status s = ParseLog(bytes, "i", &log);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(log.incomplete_records, 1u);
  EXPECT_EQ(log.records.size(), SampleEntries().size() - 1);
  EXPECT_EQ(log.records.back().path, SampleEntries().back().path);
}

TEST(LogReader, LostRecordsMakeTheLogAnError) {
  std::string bytes = EncodeLog(1, 1, 1, SampleEntries());
  uint64_t lost = 3;
  std::memcpy(&bytes[offsetof(SteLogHeader, lost)], &lost, 8);
  ProcessLog log;
  absl::Status s = ParseLog(bytes, "l", &log);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("dropped 3 records"), std::string::npos) << s;
  EXPECT_EQ(log.records.size(), SampleEntries().size());
}

TEST(LogReader, ReadLogDirOrdersByStartAndReportsEachFile) {
  char tmpl[] = "/tmp/ste-logdir-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  ASSERT_TRUE(WriteLogFile(dir, 10, 1, {SampleEntries()[0]}).ok());
  ASSERT_TRUE(WriteLogFile(dir, 11, 10, {SampleEntries()[1]}).ok());
  std::vector<ProcessLog> logs;
  ASSERT_TRUE(ReadLogDir(dir, &logs).ok());
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_LE(logs[0].start_ns, logs[1].start_ns);
  EXPECT_EQ(logs[0].pid, 10u);
  EXPECT_FALSE(ReadLogDir(dir + "/nope", &logs).ok());
}

}  // namespace
}  // namespace ste
