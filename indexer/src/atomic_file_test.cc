#include "ste/atomic_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace ste {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/ste-atomic-XXXXXX";
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Every name in the folder, dot files (the temporaries) included.
  std::set<std::string> Entries() {
    std::set<std::string> names;
    DIR* d = opendir(dir_.c_str());
    while (struct dirent* e = d ? readdir(d) : nullptr) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.insert(e->d_name);
    }
    if (d) closedir(d);
    return names;
  }
  std::string dir_;
};

TEST_F(AtomicFileTest, ReplacesTheFileWholeWithItsModeAndLeavesNoTemporary) {
  const std::string path = dir_ + "/report.xml";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new content").ok());
  EXPECT_EQ(Read(path), "new content");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/secret", "s", 0600).ok());
  ASSERT_EQ(stat((dir_ + "/secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Entries(), (std::set<std::string>{"report.xml", "secret"}));
}

TEST_F(AtomicFileTest, AFailureLeavesTheTargetAsItWasAndNoTemporary) {
  EXPECT_FALSE(WriteFileAtomically(dir_ + "/no/such/dir/x.xml", "x").ok());
  const std::string path = dir_ + "/index";
  ASSERT_TRUE(WriteFileAtomically(path, "v1").ok());
  {
    // Written, never committed (an error on the way): the target is v1.
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Create(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Write("half of v2").ok());
    EXPECT_EQ(Entries().size(), 2u) << "the temporary beside it";
    EXPECT_EQ((*file)->temp_path().rfind(dir_ + "/.tmp-index-", 0), 0u) << (*file)->temp_path();
  }
  EXPECT_EQ(Read(path), "v1");
  EXPECT_EQ(Entries(), std::set<std::string>{"index"});
  // A target that is a directory: the rename fails, the temporary goes.
  ASSERT_EQ(mkdir((dir_ + "/adir").c_str(), 0755), 0);
  EXPECT_FALSE(WriteFileAtomically(dir_ + "/adir", "x").ok());
  EXPECT_EQ(Entries(), (std::set<std::string>{"adir", "index"}));
}

TEST_F(AtomicFileTest, AWriterIsSpentOnceCommitted) {
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Create(dir_ + "/f");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Write("abc").ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ((*file)->fd(), -1);
  EXPECT_FALSE((*file)->Write("more").ok());
  EXPECT_FALSE((*file)->Commit().ok());
  file->reset();  // the destructor must not remove the committed file
  EXPECT_EQ(Read(dir_ + "/f"), "abc");
}

}  // namespace
}  // namespace ste
