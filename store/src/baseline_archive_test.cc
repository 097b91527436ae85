// Copyright: the ste authors. The baseline file: its layout against the
// format written in baseline_archive.h (assembled here from that text, not
// from the encoder), every truncation and every flipped byte refused with
// the message for where it is, content the readers refuse, and export and
// import on both stores (names of those end in /Sqlite or /Postgres).
#include "ste/baseline_archive.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "baseline_images_test_util.h"
#include "ste/little_endian.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ste/baseline_loader.h"
#include "store_backends_test_util.h"
#include "store_test_util.h"

namespace ste {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_util::Backend;
using testing_util::SampleArchive;
using testing_util::ScopedTempDir;
using testing_util::StoreBackend;

// --- The format, from its description. ---

void Put(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t Get(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

std::string MetaBytes(const BaselineArchive& a) {
  std::string m;
  for (int64_t v : {a.origin_id, a.mri, a.created_unix, a.completed_unix, a.exported_unix}) {
    Put(&m, static_cast<uint64_t>(v), 8);
  }
  Put(&m, a.commit.size(), 4);
  return m + a.commit;
}

struct RawResult {
  std::string test;
  uint8_t outcome = 0, opaque = 0;
  uint16_t reserved = 0;
  int32_t exit_code = 0;
  double seconds = 0;
};

std::string ResultsBytes(const std::vector<RawResult>& results) {
  std::string r;
  Put(&r, results.size(), 8);
  for (const RawResult& x : results) {
    Put(&r, x.test.size(), 4);
    Put(&r, x.outcome, 1);
    Put(&r, x.opaque, 1);
    Put(&r, x.reserved, 2);
    Put(&r, static_cast<uint32_t>(x.exit_code), 4);
    uint64_t bits;
    std::memcpy(&bits, &x.seconds, 8);
    Put(&r, bits, 8);
    r += x.test;
  }
  return r;
}

std::vector<RawResult> Raw(const std::vector<TestResult>& results) {
  std::vector<RawResult> raw;
  for (const TestResult& t : results) {
    raw.push_back({t.test, static_cast<uint8_t>(t.outcome), static_cast<uint8_t>(t.opaque), 0,
                   t.exit_code, t.seconds});
  }
  return raw;
}

std::string BlobsBytes(const std::vector<std::pair<std::string, std::string>>& blobs) {
  std::string b;
  Put(&b, blobs.size(), 8);
  for (const auto& [name, bytes] : blobs) {
    Put(&b, name.size(), 4);
    Put(&b, 0, 4);
    Put(&b, bytes.size(), 8);
    b += name + bytes;
  }
  return b;
}

// A file of these sections (five: version 2; four: version 1), every
// length and checksum as the format says.
std::string Assemble(const std::vector<std::string>& sections) {
  std::string table;
  uint64_t offset = 64 + 32 * sections.size();
  for (size_t i = 0; i < sections.size(); ++i) {
    Put(&table, i + 1, 4);
    Put(&table, 0, 4);
    Put(&table, offset, 8);
    Put(&table, sections[i].size(), 8);
    Put(&table, XXH3_64bits(sections[i].data(), sections[i].size()), 8);
    offset = (offset + sections[i].size() + 7) / 8 * 8;
  }
  std::string head("STEBASE\0", 8);
  Put(&head, sections.size() == 5 ? 2 : 1, 4);
  Put(&head, 64, 4);
  Put(&head, 0, 8);
  Put(&head, sections.size(), 4);
  Put(&head, 0, 4);
  Put(&head, offset + 16, 8);
  Put(&head, 0, 16 / 2);
  Put(&head, 0, 16 / 2);
  const std::string checked = head + table;
  Put(&head, XXH3_64bits(checked.data(), checked.size()), 8);
  std::string file = head + table;
  for (const std::string& s : sections) {
    file += s;
    file.resize((file.size() + 7) / 8 * 8, '\0');
  }
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(file.data(), file.size()));
  return file + std::string(reinterpret_cast<const char*>(c.digest), 16);
}

std::string AssembleArchive(const BaselineArchive& a) {
  return Assemble({MetaBytes(a), a.index, a.inventory, ResultsBytes(Raw(a.results)), BlobsBytes(a.blobs)});
}

// As an ste before the blobs section wrote it.
std::string AssembleArchiveV1(const BaselineArchive& a) {
  return Assemble({MetaBytes(a), a.index, a.inventory, ResultsBytes(Raw(a.results))});
}

// SampleArchive with one of each optional blob.
BaselineArchive SampleWithBlobs() {
  BaselineArchive a = SampleArchive();
  auto bytes = [](const auto& literal) { return std::string(literal, sizeof literal - 1); };
  a.blobs = {{"flaky", bytes("tests/test_a.sh\0")},
             {"opaque", bytes("tests/test_b.sh\0unfollowed: /bin/static\0\0")},
             {"writes", bytes("tests/test_a.sh\0out/state\0\0")}};
  return a;
}

void ExpectSame(const BaselineArchive& got, const BaselineArchive& want) {
  EXPECT_EQ(got.origin_id, want.origin_id);
  EXPECT_EQ(got.commit, want.commit);
  EXPECT_EQ(got.mri, want.mri);
  EXPECT_EQ(got.created_unix, want.created_unix);
  EXPECT_EQ(got.completed_unix, want.completed_unix);
  EXPECT_EQ(got.exported_unix, want.exported_unix);
  EXPECT_TRUE(got.index == want.index);
  EXPECT_TRUE(got.inventory == want.inventory);
  ASSERT_EQ(got.results.size(), want.results.size());
  for (size_t i = 0; i < got.results.size(); ++i) {
    EXPECT_EQ(got.results[i].test, want.results[i].test);
    EXPECT_EQ(got.results[i].outcome, want.results[i].outcome);
    EXPECT_EQ(got.results[i].exit_code, want.results[i].exit_code);
    EXPECT_EQ(got.results[i].seconds, want.results[i].seconds);
    EXPECT_EQ(got.results[i].opaque, want.results[i].opaque);
  }
  EXPECT_EQ(got.blobs, want.blobs);
}

TEST(BaselineArchive, TheEncoderWritesExactlyTheDocumentedFormat) {
  const BaselineArchive a = SampleWithBlobs();
  absl::StatusOr<std::string> encoded = EncodeBaselineArchive(a);
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  EXPECT_TRUE(*encoded == AssembleArchive(a));
  absl::StatusOr<BaselineArchive> decoded = DecodeBaselineArchive(*encoded, "f");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSame(*decoded, a);
}

TEST(BaselineArchive, AVersionOneFileIsReadWithoutBlobs) {
  const BaselineArchive a = SampleArchive();
  absl::StatusOr<BaselineArchive> decoded = DecodeBaselineArchive(AssembleArchiveV1(a), "f");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSame(*decoded, a);
  EXPECT_THAT(decoded->blobs, IsEmpty());
  // Four sections in a version-2 header, or five in a version-1 one: damaged.
  std::string v2_short = AssembleArchiveV1(a);
  v2_short[8] = 2;
  EXPECT_TRUE(absl::IsDataLoss(DecodeBaselineArchive(v2_short, "f").status()));
}

TEST(BaselineArchive, AnOutsideGitBaselineWithoutResultsRoundTrips) {
  BaselineArchive a = SampleArchive("", 3);
  a.index = testing_util::IndexImage({});
  a.results.clear();
  absl::StatusOr<std::string> encoded = EncodeBaselineArchive(a);
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  absl::StatusOr<BaselineArchive> decoded = DecodeBaselineArchive(*encoded, "f");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSame(*decoded, a);
}

TEST(BaselineArchive, EveryTruncationIsRefused) {
  const std::string file = AssembleArchive(SampleArchive());
  for (size_t n = 0; n < file.size(); ++n) {
    absl::StatusOr<BaselineArchive> got = DecodeBaselineArchive(file.substr(0, n), "f");
    ASSERT_FALSE(got.ok()) << n;
    ASSERT_TRUE(absl::IsDataLoss(got.status())) << n << ": " << got.status();
    const std::string message(got.status().message());
    if (n == 0) {
      EXPECT_EQ(message, "f is empty, not an ste baseline file");
    } else if (n < 8) {
      EXPECT_THAT(message, HasSubstr("not an ste baseline file")) << n;
    } else {
      EXPECT_THAT(message, HasSubstr("f: truncated: ")) << n;
    }
  }
  EXPECT_EQ(DecodeBaselineArchive(file.substr(0, file.size() - 1), "f").status().message(),
            absl::StrCat("f: truncated: ", file.size() - 1, " bytes, its header says ",
                         file.size()));
}

TEST(BaselineArchive, EveryFlippedByteIsRefusedNamingWhereItIs) {
  const BaselineArchive a = SampleWithBlobs();
  const std::string file = AssembleArchive(a);
  struct Region {
    size_t begin, end;
    std::string message;
  };
  std::vector<Region> regions = {{0, 8, "is not an ste baseline file"},
                                 {8, 12, "format version"},
                                 {12, 224, "the header or section table is damaged"}};
  const char* names[] = {"meta", "index", "inventory", "results", "blobs"};
  size_t end = 224;
  for (int i = 0; i < 5; ++i) {
    const size_t offset = Get(file, 64 + 32 * i + 8, 8), size = Get(file, 64 + 32 * i + 16, 8);
    ASSERT_EQ(offset, end);
    regions.push_back({offset, offset + size, absl::StrCat("the ", names[i], " section is damaged")});
    end = (offset + size + 7) / 8 * 8;
    if (end > offset + size) {
      regions.push_back({offset + size, end, absl::StrCat("nonzero padding after the ", names[i])});
    }
  }
  regions.push_back({end, end + 16, "the file checksum does not match"});
  ASSERT_EQ(end + 16, file.size());
  for (const Region& r : regions) {
    for (size_t at = r.begin; at < r.end; ++at) {
      std::string bad = file;
      bad[at] ^= 0x20;
      absl::StatusOr<BaselineArchive> got = DecodeBaselineArchive(bad, "f");
      ASSERT_FALSE(got.ok()) << at;
      ASSERT_THAT(std::string(got.status().message()), HasSubstr(r.message)) << at;
    }
  }
}

TEST(BaselineArchive, AnotherVersionIsRefusedAsSuch) {
  std::string file = AssembleArchive(SampleArchive());
  for (int version : {0, 3}) {
    file[8] = static_cast<char>(version);
    absl::Status status = DecodeBaselineArchive(file, "base.ste").status();
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
    EXPECT_EQ(status.message(),
              absl::StrCat("base.ste is an ste baseline file of format version ", version,
                           "; this ste reads versions 1 to 2 (export with an ste no newer than the one "
                           "that imports)"));
  }
}

TEST(BaselineArchive, ForeignBytesAndTrailingBytesAreRefused) {
  absl::Status status = DecodeBaselineArchive(std::string("STEINV\0\0 an inventory", 20), "f").status();
  EXPECT_THAT(status.message(), HasSubstr("f is not an ste baseline file (it does not start with "
                                          "\"STEBASE\": it starts with \"STEINV\\x00\\x00\")"));
  std::string file = AssembleArchive(SampleArchive());
  status = DecodeBaselineArchive(file + "x", "f").status();
  EXPECT_THAT(status.message(), HasSubstr("1 trailing bytes after its end"));
}

// Files whose every checksum is right and whose content the readers refuse.
TEST(BaselineArchive, ContentTheReadersRefuseIsRefused) {
  const BaselineArchive a = SampleArchive();
  const std::string meta = MetaBytes(a), results = ResultsBytes(Raw(a.results));
  auto refused = [&](const std::vector<std::string>& sections) {
    absl::Status s = DecodeBaselineArchive(Assemble(sections), "f").status();
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    return std::string(s.message());
  };
  EXPECT_THAT(refused({meta, "not an index", a.inventory, results}),
              HasSubstr("f: the index does not read as a selection index"));
  EXPECT_THAT(refused({meta, a.index, "not an inventory", results}),
              HasSubstr("f: the inventory does not read as an inventory"));
  EXPECT_THAT(refused({meta + "x", a.index, a.inventory, results}),
              HasSubstr("the meta section is malformed"));
  EXPECT_THAT(refused({meta, a.index, a.inventory, results + "x"}),
              HasSubstr("the results section is malformed: 1 bytes after the last entry"));
  // A damaged bitmap, or key block, inside an index whose own tables check
  // out (each has its own checksum: selection_index.h, version 2).
  std::string index = a.index;
  index[128] ^= 0x01;  // the first bitmap's bytes
  EXPECT_THAT(refused({meta, index, a.inventory, results}),
              HasSubstr("the index has a bad key block or bitmap: selection index: bitmap of key 0"));
  index = a.index;
  const uint64_t key_blocks = DecodeU64(a.index.data() + 56);
  index[key_blocks + 12] ^= 0x01;  // the first key's kind
  EXPECT_THAT(refused({meta, index, a.inventory, results}),
              HasSubstr("the index has a bad key block or bitmap: selection index: key block 0"));

  std::vector<RawResult> raw = Raw(a.results);
  auto with = [&](auto change) {
    std::vector<RawResult> r = raw;
    change(r);
    return refused({meta, a.index, a.inventory, ResultsBytes(r)});
  };
  EXPECT_THAT(with([](auto& r) { r[0].outcome = 3; }), HasSubstr("unknown outcome 3"));
  EXPECT_THAT(with([](auto& r) { r[0].opaque = 2; }), HasSubstr("bad opaque flag"));
  EXPECT_THAT(with([](auto& r) { r[0].reserved = 1; }), HasSubstr("reserved field"));
  EXPECT_THAT(with([](auto& r) { r[0].seconds = -1; }), HasSubstr("bad duration"));
  EXPECT_THAT(with([](auto& r) { r[0].seconds = std::nan(""); }), HasSubstr("bad duration"));
  EXPECT_THAT(with([](auto& r) { std::swap(r[0], r[1]); }), HasSubstr("out of order or a duplicate"));
  EXPECT_THAT(with([](auto& r) { r[1] = r[0]; }), HasSubstr("out of order or a duplicate"));
  EXPECT_THAT(with([](auto& r) { r[1].test = "tests/zz/../b.sh"; }), HasSubstr("does not name a test path"));
  EXPECT_THAT(with([](auto& r) { r[1].test = "tests/test_c.sh"; }),
              HasSubstr("is not a test of the index"));
  EXPECT_THAT(with([](auto& r) { r.pop_back(); }), HasSubstr("the index has 2 tests, the results 1"));
  EXPECT_THAT(with([](auto& r) { r[0].test.clear(); }), HasSubstr("bad size"));
  // The blobs section.
  auto blobs = [&](const std::vector<std::pair<std::string, std::string>>& b) {
    return refused({meta, a.index, a.inventory, results, BlobsBytes(b)});
  };
  EXPECT_THAT(blobs({{"index", "x"}}), HasSubstr("it holds a blob ste does not know: \"index\""));
  EXPECT_THAT(blobs({{"writes", std::string("t\0p\0\0", 5)}, {"flaky", std::string("t\0", 2)}}),
              HasSubstr("the blob flaky is out of order or a duplicate"));
  EXPECT_THAT(blobs({{"flaky", "tests/test_a.sh"}}), HasSubstr("the flaky blob's last name is not ended"));
  EXPECT_THAT(blobs({{"writes", std::string("t\0p\0", 4)}}), HasSubstr("the writes blob: the writes blob ends inside"));
  EXPECT_THAT(refused({meta, a.index, a.inventory, results, BlobsBytes({}) + "x"}),
              HasSubstr("the blobs section is malformed: 1 bytes after the last entry"));
  std::string cut = BlobsBytes({{"flaky", std::string("t\0", 2)}});
  cut.pop_back();
  EXPECT_THAT(refused({meta, a.index, a.inventory, results, cut}), HasSubstr("the blobs section is malformed: entry 1 is cut short"));
  BaselineArchive nul = a;
  nul.commit = std::string("ab\0cd", 5);
  EXPECT_THAT(refused({MetaBytes(nul), a.index, a.inventory, results}),
              HasSubstr("its commit id is not a commit id"));
  // The encoder refuses what the reader would.
  nul.commit = "abc";
  nul.results.pop_back();
  EXPECT_TRUE(absl::IsDataLoss(EncodeBaselineArchive(nul).status()));
}

TEST(BaselineArchive, FilesAreWrittenWholeOrNotAtAll) {
  ScopedTempDir dir;
  const std::string path = dir.path() + "/base.ste";
  ASSERT_TRUE(WriteBaselineArchiveFile(SampleArchive("c1"), path).ok());
  ASSERT_TRUE(WriteBaselineArchiveFile(SampleArchive("c2"), path).ok());  // replaced
  EXPECT_THAT(testing_util::FileNames(dir.path()), ElementsAre("base.ste"));  // no temp file left
  absl::StatusOr<BaselineArchive> read = ReadBaselineArchiveFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->commit, "c2");
  // A refused archive writes nothing, not even a temp file.
  BaselineArchive bad = SampleArchive("c3");
  bad.results.clear();
  EXPECT_FALSE(WriteBaselineArchiveFile(bad, path).ok());
  EXPECT_THAT(testing_util::FileNames(dir.path()), ElementsAre("base.ste"));
  EXPECT_EQ(ReadBaselineArchiveFile(path)->commit, "c2");
  // A directory is neither written over nor read.
  std::filesystem::create_directory(dir.path() + "/d");
  EXPECT_FALSE(WriteBaselineArchiveFile(SampleArchive(), dir.path() + "/d").ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/d"));
  EXPECT_EQ(ReadBaselineArchiveFile(dir.path() + "/d").status().message(),
            dir.path() + "/d is a directory, not an ste baseline file");
  EXPECT_TRUE(absl::IsNotFound(ReadBaselineArchiveFile(dir.path() + "/none").status()));
}

// --- Export and import, on both stores. ---

class ArchiveStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    Make(origin_dir_, &origin_backend_, &origin_);
    Make(copy_dir_, &copy_backend_, &copy_);
  }
  void Make(const ScopedTempDir& dir, std::unique_ptr<StoreBackend>* backend,
            std::unique_ptr<Store>* store) {
    ASSERT_FALSE(dir.path().empty());
    absl::StatusOr<std::unique_ptr<StoreBackend>> b = testing_util::MakeBackend(GetParam(), dir.path());
    ASSERT_TRUE(b.ok()) << b.status();
    *backend = *std::move(b);
    absl::StatusOr<std::unique_ptr<Store>> s = (*backend)->Open();
    ASSERT_TRUE(s.ok()) << s.status();
    *store = *std::move(s);
  }

  ScopedTempDir origin_dir_, copy_dir_;
  std::unique_ptr<StoreBackend> origin_backend_, copy_backend_;
  std::unique_ptr<Store> origin_, copy_;
};

TEST_P(ArchiveStoreTest, AnExportImportedElsewhereIsTheSameBaseline) {
  testing_util::StoreArchive(*origin_, SampleArchive("old", 1));
  const BaselineArchive sample = SampleArchive("new", 2);
  int64_t id = testing_util::StoreArchive(*origin_, sample);
  absl::StatusOr<BaselineArchive> exported = ArchiveFromStore(*origin_, 0);  // latest
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->origin_id, id);
  EXPECT_EQ(exported->commit, "new");
  EXPECT_TRUE(exported->index == sample.index);
  EXPECT_TRUE(exported->inventory == sample.inventory);
  absl::StatusOr<BaselineInfo> origin_info = origin_->Get(id);
  ASSERT_TRUE(origin_info.ok());

  // Through the file, as the CLI does.
  const std::string path = copy_dir_.path() + "/new.ste";
  ASSERT_TRUE(WriteBaselineArchiveFile(*exported, path).ok());
  absl::StatusOr<BaselineArchive> read = ReadBaselineArchiveFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  absl::StatusOr<ImportOutcome> imported = ImportBaseline(*copy_, *read);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_FALSE(imported->already);
  absl::StatusOr<BaselineInfo> info = copy_->Get(imported->baseline);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, BaselineState::kComplete);
  EXPECT_EQ(info->commit, "new");
  EXPECT_EQ(info->mri, 2);
  EXPECT_EQ(info->created_unix, origin_info->created_unix);
  EXPECT_EQ(info->completed_unix, origin_info->completed_unix);
  absl::StatusOr<LoadedBaseline> loaded = LoadCompletedBaseline(*copy_, 2, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->info.id, imported->baseline);
  EXPECT_THAT(loaded->failed_tests, ElementsAre("tests/test_b.sh"));
  absl::StatusOr<BaselineArchive> again = ArchiveFromStore(*copy_, imported->baseline);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->index == sample.index);
  EXPECT_TRUE(again->inventory == sample.inventory);
  ASSERT_EQ(again->results.size(), 2u);
  EXPECT_EQ(again->results[1].seconds, 2.5);
  EXPECT_TRUE(again->results[1].opaque);
}

TEST_P(ArchiveStoreTest, ImportingTwiceOrIntoTheOriginChangesNothing) {
  const BaselineArchive sample = SampleArchive();
  absl::StatusOr<ImportOutcome> first = ImportBaseline(*copy_, sample);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::vector<std::string> rows = copy_backend_->Rows();
  const std::vector<std::string> files = copy_backend_->LocalFiles();
  absl::StatusOr<ImportOutcome> second = ImportBaseline(*copy_, sample);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->already);
  EXPECT_EQ(second->baseline, first->baseline);
  EXPECT_EQ(copy_backend_->Rows(), rows);
  EXPECT_EQ(copy_backend_->LocalFiles(), files);

  int64_t recorded = testing_util::StoreArchive(*origin_, sample);
  absl::StatusOr<BaselineArchive> exported = ArchiveFromStore(*origin_, recorded);
  ASSERT_TRUE(exported.ok());
  const std::vector<std::string> origin_rows = origin_backend_->Rows();
  absl::StatusOr<ImportOutcome> home = ImportBaseline(*origin_, *exported);
  ASSERT_TRUE(home.ok()) << home.status();
  EXPECT_TRUE(home->already);
  EXPECT_EQ(home->baseline, recorded);
  EXPECT_EQ(origin_backend_->Rows(), origin_rows);
}

TEST_P(ArchiveStoreTest, ARefusedArchiveWritesNothing) {
  BaselineArchive bad = SampleArchive();
  bad.results[0].test = "tests/not_in_the_index.sh";
  absl::StatusOr<ImportOutcome> imported = ImportBaseline(*copy_, bad);
  EXPECT_TRUE(absl::IsDataLoss(imported.status())) << imported.status();
  EXPECT_THAT(copy_backend_->Rows(), IsEmpty());
  EXPECT_THAT(copy_backend_->StoredBlobs(), IsEmpty());
}

TEST_P(ArchiveStoreTest, OnlyACompleteBaselineIsExported) {
  EXPECT_TRUE(absl::IsNotFound(ArchiveFromStore(*origin_, 0).status()));
  absl::StatusOr<int64_t> building = origin_->Begin("c", 1);
  ASSERT_TRUE(building.ok());
  absl::Status status = ArchiveFromStore(*origin_, *building).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("is building, not complete"));
  EXPECT_TRUE(absl::IsNotFound(ArchiveFromStore(*origin_, 99).status()));
  // A stored blob damaged behind the store's back is not exported.
  int64_t id = testing_util::StoreArchive(*origin_, SampleArchive());
  origin_backend_->FlipBlobByte(*origin_, id, "index");
  status = ArchiveFromStore(*origin_, id).status();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
}

INSTANTIATE_TEST_SUITE_P(Backends, ArchiveStoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing_util::BackendName);

}  // namespace
}  // namespace ste
