// Copyright: the ste authors. Inventory tests on real files in a temp dir;
// I/O faults through a ScanFileSystem double (inventory_fault_test.cc has
// those); the binary format's corruption cases are in
// inventory_format_test.cc.
#include "ste/inventory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inventory_test_util.h"

namespace ste {
namespace {

using test::NamesHash;
using test::TempTree;
using ::testing::ElementsAre;

constexpr int64_t kOldMtimeNs = 1577836800LL * 1000000000;  // 2020-01-01

std::vector<std::string> Paths(const Inventory& inv) {
  std::vector<std::string> out;
  for (const InventoryEntry& e : inv) out.push_back(e.path);
  return out;
}

XXH128_hash_t Xxh(const std::string& s) {
  return XXH3_128bits(s.data(), s.size());
}

bool SameHash(XXH128_hash_t a, XXH128_hash_t b) {
  return a.low64 == b.low64 && a.high64 == b.high64;
}

// The hash a symlink to a regular file with `content` gets.
XXH128_hash_t LinkToFileHash(const std::string& target,
                             const std::string& content) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, Xxh(content));
  std::string buf = target;
  buf.push_back('\0');
  buf.push_back('R');
  buf.append(reinterpret_cast<const char*>(c.digest), 16);
  return Xxh(buf);
}

XXH128_hash_t LinkTagHash(const std::string& target, char tag) {
  std::string buf = target;
  buf.push_back('\0');
  buf.push_back(tag);
  return Xxh(buf);
}

TEST(InventoryScanTest, RegularFileHashesAreXxh3OfTheContent) {
  TempTree tree;
  const std::vector<std::pair<std::string, size_t>> files = {
      {"empty", 0},
      {"one", 1},
      {"small.txt", 100},
      {"buffer_exact", 1 << 20},  // the read buffer's size
      {"buffer_plus_one", (1 << 20) + 1},
      {"big.bin", (7 << 19) + 123},  // streaming over several buffers
  };
  for (const auto& [name, size] : files) {
    tree.Write(name, test::Pattern(size, name.size()));
  }
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  for (const auto& [name, size] : files) {
    const InventoryEntry* e = inv->Find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->type, FileType::kRegular);
    EXPECT_EQ(e->size, size);
    EXPECT_TRUE(SameHash(e->hash, Xxh(test::Pattern(size, name.size()))))
        << name;
    EXPECT_TRUE(S_ISREG(e->mode));
    EXPECT_NE(e->inode, 0u);
  }
  EXPECT_EQ(inv->stats().files_hashed, files.size());
  EXPECT_EQ(inv->stats().files_reused, 0u);
  EXPECT_GT(inv->taken_at_ns(), kOldMtimeNs);
}

TEST(InventoryScanTest, EntriesAreSortedByPathBytesWithTheRootAsDot) {
  TempTree tree;
  tree.Write("a/b", "1");
  tree.Write("a-b", "2");
  tree.Write("a/c/d", "3");
  tree.Write("Z", "4");
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_THAT(Paths(*inv),
              ElementsAre(".", "Z", "a", "a-b", "a/b", "a/c", "a/c/d"));
  const InventoryEntry* root = inv->Find(".");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->type, FileType::kDirectory);
  EXPECT_TRUE(SameHash(root->hash, NamesHash({"Z", "a", "a-b"})));
  EXPECT_EQ(inv->Find("a/c")->type, FileType::kDirectory);
  EXPECT_EQ(inv->Find("a/x"), nullptr);
  EXPECT_EQ(inv->Find(""), nullptr);
  EXPECT_EQ(inv->stats().directories, 3u);
  EXPECT_EQ(inv->size(), 7u);
}

// Byte order can put a sibling between a directory and its contents
// ("a" < "a-b" < "a.txt" < "a/x"): the scan's per-directory ordering must
// still give exactly std::string's order.
TEST(InventoryScanTest, OrderIsByteOrderAroundTheSlash) {
  TempTree tree;
  const std::vector<std::string> names = {
      "a", "a-b", "a.txt", "a!", "a b", "a0", "A", "a~", "\xc3\xa9", "_"};
  for (const std::string& n : names) {
    tree.Write(n + "/x", "1");
    tree.Write(n + "/x-y/z", "2");
    tree.Write(n + "/x.y", "3");
    tree.Write(n + ".f", "4");
    tree.Write(n + "/x0", "5");
  }
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  std::vector<std::string> paths = Paths(*inv);
  EXPECT_EQ(paths.size(), 1 + names.size() * 7);
  std::vector<std::string> sorted = paths;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(paths, sorted);
  EXPECT_TRUE(std::adjacent_find(paths.begin(), paths.end()) == paths.end());
  for (const std::string& p : paths) EXPECT_NE(inv->Find(p), nullptr) << p;
}

// The root's entry "." is no prefix of its children's paths: a name whose
// first byte sorts below '.' ("#notes", "-x", " x") comes before it (an
// inventory with "." first could not be read back).
TEST(InventoryScanTest, RootNamesBelowTheDotSortBeforeTheRoot) {
  TempTree tree;
  for (const char* n : {"#notes", "-x", " x", "+y", "a", "\x01z"}) tree.Write(n, "1");
  tree.Write("-d/f", "2");
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_THAT(Paths(*inv),
              ElementsAre("\x01z", " x", "#notes", "+y", "-d", "-d/f", "-x", ".", "a"));
  EXPECT_EQ(inv->Find(".")->type, FileType::kDirectory);
  EXPECT_EQ(inv->stats().directories, 2u);
  absl::StatusOr<Inventory> back = Inventory::Parse(inv->Serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->entries(), inv->entries());
}

TEST(InventoryScanTest, RootWithTrailingSlashAndBadRoots) {
  TempTree tree;
  tree.Write("f", "x");
  ScanOptions options;
  options.root = tree.root() + "/";
  absl::StatusOr<Inventory> inv = Inventory::Scan(options, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_THAT(Paths(*inv), ElementsAre(".", "f"));

  options.root = "relative/dir";
  EXPECT_EQ(Inventory::Scan(options, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.root = tree.root() + "/f";
  EXPECT_EQ(Inventory::Scan(options, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.root = tree.root() + "/nope";
  EXPECT_EQ(Inventory::Scan(options, nullptr).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(InventoryScanTest, DirectoryNamesHashFollowsTheListingOnly) {
  TempTree tree;
  tree.Write("d/a.txt", "a");
  tree.Write("d/b.txt", "b");
  tree.Write("d/sub/x", "x");
  auto names_hash = [&]() {
    absl::StatusOr<Inventory> inv = tree.Scan();
    EXPECT_TRUE(inv.ok()) << inv.status();
    return inv->Find("d")->hash;
  };
  XXH128_hash_t h0 = names_hash();
  EXPECT_TRUE(SameHash(h0, NamesHash({"a.txt", "b.txt", "sub"})));

  tree.Write("d/a.txt", "changed content");  // content: same listing
  tree.Write("d/sub/y", "new file below");   // grandchild: same listing
  EXPECT_TRUE(SameHash(names_hash(), h0));

  tree.Write("d/c.txt", "c");  // added
  XXH128_hash_t h1 = names_hash();
  EXPECT_FALSE(SameHash(h1, h0));
  EXPECT_TRUE(SameHash(h1, NamesHash({"a.txt", "b.txt", "c.txt", "sub"})));

  tree.Rename("d/c.txt", "d/e.txt");  // renamed
  XXH128_hash_t h2 = names_hash();
  EXPECT_TRUE(SameHash(h2, NamesHash({"a.txt", "b.txt", "e.txt", "sub"})));

  tree.Remove("d/e.txt");  // removed: back to the start
  EXPECT_TRUE(SameHash(names_hash(), h0));

  tree.MkDir("empty");
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(SameHash(inv->Find("empty")->hash, Xxh("")));
}

TEST(InventoryScanTest, IgnoredPathsAreLeftOutAndNotDescended) {
  TempTree tree;
  tree.Write(".git/HEAD", "ref");
  tree.Write(".git/objects/ab/cd", "obj");
  tree.Write("src/a.py", "a");
  tree.Write("src/a.pyc", "compiled");
  tree.Write("src/build/out.o", "o");
  tree.Write("build/x", "top-level build");
  absl::StatusOr<GlobSet> ignore =
      GlobSet::Compile({".git/**", "*.pyc", "src/build/**"});
  ASSERT_TRUE(ignore.ok());
  absl::StatusOr<Inventory> inv = tree.Scan(*ignore);
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_THAT(Paths(*inv),
              ElementsAre(".", "build", "build/x", "src", "src/a.py"));
  EXPECT_TRUE(SameHash(inv->Find(".")->hash, NamesHash({"build", "src"})));
  EXPECT_TRUE(SameHash(inv->Find("src")->hash, NamesHash({"a.py"})));

  // Adding an ignored file changes no listing.
  tree.Write("src/b.pyc", "compiled");
  absl::StatusOr<Inventory> again = tree.Scan(*ignore);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(Inventory::Diff(*inv, *again).changes.empty());
}

TEST(InventoryScanTest, SymlinksHashTargetAndResolvedContent) {
  TempTree tree;
  TempTree outside;
  tree.Write("data/real.txt", "real content");
  outside.Write("lib.txt", "outside content");
  tree.Symlink("real.txt", "data/link");  // relative, to a file
  tree.Symlink(outside.root() + "/lib.txt", "ext_link");
  tree.Symlink("data", "dir_link");
  tree.Symlink("nowhere", "dangling");
  tree.Symlink("loop", "loop");
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  // The walk does not follow links: nothing under dir_link.
  EXPECT_THAT(Paths(*inv),
              ElementsAre(".", "dangling", "data", "data/link", "data/real.txt",
                          "dir_link", "ext_link", "loop"));
  const InventoryEntry* link = inv->Find("data/link");
  EXPECT_EQ(link->type, FileType::kSymlink);
  EXPECT_TRUE(S_ISLNK(link->mode));
  EXPECT_EQ(link->size, 8u);  // lstat: the target string's length
  EXPECT_TRUE(SameHash(link->hash, LinkToFileHash("real.txt", "real content")));
  EXPECT_TRUE(
      SameHash(inv->Find("ext_link")->hash,
               LinkToFileHash(outside.root() + "/lib.txt", "outside content")));
  EXPECT_TRUE(SameHash(inv->Find("dir_link")->hash, LinkTagHash("data", 'D')));
  EXPECT_TRUE(
      SameHash(inv->Find("dangling")->hash, LinkTagHash("nowhere", 'N')));
  EXPECT_TRUE(SameHash(inv->Find("loop")->hash, LinkTagHash("loop", 'N')));
  EXPECT_EQ(inv->stats().symlinks, 5u);

  // Editing the target changes the link; so does creating the dangling one's
  // target.
  tree.Write("data/real.txt", "edited");
  tree.Write("nowhere", "now here");
  absl::StatusOr<Inventory> after = tree.Scan(GlobSet(), &*inv);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(SameHash(after->Find("data/link")->hash,
                       LinkToFileHash("real.txt", "edited")));
  EXPECT_TRUE(SameHash(after->Find("dangling")->hash,
                       LinkToFileHash("nowhere", "now here")));
  InventoryDiff diff = Inventory::Diff(*inv, *after);
  std::vector<std::string> changed;
  for (const InventoryChange& c : diff.changes) changed.push_back(c.path);
  EXPECT_THAT(changed, ElementsAre(".", "dangling", "data/link",
                                   "data/real.txt", "nowhere"));
}

TEST(InventoryScanTest, ExternalPathsIncludingMissingOnes) {
  TempTree tree;
  TempTree outside;
  tree.Write("a", "a");
  outside.Write("site-packages/mod.py", "print(1)");
  outside.Write("site-packages/other.py", "print(2)");
  const std::string mod = outside.root() + "/site-packages/mod.py";
  const std::string dir = outside.root() + "/site-packages";
  const std::string missing = outside.root() + "/site-packages/new.py";
  ScanOptions options = tree.Options();
  options.external_paths = {mod, missing, dir, mod};
  absl::StatusOr<Inventory> inv = Inventory::Scan(options, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->size(), 5u);  // ".", "a" and three external entries
  const InventoryEntry* e = inv->Find(mod);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, FileType::kRegular);
  EXPECT_TRUE(SameHash(e->hash, Xxh("print(1)")));
  const InventoryEntry* m = inv->Find(missing);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->type, FileType::kMissing);
  EXPECT_EQ(m->size, 0u);
  const InventoryEntry* d = inv->Find(dir);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->type, FileType::kDirectory);
  EXPECT_TRUE(SameHash(d->hash, NamesHash({"mod.py", "other.py"})));
  EXPECT_EQ(inv->Find(dir + "/other.py"), nullptr);  // not descended

  // The missing one appears: an addition (and a listing change).
  outside.Write("site-packages/new.py", "new");
  absl::StatusOr<Inventory> after = Inventory::Scan(options, &*inv);
  ASSERT_TRUE(after.ok()) << after.status();
  InventoryDiff diff = Inventory::Diff(*inv, *after);
  ASSERT_EQ(diff.changes.size(), 2u);
  EXPECT_EQ(diff.changes[0].path, dir);
  EXPECT_EQ(diff.changes[0].change, ChangeKind::kModified);
  EXPECT_EQ(diff.changes[1].path, missing);
  EXPECT_EQ(diff.changes[1].change, ChangeKind::kAdded);
  EXPECT_EQ(diff.changes[1].old_type, FileType::kMissing);

  options.external_paths = {"relative/path"};
  EXPECT_EQ(Inventory::Scan(options, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.external_paths = {outside.root() + "/x/../y"};
  EXPECT_EQ(Inventory::Scan(options, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A path a test looked for that this process cannot look at (a loop of
// links on the way; as another user, a folder it may not search) is an
// entry, not a failed scan: kOther, zeros, and a hash saying so; the path
// becoming readable is a change.
TEST(InventoryScanTest, ExternalPathsItCannotLookAtAreEntries) {
  TempTree tree;
  TempTree outside;
  tree.Write("a", "a");
  outside.Write("bin/.keep", "");
  const std::string loop = outside.root() + "/loop";
  ASSERT_EQ(symlink("loop", loop.c_str()), 0);
  const std::string through = loop + "/ruby";  // lstat: ELOOP
  const std::string fine = outside.root() + "/bin/.keep";
  ScanOptions options = tree.Options();
  options.external_paths = {through, fine, loop};
  absl::StatusOr<Inventory> inv = Inventory::Scan(options, nullptr);
  ASSERT_TRUE(inv.ok()) << inv.status();
  const InventoryEntry* e = inv->Find(through);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, FileType::kOther);
  EXPECT_EQ(e->mode, 0u);
  EXPECT_EQ(e->size, 0u);
  EXPECT_EQ(e->mtime_ns, 0);
  EXPECT_FALSE(e->hash.low64 == 0 && e->hash.high64 == 0);
  ASSERT_NE(inv->Find(fine), nullptr);
  EXPECT_EQ(inv->Find(fine)->type, FileType::kRegular);
  ASSERT_NE(inv->Find(loop), nullptr);
  EXPECT_EQ(inv->Find(loop)->type, FileType::kSymlink);  // the link itself

  // Looked at again, the same wall: no change.
  absl::StatusOr<Inventory> again = Inventory::Scan(options, &*inv);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(Inventory::Diff(*inv, *again).changes.empty());

  // The loop becomes a folder without the file: a change of that path.
  ASSERT_EQ(unlink(loop.c_str()), 0);
  outside.Write("loop/other", "");
  absl::StatusOr<Inventory> after = Inventory::Scan(options, &*inv);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->Find(through)->type, FileType::kMissing);
  bool changed = false;
  for (const InventoryChange& c : Inventory::Diff(*inv, *after).changes) changed |= c.path == through;
  EXPECT_TRUE(changed);

  if (geteuid() != 0) {  // a folder it may not search, a file it may not read
    outside.Write("locked/ruby", "x");
    outside.Write("secret", "s");
    const std::string locked = outside.root() + "/locked";
    const std::string secret = outside.root() + "/secret";
    ASSERT_EQ(chmod(locked.c_str(), 0), 0);
    ASSERT_EQ(chmod(secret.c_str(), 0), 0);
    options.external_paths = {locked + "/ruby", secret, locked};
    absl::StatusOr<Inventory> denied = Inventory::Scan(options, nullptr);
    chmod(locked.c_str(), 0755);
    ASSERT_TRUE(denied.ok()) << denied.status();
    EXPECT_EQ(denied->Find(locked + "/ruby")->type, FileType::kOther);
    EXPECT_EQ(denied->Find(secret)->type, FileType::kOther);
    EXPECT_EQ(denied->Find(locked)->type, FileType::kOther);
  }
}

TEST(InventoryScanTest, FifosAreOtherAndNeverOpened) {
  TempTree tree;
  tree.Write("f", "x");
  ASSERT_EQ(mkfifo((tree.root() + "/pipe").c_str(), 0644), 0);
  absl::StatusOr<Inventory> inv = tree.Scan();
  ASSERT_TRUE(inv.ok()) << inv.status();
  const InventoryEntry* e = inv->Find("pipe");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, FileType::kOther);
  EXPECT_TRUE(SameHash(e->hash, XXH128_hash_t{0, 0}));
}

TEST(InventoryScanTest, ThreadCountDoesNotChangeTheResult) {
  TempTree tree;
  for (int d = 0; d < 20; ++d) {
    for (int f = 0; f < 50; ++f) {
      tree.Write("d" + std::to_string(d) + "/s" + std::to_string(f % 5) + "/f" +
                     std::to_string(f),
                 test::Pattern(static_cast<size_t>(f * 37 + d), f));
    }
  }
  ScanOptions options = tree.Options();
  options.threads = 1;
  absl::StatusOr<Inventory> one = Inventory::Scan(options, nullptr);
  options.threads = 4;
  absl::StatusOr<Inventory> four = Inventory::Scan(options, nullptr);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(one->size(), 1u + 20 + 20 * 5 + 1000);
  EXPECT_EQ(one->entries(), four->entries());
}

TEST(InventoryStatCacheTest, WarmScanReusesHashesOfUnchangedFiles) {
  TempTree tree;
  tree.Write("a.txt", "alpha");
  tree.Write("dir/b.txt", "beta");
  tree.Write("dir/c.txt", "gamma");
  for (const char* p : {"a.txt", "dir/b.txt", "dir/c.txt"}) {
    tree.SetMtime(p, kOldMtimeNs);
  }
  absl::StatusOr<Inventory> cold = tree.Scan();
  ASSERT_TRUE(cold.ok()) << cold.status();
  EXPECT_EQ(cold->stats().files_hashed, 3u);

  absl::StatusOr<Inventory> warm = tree.Scan(GlobSet(), &*cold);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(warm->stats().files_hashed, 0u);
  EXPECT_EQ(warm->stats().files_reused, 3u);
  EXPECT_EQ(warm->stats().bytes_hashed, 0u);
  EXPECT_EQ(warm->entries(), cold->entries());

  // Same size, mtime put back: the ctime still moved, so it is re-read.
  // (The sleep puts the write in a later timestamp tick than the ctime the
  // first SetMtime left, on kernels without fine-grained timestamps.)
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  tree.Write("dir/b.txt", "BETA");
  tree.SetMtime("dir/b.txt", kOldMtimeNs);
  tree.Write("dir/d.txt", "new");
  absl::StatusOr<Inventory> next = tree.Scan(GlobSet(), &*warm);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->stats().files_hashed, 2u);  // b.txt and d.txt
  EXPECT_EQ(next->stats().files_reused, 2u);
  EXPECT_TRUE(SameHash(next->Find("dir/b.txt")->hash, Xxh("BETA")));
  // The listing of dir is right on a warm scan too.
  EXPECT_TRUE(SameHash(next->Find("dir")->hash,
                       NamesHash({"b.txt", "c.txt", "d.txt"})));
}

// git's racy-timestamp rule, made observable with a planted wrong hash.
TEST(InventoryStatCacheTest, RacyFilesAreRehashed) {
  TempTree tree;
  tree.Write("f", "true content");
  absl::StatusOr<Inventory> real = tree.Scan();
  ASSERT_TRUE(real.ok());
  std::vector<InventoryEntry> planted = real->entries();
  InventoryEntry* f = nullptr;
  for (InventoryEntry& e : planted) {
    if (e.path == "f") f = &e;
  }
  ASSERT_NE(f, nullptr);
  f->hash = Xxh("a stale hash from before the last write");
  const int64_t mtime = f->mtime_ns;

  // Taken in the file's timestamp tick (not strictly after the mtime): the
  // file may have been written after it was read, so it is read again.
  for (int64_t taken_at : {mtime, mtime - 1}) {
    absl::StatusOr<Inventory> previous =
        Inventory::FromEntries(planted, taken_at);
    ASSERT_TRUE(previous.ok());
    absl::StatusOr<Inventory> scan = tree.Scan(GlobSet(), &*previous);
    ASSERT_TRUE(scan.ok());
    EXPECT_EQ(scan->stats().files_hashed, 1u) << taken_at;
    EXPECT_TRUE(SameHash(scan->Find("f")->hash, Xxh("true content")));
  }
  // Strictly after: the cache is trusted and the file not read (the planted
  // hash survives, which proves no read happened).
  absl::StatusOr<Inventory> previous =
      Inventory::FromEntries(planted, mtime + 1);
  ASSERT_TRUE(previous.ok());
  absl::StatusOr<Inventory> scan = tree.Scan(GlobSet(), &*previous);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->stats().files_hashed, 0u);
  EXPECT_EQ(scan->stats().files_reused, 1u);
  EXPECT_TRUE(SameHash(scan->Find("f")->hash, f->hash));
}

TEST(InventoryStatCacheTest, AnyStatFieldDifferenceMeansARead) {
  TempTree tree;
  tree.Write("f", "content");
  tree.SetMtime("f", kOldMtimeNs);
  absl::StatusOr<Inventory> real = tree.Scan();
  ASSERT_TRUE(real.ok());
  const InventoryEntry base = *real->Find("f");
  auto mutators = std::vector<void (*)(InventoryEntry*)>{
      [](InventoryEntry* e) { e->size += 1; },
      [](InventoryEntry* e) { e->mtime_ns -= 1; },
      [](InventoryEntry* e) { e->ctime_ns -= 1; },
      [](InventoryEntry* e) { e->inode += 1; },
      [](InventoryEntry* e) { e->dev += 1; },
      [](InventoryEntry* e) { e->type = FileType::kSymlink; },
  };
  for (size_t i = 0; i < mutators.size(); ++i) {
    InventoryEntry e = base;
    e.hash = Xxh("stale");
    mutators[i](&e);
    absl::StatusOr<Inventory> previous =
        Inventory::FromEntries({e}, real->taken_at_ns());
    ASSERT_TRUE(previous.ok());
    absl::StatusOr<Inventory> scan = tree.Scan(GlobSet(), &*previous);
    ASSERT_TRUE(scan.ok());
    EXPECT_EQ(scan->stats().files_hashed, 1u) << "mutator " << i;
    EXPECT_TRUE(SameHash(scan->Find("f")->hash, Xxh("content")));
  }
}

TEST(InventoryTest, FromEntriesRejectsDuplicatesAndEmptyPaths) {
  InventoryEntry a;
  a.path = "a";
  EXPECT_FALSE(Inventory::FromEntries({a, a}, 0).ok());
  InventoryEntry empty;
  EXPECT_FALSE(Inventory::FromEntries({empty}, 0).ok());
  InventoryEntry nul;
  nul.path = std::string("a\0b", 3);
  EXPECT_FALSE(Inventory::FromEntries({nul}, 0).ok());
  InventoryEntry b;
  b.path = "b";
  absl::StatusOr<Inventory> inv = Inventory::FromEntries({b, a}, 7);
  ASSERT_TRUE(inv.ok());
  EXPECT_THAT(Paths(*inv), ElementsAre("a", "b"));
  EXPECT_EQ(inv->taken_at_ns(), 7);
}

}  // namespace
}  // namespace ste
