// Copyright: the ste authors. Inventory::Scan under injected I/O faults:
// every fault is either survived with a correct hash (a retry) or an error
// naming the path; never a wrong hash.
#include <xxhash.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inventory_test_util.h"
#include "ste/inventory.h"

namespace ste {
namespace {

using test::TempTree;
using ::testing::HasSubstr;

enum class Fault {
  kNone,
  kReadError,     // Read fails with EIO
  kShortRead,     // Read delivers half the file, then end of file
  kVanishOnOpen,  // Open says NotFound
  kChangeOnce,    // the first fstat after reading shows a new ctime
  kOpenDenied,    // Open fails with EACCES
};

// Wraps the real file system; faults are keyed by absolute path.
class FaultyFileSystem : public ScanFileSystem {
 public:
  void Inject(const std::string& path, Fault fault) {
    std::lock_guard<std::mutex> lock(mu_);
    faults_[path] = fault;
  }
  // ListDirectory(dir) reports `name` too (which does not exist) the first
  // `times` times.
  void AddPhantom(const std::string& dir, const std::string& name, int times) {
    std::lock_guard<std::mutex> lock(mu_);
    phantoms_[dir] = {name, times};
  }
  void DenyListing(const std::string& dir) {
    std::lock_guard<std::mutex> lock(mu_);
    denied_dirs_.push_back(dir);
  }
  int opens() const { return opens_.load(); }
  bool Denied(const std::string& dir) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& d : denied_dirs_) {
      if (d == dir) return true;
    }
    return false;
  }

  absl::StatusOr<FileStat> LinkStat(const std::string& path) override {
    return real_->LinkStat(path);
  }
  absl::StatusOr<FileStat> FollowStat(const std::string& path) override {
    return real_->FollowStat(path);
  }
  absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(
      const std::string& path, bool follow) override {
    if (Denied(path)) {
      return absl::PermissionDeniedError("opendir " + path +
                                         ": Permission denied");
    }
    absl::StatusOr<std::unique_ptr<Directory>> dir =
        real_->OpenDirectory(path, follow);
    if (!dir.ok()) return dir;
    return std::unique_ptr<Directory>(
        new FaultyDirectory(this, *std::move(dir), path));
  }
  absl::StatusOr<std::string> ReadLink(const std::string& path) override {
    return real_->ReadLink(path);
  }
  absl::StatusOr<std::unique_ptr<ReadableFile>> Open(const std::string& path,
                                                     bool follow) override {
    return WithFault(path, [&] { return real_->Open(path, follow); });
  }

 private:
  // Applies the fault injected for `path` to what `open` returns.
  template <typename OpenFn>
  absl::StatusOr<std::unique_ptr<ReadableFile>> WithFault(
      const std::string& path, OpenFn open) {
    opens_.fetch_add(1);
    Fault fault = Take(path);
    if (fault == Fault::kVanishOnOpen) {
      return absl::NotFoundError("open " + path + ": no such file");
    }
    if (fault == Fault::kOpenDenied) {
      return absl::PermissionDeniedError("open " + path +
                                         ": Permission denied");
    }
    absl::StatusOr<std::unique_ptr<ReadableFile>> file = open();
    if (!file.ok() || fault == Fault::kNone) return file;
    return std::unique_ptr<ReadableFile>(
        new FaultyFile(*std::move(file), path, fault));
  }

  class FaultyDirectory : public Directory {
   public:
    FaultyDirectory(FaultyFileSystem* fs, std::unique_ptr<Directory> real,
                    std::string path)
        : fs_(fs), real_(std::move(real)), path_(std::move(path)) {}
    absl::Status List(std::vector<std::string>* names) override {
      {
        std::lock_guard<std::mutex> lock(fs_->mu_);
        auto it = fs_->phantoms_.find(path_);
        if (it != fs_->phantoms_.end() && it->second.second > 0) {
          --it->second.second;
          names->push_back(it->second.first);
        }
      }
      return real_->List(names);
    }
    absl::StatusOr<FileStat> LinkStatAt(const std::string& name) override {
      return real_->LinkStatAt(name);
    }
    absl::StatusOr<std::unique_ptr<ReadableFile>> OpenAt(
        const std::string& name) override {
      return fs_->WithFault(path_ + "/" + name,
                            [&] { return real_->OpenAt(name); });
    }
    absl::StatusOr<std::unique_ptr<Directory>> OpenSubdirectory(
        const std::string& name) override {
      const std::string path = path_ + "/" + name;
      if (fs_->Denied(path)) {
        return absl::PermissionDeniedError("opendir " + path +
                                           ": Permission denied");
      }
      absl::StatusOr<std::unique_ptr<Directory>> dir =
          real_->OpenSubdirectory(name);
      if (!dir.ok()) return dir;
      return std::unique_ptr<Directory>(
          new FaultyDirectory(fs_, *std::move(dir), path));
    }

   private:
    FaultyFileSystem* const fs_;
    std::unique_ptr<Directory> real_;
    const std::string path_;
  };

  class FaultyFile : public ReadableFile {
   public:
    FaultyFile(std::unique_ptr<ReadableFile> real, std::string path,
               Fault fault)
        : real_(std::move(real)), path_(std::move(path)), fault_(fault) {}
    absl::StatusOr<size_t> Read(char* buf, size_t n) override {
      if (fault_ == Fault::kReadError) {
        return absl::DataLossError("read " + path_ + ": Input/output error");
      }
      if (fault_ == Fault::kShortRead) {
        if (!size_known_) {
          absl::StatusOr<FileStat> st = real_->Stat();
          if (!st.ok()) return st.status();
          budget_ = st->size / 2;
          size_known_ = true;
        }
        if (n > budget_) n = budget_;
        absl::StatusOr<size_t> got = real_->Read(buf, n);
        if (got.ok()) budget_ -= *got;
        return got;
      }
      return real_->Read(buf, n);
    }
    absl::StatusOr<FileStat> Stat() override {
      absl::StatusOr<FileStat> st = real_->Stat();
      if (st.ok() && fault_ == Fault::kChangeOnce) st->ctime_ns += 1;
      return st;
    }

   private:
    std::unique_ptr<ReadableFile> real_;
    std::string path_;
    Fault fault_;
    bool size_known_ = false;
    uint64_t budget_ = 0;
  };

  // The fault for `path`; kChangeOnce is consumed by its first use.
  Fault Take(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = faults_.find(path);
    if (it == faults_.end()) return Fault::kNone;
    Fault fault = it->second;
    if (fault == Fault::kChangeOnce) faults_.erase(it);
    return fault;
  }

  ScanFileSystem* const real_ = RealScanFileSystem();
  std::mutex mu_;
  std::map<std::string, Fault> faults_;
  std::map<std::string, std::pair<std::string, int>> phantoms_;
  std::vector<std::string> denied_dirs_;
  std::atomic<int> opens_{0};
};

class InventoryFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("ok.txt", "fine");
    tree_.Write("dir/victim.txt", test::Pattern(5000, 3));
    for (int i = 0; i < 20; ++i) {
      tree_.Write("many/f" + std::to_string(i), test::Pattern(100, i));
    }
  }
  absl::StatusOr<Inventory> Scan(const Inventory* previous = nullptr) {
    ScanOptions options = tree_.Options();
    options.fs = &fs_;
    return Inventory::Scan(options, previous);
  }
  std::string Victim() const { return tree_.Abs("dir/victim.txt"); }

  TempTree tree_;
  FaultyFileSystem fs_;
};

TEST_F(InventoryFaultTest, NoFaultMatchesTheRealFileSystem) {
  absl::StatusOr<Inventory> faulty = Scan();
  absl::StatusOr<Inventory> real = tree_.Scan();
  ASSERT_TRUE(faulty.ok() && real.ok());
  EXPECT_EQ(faulty->entries(), real->entries());
  EXPECT_EQ(fs_.opens(), 22);
}

TEST_F(InventoryFaultTest, ReadErrorIsAnErrorNamingThePath) {
  fs_.Inject(Victim(), Fault::kReadError);
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr(Victim()));
}

TEST_F(InventoryFaultTest, PersistentShortReadIsAnErrorNotAWrongHash) {
  fs_.Inject(Victim(), Fault::kShortRead);
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(inv.status().message()),
              HasSubstr(Victim() + ": kept changing while it was read (read "
                                   "2500 bytes, size 5000)"));
}

TEST_F(InventoryFaultTest, FileVanishingBeforeItIsReadIsAnError) {
  fs_.Inject(Victim(), Fault::kVanishOnOpen);
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(inv.status().message()),
              HasSubstr(Victim() + ": vanished during the scan"));
}

TEST_F(InventoryFaultTest, UnreadableFileIsAnError) {
  fs_.Inject(Victim(), Fault::kOpenDenied);
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr(Victim()));
}

TEST_F(InventoryFaultTest, FileChangingWhileReadIsReadAgain) {
  fs_.Inject(Victim(), Fault::kChangeOnce);
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->stats().retries, 1u);
  std::string content = test::Pattern(5000, 3);
  XXH128_hash_t want = XXH3_128bits(content.data(), content.size());
  const InventoryEntry* e = inv->Find("dir/victim.txt");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->hash.low64, want.low64);
  EXPECT_EQ(e->hash.high64, want.high64);
}

TEST_F(InventoryFaultTest, EntryVanishingAfterReaddirRelistsTheDirectory) {
  fs_.AddPhantom(tree_.Abs("many"), "ghost", 1);
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->stats().retries, 1u);
  EXPECT_EQ(inv->Find("many/ghost"), nullptr);
  absl::StatusOr<Inventory> real = tree_.Scan();
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(inv->Find("many")->hash.low64, real->Find("many")->hash.low64);

  fs_.AddPhantom(tree_.Abs("many"), "ghost", 100);
  absl::StatusOr<Inventory> failed = Scan();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(failed.status().message()),
              HasSubstr(tree_.Abs("many") + ": entries kept vanishing"));
}

TEST_F(InventoryFaultTest, UnlistableDirectoryIsAnError) {
  fs_.DenyListing(tree_.Abs("dir"));
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr(tree_.Abs("dir")));
}

// Files over the inline limit are hashed in the second phase, by path: the
// same faults, the same outcomes.
TEST_F(InventoryFaultTest, BigFilesHashedLaterHandleFaultsTheSameWay) {
  const std::string content = test::Pattern(300 << 10, 9);
  tree_.Write("big/blob.bin", content);
  const std::string big = tree_.Abs("big/blob.bin");
  struct Case {
    Fault fault;
    absl::StatusCode code;
    const char* message;
  };
  const Case cases[] = {
      {Fault::kReadError, absl::StatusCode::kDataLoss, "Input/output error"},
      {Fault::kShortRead, absl::StatusCode::kAborted, "kept changing"},
      {Fault::kVanishOnOpen, absl::StatusCode::kAborted, "vanished"},
      {Fault::kOpenDenied, absl::StatusCode::kPermissionDenied,
       "Permission denied"},
  };
  for (const Case& c : cases) {
    fs_.Inject(big, c.fault);
    absl::StatusOr<Inventory> inv = Scan();
    ASSERT_FALSE(inv.ok()) << static_cast<int>(c.fault);
    EXPECT_EQ(inv.status().code(), c.code);
    EXPECT_THAT(std::string(inv.status().message()), HasSubstr(big));
    EXPECT_THAT(std::string(inv.status().message()), HasSubstr(c.message));
  }
  fs_.Inject(big, Fault::kChangeOnce);
  absl::StatusOr<Inventory> inv = Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->stats().retries, 1u);
  XXH128_hash_t want = XXH3_128bits(content.data(), content.size());
  EXPECT_EQ(inv->Find("big/blob.bin")->hash.low64, want.low64);
  EXPECT_EQ(inv->Find("big/blob.bin")->hash.high64, want.high64);
}

// The stat cache observed from below: a warm scan of an unchanged tree opens
// no file at all.
TEST_F(InventoryFaultTest, WarmScanOpensNothing) {
  constexpr int64_t kOld = 1577836800LL * 1000000000;
  for (const char* p : {"ok.txt", "dir/victim.txt"}) tree_.SetMtime(p, kOld);
  for (int i = 0; i < 20; ++i)
    tree_.SetMtime("many/f" + std::to_string(i), kOld);
  absl::StatusOr<Inventory> cold = Scan();
  ASSERT_TRUE(cold.ok());
  const int cold_opens = fs_.opens();
  EXPECT_EQ(cold_opens, 22);
  // A fault on the file now cannot matter: it is not read.
  fs_.Inject(Victim(), Fault::kReadError);
  absl::StatusOr<Inventory> warm = Scan(&*cold);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(fs_.opens(), cold_opens);
  EXPECT_EQ(warm->entries(), cold->entries());
}

}  // namespace
}  // namespace ste
