// The interceptor torture suite: every scenario runs a tiny C program
// (cases/) under the real `ste run`, then reads the logs back with the
// real log reader and asserts on the records. Nothing is mocked.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ste/log_format.h"
#include "ste/log_reader.h"
#include "test_support.h"

namespace ste {
namespace {

const std::string kSte = ste::testing::SteBinary(STE_BINARY);
const std::string kPreload = STE_PRELOAD_LIBRARY;
const std::string kCases = STE_CASES_DIR;

std::string Case(const std::string& name) { return kCases + "/" + name; }

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

struct Traced {
  Spawned run;
  std::string log_dir;
  std::vector<ProcessLog> logs;
  absl::Status read_status;

  bool Has(const std::string& scope, RecordKind kind, const std::string& path) const {
    for (const ProcessLog& log : logs) {
      for (const LogRecord& r : log.records) {
        if (r.scope == scope && r.kind == kind && r.path == path) return true;
      }
    }
    return false;
  }
  bool HasAnyScope(RecordKind kind, const std::string& path) const {
    for (const ProcessLog& log : logs) {
      for (const LogRecord& r : log.records) {
        if (r.kind == kind && r.path == path) return true;
      }
    }
    return false;
  }
  std::set<std::string> Paths(RecordKind kind) const {
    std::set<std::string> paths;
    for (const ProcessLog& log : logs) {
      for (const LogRecord& r : log.records) {
        if (r.kind == kind) paths.insert(r.path);
      }
    }
    return paths;
  }
  std::set<std::string> Scopes() const {
    std::set<std::string> scopes;
    for (const ProcessLog& log : logs) {
      for (const LogRecord& r : log.records) scopes.insert(r.scope);
    }
    return scopes;
  }
  uint64_t Lost() const {
    uint64_t lost = 0;
    for (const ProcessLog& log : logs) lost += log.lost;
    return lost;
  }
  std::string Describe() const {
    std::string s = "exit " + std::to_string(run.exit_code) + "\nstderr: " + run.err +
                    "\nread: " + read_status.ToString() + "\n";
    size_t shown = 0;
    for (const ProcessLog& log : logs) {
      for (const LogRecord& r : log.records) {
        if (++shown > 80) return s + "...\n";
        s += std::to_string(log.pid) + " " + r.scope + " " +
             std::string(RecordKindName(r.kind)) + " " + r.path + "\n";
      }
    }
    return s;
  }
};

Traced RunTraced(const std::vector<std::string>& command,
                 const std::string& scope = "//r/t",
                 const std::vector<std::string>& extra_env = {}) {
  Traced t;
  t.log_dir = MakeTempDir();
  std::vector<std::string> argv = {kSte, "run", "--scope", scope, "--log-dir", t.log_dir, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  t.run = Spawn(argv, extra_env);
  t.read_status = ReadLogDir(t.log_dir, &t.logs);
  return t;
}

// A workspace: f ("hello"), d/{a,b}, l -> f, sub/f.
class Workspace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    WriteFile(dir_ + "/f", "hello\n");
    mkdir((dir_ + "/d").c_str(), 0755);
    WriteFile(dir_ + "/d/a", "a\n");
    WriteFile(dir_ + "/d/b", "b\n");
    ASSERT_EQ(symlink("f", (dir_ + "/l").c_str()), 0);
    mkdir((dir_ + "/sub").c_str(), 0755);
    WriteFile(dir_ + "/sub/f", "sub\n");
  }
  std::string P(const std::string& rel) const { return dir_ + "/" + rel; }
  std::string dir_;
};

// ---- each hooked call, one by one ----------------------------------------

struct Expect {
  RecordKind kind;
  const char* rel;
};
struct HookCase {
  const char* call;
  std::vector<Expect> expected;
  std::vector<Expect> unexpected;
};

std::ostream& operator<<(std::ostream& os, const HookCase& c) { return os << c.call; }

class HookCall : public Workspace, public ::testing::WithParamInterface<HookCase> {};

TEST_P(HookCall, RecordsWhatTheCallDependsOn) {
  const HookCase& c = GetParam();
  Traced t = RunTraced({Case("hook_call"), c.call, dir_});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.Describe();
  for (const Expect& e : c.expected) {
    EXPECT_TRUE(t.Has("//r/t", e.kind, P(e.rel)))
        << c.call << " should record " << RecordKindName(e.kind) << " " << e.rel << "\n"
        << t.Describe();
  }
  for (const Expect& e : c.unexpected) {
    EXPECT_FALSE(t.Has("//r/t", e.kind, P(e.rel)))
        << c.call << " should not record " << RecordKindName(e.kind) << " " << e.rel;
  }
}

constexpr RecordKind kC = RecordKind::kContent, kA = RecordKind::kAbsent,
                     kL = RecordKind::kListing, kW = RecordKind::kWrite;

std::string HookName(const ::testing::TestParamInfo<HookCase>& info) {
  return info.param.call;
}

INSTANTIATE_TEST_SUITE_P(
    EveryHook, HookCall,
    ::testing::Values(
        HookCase{"open", {{kC, "f"}}, {}}, HookCase{"open64", {{kC, "f"}}, {}},
        HookCase{"openat", {{kC, "f"}}, {}}, HookCase{"openat64", {{kC, "f"}}, {}},
        HookCase{"__open_2", {{kC, "f"}}, {}}, HookCase{"__open64_2", {{kC, "f"}}, {}},
        HookCase{"__openat_2", {{kC, "f"}}, {}}, HookCase{"__openat64_2", {{kC, "f"}}, {}},
        HookCase{"creat", {{kW, "new"}}, {{kC, "new"}}},
        HookCase{"creat64", {{kW, "new"}}, {{kC, "new"}}},
        HookCase{"open_write", {{kW, "new"}}, {{kC, "new"}}},
        HookCase{"open_rdwr_creat", {{kC, "f"}, {kW, "f"}}, {}},
        HookCase{"open_missing", {{kA, "missing"}}, {}},
        HookCase{"open_enotdir", {{kA, "f/x"}}, {}},
        HookCase{"fopen", {{kC, "f"}}, {{kW, "f"}}}, HookCase{"fopen64", {{kC, "f"}}, {}},
        HookCase{"fopen_w", {{kW, "new"}}, {{kC, "new"}}},
        HookCase{"fopen_a_plus", {{kC, "f"}, {kW, "f"}}, {}},
        HookCase{"fopen_missing", {{kA, "missing"}}, {}},
        HookCase{"freopen", {{kC, "f"}}, {}}, HookCase{"freopen64", {{kC, "f"}}, {}},
        HookCase{"stat", {{kC, "f"}}, {}}, HookCase{"stat64", {{kC, "f"}}, {}},
        HookCase{"lstat", {{kC, "l"}}, {}}, HookCase{"lstat64", {{kC, "l"}}, {}},
        HookCase{"fstatat", {{kC, "f"}}, {}}, HookCase{"fstatat64", {{kC, "f"}}, {}},
        HookCase{"statx", {{kC, "f"}}, {}}, HookCase{"stat_missing", {{kA, "missing"}}, {}},
        HookCase{"__xstat", {{kC, "f"}}, {}}, HookCase{"__lxstat", {{kC, "f"}}, {}},
        HookCase{"__fxstatat", {{kC, "f"}}, {}},
        HookCase{"access", {{kC, "f"}}, {}}, HookCase{"access_missing", {{kA, "missing"}}, {}},
        HookCase{"faccessat", {{kC, "f"}}, {}}, HookCase{"euidaccess", {{kC, "f"}}, {}},
        HookCase{"eaccess", {{kC, "f"}}, {}},
        HookCase{"readlink", {{kC, "l"}}, {}}, HookCase{"readlinkat", {{kC, "l"}}, {}},
        HookCase{"realpath", {{kC, "l"}, {kC, "f"}}, {}},
        HookCase{"opendir", {{kL, "d"}}, {}}, HookCase{"opendir_missing", {{kA, "missing"}}, {}},
        HookCase{"fdopendir", {{kL, "d"}}, {}}, HookCase{"scandir", {{kL, "d"}}, {}},
        HookCase{"scandir64", {{kL, "d"}}, {}}, HookCase{"scandirat", {{kL, "d"}}, {}},
        HookCase{"chdir", {{kC, "d"}}, {}}),
    HookName);

// ---- system calls made through syscall(3), not the libc wrappers --------------

class SyscallCall : public Workspace, public ::testing::WithParamInterface<HookCase> {};

TEST_P(SyscallCall, RecordsWhatItsWrapperWould) {
  const HookCase& c = GetParam();
  Traced t = RunTraced({Case("syscall_call"), c.call, dir_});
  if (t.run.exit_code == 77) GTEST_SKIP() << t.run.err;
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.Describe();
  for (const Expect& e : c.expected) {
    EXPECT_TRUE(t.Has("//r/t", e.kind, P(e.rel)))
        << c.call << " should record " << RecordKindName(e.kind) << " " << e.rel << "\n"
        << t.Describe();
  }
  for (const Expect& e : c.unexpected) {
    EXPECT_FALSE(t.Has("//r/t", e.kind, P(e.rel)))
        << c.call << " should not record " << RecordKindName(e.kind) << " " << e.rel;
  }
  EXPECT_TRUE(t.Paths(RecordKind::kUnfollowed).empty()) << t.Describe();
}

INSTANTIATE_TEST_SUITE_P(
    EverySyscall, SyscallCall,
    ::testing::Values(
        HookCase{"openat2", {{kC, "f"}}, {}},
        HookCase{"openat2_missing", {{kA, "missing"}}, {}},
        HookCase{"openat2_write", {{kW, "new"}}, {{kC, "new"}}},
        HookCase{"openat2_in_root", {{kC, "sub/f"}}, {}},
        HookCase{"openat", {{kC, "f"}}, {}},
        HookCase{"openat_missing", {{kA, "missing"}}, {}},
        HookCase{"openat_rdwr_creat", {{kC, "f"}, {kW, "f"}}, {}},
        HookCase{"open", {{kC, "f"}}, {}},
        HookCase{"creat", {{kW, "new"}}, {{kC, "new"}}},
        HookCase{"stat", {{kC, "f"}}, {}},
        HookCase{"stat_missing", {{kA, "missing"}}, {}},
        HookCase{"lstat", {{kC, "l"}}, {}},
        HookCase{"newfstatat", {{kC, "f"}}, {}},
        HookCase{"newfstatat_missing", {{kA, "missing"}}, {}},
        HookCase{"statx", {{kC, "f"}}, {}},
        HookCase{"statx_missing", {{kA, "missing"}}, {}},
        HookCase{"statx_empty_path", {{kC, "f"}}, {}},
        HookCase{"access", {{kC, "f"}}, {}},
        HookCase{"faccessat", {{kC, "f"}}, {}},
        HookCase{"faccessat2", {{kA, "missing"}}, {}},
        HookCase{"readlink", {{kC, "l"}}, {}},
        HookCase{"readlinkat", {{kC, "l"}}, {}},
        HookCase{"getdents64", {{kL, "d"}}, {}},
        HookCase{"getdents", {{kL, "d"}}, {}},
        HookCase{"chdir", {{kC, "d"}, {kC, "d/a"}}, {{kA, "a"}}},
        HookCase{"fchdir", {{kC, "sub/f"}}, {}},
        HookCase{"errno", {{kC, "f"}, {kA, "missing"}}, {}}),
    HookName);

TEST_F(Workspace, ExecThroughSyscallIsFollowedInTheScopeOfTheCall) {
  for (const char* how : {"execve", "execveat", "execveat_fd"}) {
    Traced t = RunTraced({Case("syscall_exec"), how, Case("opener"), P("f")});
    ASSERT_EQ(t.run.exit_code, 0) << how << "\n" << t.Describe();
    ASSERT_TRUE(t.read_status.ok()) << t.Describe();
    // The child ran traced (its environment had no ste variables), in the
    // scope its parent was in when it called exec.
    EXPECT_TRUE(t.Has("//r/t/child", kC, P("f"))) << how << "\n" << t.Describe();
    EXPECT_TRUE(t.Has("//r/t/child", kC, Case("opener"))) << how << "\n" << t.Describe();
    EXPECT_GE(t.logs.size(), 2u) << how << ": the exec'd image writes its own log";
    EXPECT_TRUE(t.Paths(RecordKind::kUnfollowed).empty()) << how << "\n" << t.Describe();
  }
  // What the exec hooks cannot follow, execve through syscall(3) cannot
  // either: a static program is recorded as unfollowed.
  Traced st = RunTraced({Case("syscall_exec"), "execve", Case("static_opener"), P("f")});
  ASSERT_EQ(st.run.exit_code, 0) << st.Describe();
  EXPECT_TRUE(st.Has("//r/t/child", RecordKind::kUnfollowed, Case("static_opener")))
      << st.Describe();
}

// ---- io_uring ---------------------------------------------------------------------

// ---- environment variables ----------------------------------------------

TEST_F(Workspace, AVariableReadIsRecordedByNameWithLibcsAnswer) {
  Traced t = RunTraced({Case("getenv_case"), "APP_MODE", "NOT_SET_HERE", "a/b%c", "STE_SCOPE", "A=B"}, "//r/t",
                       {"APP_MODE=fast", "a/b%c=odd"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_NE(t.run.out.find("APP_MODE=fast\nNOT_SET_HERE unset\na/b%c=odd\nSTE_SCOPE=//r/t\n"), std::string::npos)
      << t.run.out;
  EXPECT_TRUE(t.Has("//r/t", RecordKind::kAbsent, "/\x01ste-env:APP_MODE")) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", RecordKind::kAbsent, "/\x01ste-env:NOT_SET_HERE")) << "unset is a dependency too";
  EXPECT_TRUE(t.Has("//r/t", RecordKind::kAbsent, "/\x01ste-env:a%2Fb%25c")) << t.Describe();
  int env_records = 0;
  for (const ProcessLog& log : t.logs) {
    for (const LogRecord& r : log.records) {
      if (r.path.rfind("/\x01ste-env:", 0) != 0) continue;
      env_records++;
      EXPECT_EQ(r.op, STE_OP_GETENV);
      EXPECT_EQ(r.path.find("STE_"), std::string::npos) << "ste's own variables are never recorded";
      EXPECT_EQ(r.path.find('='), std::string::npos) << "no variable's name holds '='";
    }
  }
  EXPECT_EQ(env_records, 3) << "once each, whether read by getenv or secure_getenv; " << t.Describe();
}

TEST_F(Workspace, APathSearchDependsOnPath) {
  // execvp's search of PATH: another PATH may find another program.
  Traced t = RunTraced({"/bin/sh", "-c", "exec env true"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.HasAnyScope(RecordKind::kAbsent, "/\x01ste-env:PATH")) << t.Describe();
}

const char kIoUring[] = "<io_uring>";

TEST_F(Workspace, IoUringSetupIsRefusedWithEnosysUnderSte) {
  // Refused whatever the kernel would say: the case checks ENOSYS.
  Traced t = RunTraced({Case("io_uring_case"), "syscall", "refused"});
  EXPECT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_FALSE(t.HasAnyScope(RecordKind::kUnfollowed, kIoUring)) << t.Describe();

  Traced lib = RunTraced({Case("io_uring_case"), "liburing", "refused"});
  if (lib.run.exit_code == 77) {
    std::cout << "liburing part skipped: " << lib.run.err;
  } else {
    EXPECT_EQ(lib.run.exit_code, 0) << lib.Describe();
    EXPECT_FALSE(lib.HasAnyScope(RecordKind::kUnfollowed, kIoUring)) << lib.Describe();
  }
}

TEST_F(Workspace, IoUringAllowedBySteAllowIoUringMakesTheTestOpaque) {
  Spawned probe = Spawn({Case("io_uring_case"), "syscall", "probe"});
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  if (probe.out != "allowed\n") {
    GTEST_SKIP() << "the kernel refuses io_uring here, without ste: " << probe.out;
  }
  for (const char* how : {"syscall", "liburing"}) {
    Traced t = RunTraced({Case("io_uring_case"), how, "allowed"}, "//r/t",
                         {"STE_ALLOW_IO_URING=1"});
    if (t.run.exit_code == 77) {
      std::cout << how << " skipped: " << t.run.err;
      continue;
    }
    ASSERT_EQ(t.run.exit_code, 0) << how << "\n" << t.Describe();
    EXPECT_TRUE(t.Has("//r/t", RecordKind::kUnfollowed, kIoUring)) << how << "\n" << t.Describe();
  }
  // Only "1" opts out.
  Traced other = RunTraced({Case("io_uring_case"), "syscall", "refused"}, "//r/t",
                           {"STE_ALLOW_IO_URING=yes"});
  EXPECT_EQ(other.run.exit_code, 0) << other.Describe();
}

TEST_F(Workspace, WithoutALogDirIoUringIsNotRefused) {
  Spawned probe = Spawn({Case("io_uring_case"), "syscall", "probe"});
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  Spawned s = Spawn({Case("io_uring_case"), "syscall", "probe"},
                    {"LD_PRELOAD=" + kPreload, "STE_LOG_DIR="});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, probe.out) << "a process that records nothing is left alone";
}

// Node's libuv (1.45 and later, Node >= 20) can do fs.promises work through
// io_uring when UV_USE_IO_URING=1; refused, it falls back to its thread
// pool, whose calls are hooked. Debian 12's nodejs 18 uses Debian's libuv
// 1.44 (no io_uring): the reads are recorded either way.
TEST_F(Workspace, NodeFsReadsAreRecorded) {
  const std::string node = "/usr/bin/node";
  if (access(node.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << node << " (not a core test)";
  WriteFile(P("sync.txt"), "s");
  WriteFile(P("promise.txt"), "p");
  WriteFile(P("read.js"), R"(
const fs = require('fs');
const [sync, promised] = process.argv.slice(2);
if (fs.readFileSync(sync, 'utf8') !== 's') process.exit(3);
fs.promises.readFile(promised, 'utf8').then((text) => {
  if (text !== 'p') process.exit(4);
  return fs.promises.stat(promised);
}).catch((e) => { console.error(e); process.exit(5); });
)");
  const std::vector<std::string> command = {node, P("read.js"), P("sync.txt"), P("promise.txt")};
  Traced t = RunTraced(command, "//r/t", {"UV_USE_IO_URING=1"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  EXPECT_TRUE(t.Has("//r/t", kC, P("sync.txt"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("promise.txt"))) << t.Describe();
  EXPECT_FALSE(t.HasAnyScope(RecordKind::kUnfollowed, kIoUring)) << t.Describe();

  // Allowed: a read the library cannot see makes the test opaque; it is
  // never simply missing.
  Traced allowed = RunTraced(command, "//r/t", {"UV_USE_IO_URING=1", "STE_ALLOW_IO_URING=1"});
  ASSERT_EQ(allowed.run.exit_code, 0) << allowed.Describe();
  bool opaque = allowed.Has("//r/t", RecordKind::kUnfollowed, kIoUring);
  EXPECT_TRUE(allowed.Has("//r/t", kC, P("promise.txt")) || opaque) << allowed.Describe();
  std::cout << node << " with UV_USE_IO_URING=1 and STE_ALLOW_IO_URING=1: "
            << (opaque ? "set up io_uring (recorded as unfollowed)" : "no io_uring") << "\n";
}

TEST_F(Workspace, TemporaryFilesFromTheMkstempFamilyAreOutputs) {
  for (const char* call : {"mkstemp", "mkdtemp"}) {
    Traced t = RunTraced({Case("hook_call"), call, dir_});
    ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
    std::string created = t.run.out.substr(0, t.run.out.find('\n'));
    ASSERT_EQ(created.rfind(dir_ + "/tmp", 0), 0u) << created;
    EXPECT_TRUE(t.Has("//r/t", kW, created)) << call << "\n" << t.Describe();
  }
}

// ---- paths -----------------------------------------------------------------

TEST_F(Workspace, RelativeAndDirfdPathsAfterChdir) {
  Traced t = RunTraced({Case("paths_after_chdir"), dir_});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("sub/f"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kA, P("sub/at_missing"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kA, P("sub/rel_missing"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("f"))) << t.Describe();
  for (const std::string& p : t.Paths(kC)) {
    EXPECT_EQ(p.find("/./"), std::string::npos) << p;
    EXPECT_EQ(p.find("/../"), std::string::npos) << p;
    EXPECT_EQ(p.find("//"), std::string::npos) << p;
  }
}

TEST_F(Workspace, PathsWithSpacesNewlinesAndNonUtf8Bytes) {
  WriteFile(P("with space"), "1");
  WriteFile(P("new\nline"), "2");
  WriteFile(P("bytes\xff\xfe"), "3");
  Traced t = RunTraced({Case("odd_names"), dir_});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("with space")));
  EXPECT_TRUE(t.Has("//r/t", kC, P("new\nline")));
  EXPECT_TRUE(t.Has("//r/t", kC, P("bytes\xff\xfe")));
}

TEST_F(Workspace, DlopenByPathAndByBareNameKeepsTheCallersRunpath) {
  std::string plugin = kCases + "/plugins/libste_case_plugin.so";
  Traced by_path = RunTraced({Case("dlopen_case"), plugin});
  ASSERT_EQ(by_path.run.exit_code, 0) << by_path.Describe();
  EXPECT_TRUE(by_path.Has("//r/t", kC, plugin)) << by_path.Describe();

  // Without ste a bare name resolves through the program's RUNPATH...
  ASSERT_EQ(Spawn({Case("dlopen_case"), "libste_case_plugin.so"}).exit_code, 0);
  // ...and it must still resolve with the interceptor in between.
  Traced by_name = RunTraced({Case("dlopen_case"), "libste_case_plugin.so"});
  ASSERT_EQ(by_name.run.exit_code, 0) << by_name.Describe();
  EXPECT_TRUE(by_name.Has("//r/t", kC, plugin)) << by_name.Describe();
}

TEST_F(Workspace, ProgramAndItsSharedLibrariesAreRecorded) {
  Traced t = RunTraced({Case("opener"), P("f")});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, Case("opener"))) << t.Describe();
  bool libc = false;
  for (const std::string& p : t.Paths(kC)) libc |= p.find("/libc.so.6") != std::string::npos;
  EXPECT_TRUE(libc) << t.Describe();
  // The interceptor itself is not a dependency of the test.
  EXPECT_FALSE(t.HasAnyScope(kC, kPreload));
}

TEST_F(Workspace, ErrnoIsPreserved) {
  Traced t = RunTraced({Case("errno_kept"), dir_});
  EXPECT_EQ(t.run.exit_code, 0) << t.Describe();
}

// ---- processes ---------------------------------------------------------------

TEST_F(Workspace, EightThreadsOpeningWhileAnotherForks) {
  Traced t = RunTraced({Case("threads_fork"), dir_});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  EXPECT_EQ(t.Lost(), 0u);
  for (int th = 0; th < 8; th++) {
    for (int k = 0; k < 300; k++) {
      std::string p = P("t" + std::to_string(th) + "_" + std::to_string(k));
      ASSERT_TRUE(t.Has("//r/t", kA, p)) << p;
    }
  }
  std::set<uint32_t> child_pids;
  for (int c = 0; c < 20; c++) {
    std::string p = P("child" + std::to_string(c));
    bool found = false;
    for (const ProcessLog& log : t.logs) {
      for (const LogRecord& r : log.records) {
        if (r.path == p && r.kind == kA && r.scope == "//r/t") {
          found = true;
          child_pids.insert(log.pid);
        }
      }
    }
    EXPECT_TRUE(found) << p;
  }
  EXPECT_EQ(child_pids.size(), 20u) << "each child writes its own log";
}

TEST_F(Workspace, VforkThenExec) {
  Traced t = RunTraced({Case("vfork_exec"), Case("opener"), P("f")});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("f"))) << t.Describe();
}

TEST_F(Workspace, PosixSpawnpWithAnEmptyEnvironment) {
  // By absolute path, and by bare name through PATH.
  Traced t = RunTraced({Case("spawn_empty_env"), Case("opener"), P("f")});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("f"))) << t.Describe();

  std::string path = "PATH=" + kCases + ":" + std::getenv("PATH");
  Traced by_name = RunTraced({Case("spawn_empty_env"), "opener", P("sub/f")}, "//r/t", {path});
  ASSERT_EQ(by_name.run.exit_code, 0) << by_name.Describe();
  EXPECT_TRUE(by_name.Has("//r/t", kC, P("sub/f"))) << by_name.Describe();
  EXPECT_TRUE(by_name.Has("//r/t", kC, Case("opener"))) << by_name.Describe();
}

TEST_F(Workspace, ExecveWithACleanedEnvironment) {
  Traced t = RunTraced({Case("execve_clean_env"), Case("opener"), P("f")});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("f"))) << t.Describe();

  Traced env_i = RunTraced({"/usr/bin/env", "-i", Case("opener"), P("sub/f")});
  ASSERT_EQ(env_i.run.exit_code, 0) << env_i.Describe();
  EXPECT_TRUE(env_i.Has("//r/t", kC, P("sub/f"))) << env_i.Describe();
}

TEST_F(Workspace, ShellPipelineIsAttributedToTheScope) {
  Traced t = RunTraced(
      {"/bin/sh", "-c",
       "cat '" + P("f") + "' | grep -c hello > /dev/null; cat '" + P("d/a") +
           "' | wc -l > /dev/null; ls '" + P("d") + "' > /dev/null"},
      "//r/tests/pipeline.sh");
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/tests/pipeline.sh", kC, P("f"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/tests/pipeline.sh", kC, P("d/a"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/tests/pipeline.sh", kL, P("d"))) << t.Describe();
  EXPECT_EQ(t.Scopes(), std::set<std::string>{"//r/tests/pipeline.sh"});
  EXPECT_GE(t.logs.size(), 5u) << "sh, cat, grep, cat, wc, ls each log";
}

// A program whose start-up records (itself, libc, the loader) its parent
// already wrote in the same scope writes no log at all (STE_SEEN); what it
// reads of its own still makes one. Nothing is lost: the parent's log has
// the program and the libraries.
TEST_F(Workspace, AChildThatOnlyRepeatsWhatItsParentWroteMakesNoLog) {
  Traced t = RunTraced({"/bin/sh", "-c", "/bin/true; /bin/true; /bin/true; cat '" + P("f") + "'"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  ASSERT_EQ(t.logs.size(), 2u) << "the shell's and cat's, none for true\n" << t.Describe();
  const ProcessLog& shell = t.logs[0].pid < t.logs[1].pid ? t.logs[0] : t.logs[1];
  const ProcessLog& cat = t.logs[0].pid < t.logs[1].pid ? t.logs[1] : t.logs[0];
  EXPECT_TRUE(t.Has("//r/t", kC, "/bin/true")) << t.Describe();
  bool libc = false;
  for (const LogRecord& r : shell.records) libc |= r.path.find("/libc.so") != std::string::npos;
  EXPECT_TRUE(libc) << t.Describe();
  // cat's own log: what it read, not what the shell wrote for it.
  ASSERT_EQ(cat.records.size(), 1u) << t.Describe();
  EXPECT_EQ(cat.records[0].path, P("f"));
  EXPECT_EQ(t.Lost(), 0u);
}

TEST_F(Workspace, FiveDeepExecChain) {
  Traced t = RunTraced({Case("exec_chain"), "5", P("f")});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, P("f"))) << t.Describe();
  EXPECT_EQ(t.Scopes(), std::set<std::string>{"//r/t"});
  ASSERT_EQ(t.logs.size(), 6u) << "one log per image";
  for (const ProcessLog& log : t.logs) EXPECT_EQ(log.pid, t.logs[0].pid);
}

TEST_F(Workspace, ChildThatClosesEveryDescriptorThenGrowsItsLog) {
  Traced t = RunTraced({Case("close_all_fds"), dir_, "5000"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  EXPECT_EQ(t.Lost(), 0u);
  EXPECT_TRUE(t.Has("//r/t", kC, P("f")));
  for (int i = 0; i < 5000; i++) {
    ASSERT_TRUE(t.Has("//r/t", kA, P("closed_" + std::to_string(i)))) << i;
  }
}

TEST_F(Workspace, SigkilledProcessLosesNothing) {
  Traced t = RunTraced({Case("kill_self"), dir_});
  EXPECT_EQ(t.run.exit_code, 128 + 9);
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  EXPECT_TRUE(t.Has("//r/t", kC, P("f"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kA, P("before_kill"))) << t.Describe();
}

TEST_F(Workspace, UnderscoreExitWithoutFlush) {
  Traced t = RunTraced({Case("exit_no_flush"), dir_});
  EXPECT_EQ(t.run.exit_code, 3);
  EXPECT_TRUE(t.Has("//r/t", kC, P("f"))) << t.Describe();
}

TEST_F(Workspace, HundredThousandDistinctFilesInOneProcess) {
  Traced t = RunTraced({Case("many_files"), dir_, "100000"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  EXPECT_EQ(t.Lost(), 0u);
  std::set<std::string> absent = t.Paths(kA);
  char name[64];
  for (int i = 0; i < 100000; i++) {
    std::snprintf(name, sizeof name, "many/%07d", i);
    ASSERT_TRUE(absent.count(P(name))) << name;
  }
}

TEST_F(Workspace, StaticallyLinkedChildIsRecordedAsUnfollowed) {
  std::string static_opener = Case("static_opener");
  Traced t = RunTraced({"/bin/sh", "-c", "'" + static_opener + "' '" + P("f") + "'"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", RecordKind::kUnfollowed, static_opener)) << t.Describe();
  EXPECT_FALSE(t.HasAnyScope(kC, P("f"))) << "a static child cannot be seen";

  // Started directly by `ste run`: no interceptor ran at all.
  Traced direct = RunTraced({static_opener, P("f")});
  ASSERT_EQ(direct.run.exit_code, 0) << direct.Describe();
  EXPECT_TRUE(direct.Has("//r/t", RecordKind::kUnfollowed, static_opener)) << direct.Describe();
  EXPECT_NE(direct.run.err.find("unfollowed"), std::string::npos) << direct.run.err;
}

TEST_F(Workspace, SetuidChildIsRecordedAsUnfollowed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a setuid binary owned by another user";
  std::string copy = P("suid_opener");
  ASSERT_EQ(Spawn({"/bin/cp", Case("opener"), copy}).exit_code, 0);
  ASSERT_EQ(chown(copy.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(copy.c_str(), 04755), 0);
  Traced t = RunTraced({"/bin/sh", "-c", "'" + copy + "' /etc/hostname"});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", RecordKind::kUnfollowed, copy)) << t.Describe();
}

TEST_F(Workspace, ScopesNestAndChildrenInheritTheScopeAtForkTime) {
  for (const char* f : {"f1", "f2", "f3", "f4", "f5", "f6"}) WriteFile(P(f), f);
  Traced t = RunTraced({Case("scopes"), dir_});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t/a", kC, P("f1"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t/a", kC, P("f2"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t/a/c", kC, P("f3"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t/a/b/deeper", kC, P("f4"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t/a/b/deeper", kC, P("f6"))) << "system() child, via environ";
  EXPECT_TRUE(t.Has("//r/t", kC, P("f5"))) << t.Describe();
  EXPECT_FALSE(t.Has("//r/t", kC, P("f1")));
  EXPECT_FALSE(t.Has("//r/t/a", kC, P("f5")));
  // What the programs of each scope were loaded with is that scope's: the
  // system() shell, the first of //r/t/a/b/deeper, records libc there
  // although the process above it wrote libc under //r/t (STE_SEEN names
  // the scope).
  std::string libc;
  for (const ProcessLog& log : t.logs) {
    for (const LogRecord& r : log.records) {
      if (r.path.find("/libc.so") != std::string::npos) libc = r.path;
    }
  }
  ASSERT_FALSE(libc.empty()) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kC, libc)) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t/a/b/deeper", kC, libc)) << t.Describe();
}

// ---- control paths (ste/control.h) ------------------------------------------

TEST_F(Workspace, ListingsPausedThroughControlPaths) {
  for (const char* d : {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L"}) {
    ASSERT_EQ(mkdir(P(d).c_str(), 0755), 0) << d;
    WriteFile(P(std::string(d) + "/entry"), d);
  }
  Traced t = RunTraced({Case("listing_pause"), dir_});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  EXPECT_EQ(t.Lost(), 0u);
  // A: before any pause. C, E: after a resume, once unnested. F: another
  // thread while the main one is paused; J: the main thread while that one
  // is. H: a forked child after its own resume. I: an exec'd image. L:
  // listed paused, then again after the resume (the dedup set must not
  // have remembered the paused one). B (opendir, scandir, fdopendir), D
  // (nested), K, G (inherited by fork): paused.
  std::set<std::string> listed;
  for (const std::string& path : t.Paths(kL)) {
    if (path.compare(0, dir_.size() + 1, dir_ + "/") == 0) listed.insert(path);
  }
  EXPECT_EQ(listed, (std::set<std::string>{P("A"), P("C"), P("E"), P("F"), P("H"), P("I"),
                                           P("J"), P("L")}))
      << t.Describe();
  // Looked up while paused, not listings: recorded as usual.
  EXPECT_TRUE(t.Has("//r/t", kA, P("M"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kA, P("N"))) << "a failed opendir is a lookup";
  EXPECT_TRUE(t.Has("//r/t", kC, P("B"))) << "open(B, O_DIRECTORY) is content";
  // The control paths, known or not, are never recorded.
  for (const ProcessLog& log : t.logs) {
    for (const LogRecord& r : log.records) {
      // No control path (Python's own getenv reads are "/\x01ste-env:" records).
      EXPECT_NE(r.path.compare(0, 6, "/\x01ste/"), 0) << RecordKindName(r.kind) << " " << r.path;
    }
  }
}

TEST_F(Workspace, PythonPausesListingsWithOsStat) {
  const std::string python = "/usr/bin/python3";
  if (access(python.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << python;
  for (const char* d : {"X", "Y", "Z", "W"}) ASSERT_EQ(mkdir(P(d).c_str(), 0755), 0) << d;
  // os.stat is stat64, os.lstat lstat64, os.stat(follow_symlinks=False)
  // fstatat64 (Debian 12, glibc 2.36): each must reach the interceptor.
  const std::string program = R"(
import os, sys
def control(path, call=os.stat, **kw):
    try:
        call(path, **kw)
    except FileNotFoundError:
        return
    sys.exit("control path exists: %r" % path)
x, y, z, w = sys.argv[1:]
control("/\x01ste/pause-listings")
os.listdir(x)
control("/\x01ste/resume-listings")
os.listdir(y)
control("/\x01ste/pause-listings", os.lstat)
with os.scandir(z) as it:
    list(it)
control("/\x01ste/resume-listings", os.stat, follow_symlinks=False)
os.listdir(w)
)";
  Traced t = RunTraced({python, "-c", program, P("X"), P("Y"), P("Z"), P("W")});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  ASSERT_TRUE(t.read_status.ok()) << t.read_status;
  EXPECT_FALSE(t.HasAnyScope(kL, P("X"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kL, P("Y"))) << t.Describe();
  EXPECT_FALSE(t.HasAnyScope(kL, P("Z"))) << t.Describe();
  EXPECT_TRUE(t.Has("//r/t", kL, P("W"))) << t.Describe();
  for (const ProcessLog& log : t.logs) {
    for (const LogRecord& r : log.records) {
      // No control path (Python's own getenv reads are "/\x01ste-env:" records).
      EXPECT_NE(r.path.compare(0, 6, "/\x01ste/"), 0) << RecordKindName(r.kind) << " " << r.path;
    }
  }
}

// ---- environment and packaging ------------------------------------------------

TEST_F(Workspace, AnotherPreloadIsKeptAndOursAppended) {
  std::string other = kCases + "/plugins/libste_case_plugin.so";
  Traced t = RunTraced({"/bin/sh", "-c", "printf %s \"$LD_PRELOAD\" > '" + P("out") + "'"},
                       "//r/t", {"LD_PRELOAD=" + other});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  EXPECT_EQ(ReadFile(P("out")), other + " " + kPreload);
}

TEST_F(Workspace, WithoutALogDirTheLibraryOnlyPassesThrough) {
  Spawned s = Spawn({Case("errno_kept"), dir_}, {"LD_PRELOAD=" + kPreload, "STE_LOG_DIR="});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.err, "");
}

TEST(Packaging, PreloadNeedsOnlyLibcAndExportsOnlyHooksAndApi) {
  Spawned needed = Spawn({"/usr/bin/readelf", "-d", kPreload});
  ASSERT_EQ(needed.exit_code, 0) << needed.err;
  std::istringstream lines(needed.out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    if (line.find("(NEEDED)") == std::string::npos) continue;
    count++;
    bool allowed = line.find("[libc.so.6]") != std::string::npos ||
                   line.find("[libdl.so.2]") != std::string::npos ||
                   line.find("[ld-linux") != std::string::npos;
    EXPECT_TRUE(allowed) << line;
  }
  EXPECT_GE(count, 1);

  Spawned symbols = Spawn({"/usr/bin/nm", "-D", "--defined-only", kPreload});
  ASSERT_EQ(symbols.exit_code, 0) << symbols.err;
  const std::set<std::string> allowed = {
      "ste_scope_push", "ste_scope_pop", "ste_scope_current", "open", "open64", "openat",
      "openat64", "creat", "creat64", "__open_2", "__open64_2", "__openat_2", "__openat64_2",
      "fopen", "fopen64", "freopen", "freopen64", "stat", "stat64", "lstat", "lstat64",
      "fstatat", "fstatat64", "statx", "__xstat", "__xstat64", "__lxstat", "__lxstat64",
      "__fxstatat", "__fxstatat64", "access", "faccessat", "euidaccess", "eaccess",
      "readlink", "readlinkat", "realpath", "opendir", "fdopendir", "scandir", "scandir64",
      "scandirat", "chdir", "fchdir", "dlopen", "_Fork", "execve", "execv", "execvp",
      "execvpe", "execl", "execlp", "execle", "fexecve", "execveat", "posix_spawn",
      "posix_spawnp", "system", "popen", "mkstemp", "mkstemp64", "mkostemp", "mkostemp64",
      "mkstemps", "mkstemps64", "mkostemps", "mkostemps64", "mkdtemp", "syscall",
      "io_uring_setup", "io_uring_queue_init", "io_uring_queue_init_params",
      "io_uring_queue_init_mem", "getenv", "secure_getenv"};
  std::istringstream syms(symbols.out);
  std::set<std::string> exported;
  while (std::getline(syms, line)) {
    std::string name = line.substr(line.rfind(' ') + 1);
    exported.insert(name);
    EXPECT_TRUE(allowed.count(name)) << "unexpected export " << name;
  }
  EXPECT_TRUE(exported.count("ste_scope_push"));
  EXPECT_TRUE(exported.count("open"));
  EXPECT_TRUE(exported.count("posix_spawnp"));
  EXPECT_TRUE(exported.count("syscall"));
}

// ---- the ste commands themselves ------------------------------------------------

TEST_F(Workspace, RunPassesTheExitStatusThroughAndRejectsBadUsage) {
  EXPECT_EQ(RunTraced({"/bin/sh", "-c", "exit 7"}).run.exit_code, 7);
  EXPECT_EQ(Spawn({kSte, "run", "--bogus", "--", "/bin/true"}).exit_code, 2);
  EXPECT_EQ(Spawn({kSte, "run", "--scope", "relative/x", "--", "/bin/true"}).exit_code, 2);
  EXPECT_EQ(Spawn({kSte, "run"}).exit_code, 2);
  EXPECT_EQ(Spawn({kSte, "run", "--", "/nonexistent/program"}).exit_code, 127);
  Spawned help = Spawn({kSte, "run", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--log-dir"), std::string::npos);
  Spawned default_dir = Spawn({kSte, "run", "--", "/bin/true"});
  EXPECT_EQ(default_dir.exit_code, 0);
  EXPECT_NE(default_dir.err.find("ste: logs in "), std::string::npos);
}

TEST_F(Workspace, LogDumpPrintsEveryRecordAsTextAndJson) {
  Traced t = RunTraced({Case("odd_names"), dir_});
  WriteFile(P("with space"), "1");
  WriteFile(P("new\nline"), "2");
  WriteFile(P("bytes\xff\xfe"), "3");
  t = RunTraced({Case("odd_names"), dir_});
  ASSERT_EQ(t.run.exit_code, 0) << t.Describe();
  size_t records = 0;
  for (const ProcessLog& log : t.logs) records += log.records.size();

  Spawned text = Spawn({kSte, "log", "dump", t.log_dir});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(::ste::testing::Lines(text.out), records);
  EXPECT_NE(text.out.find("\t//r/t\tcontent\topen\t" + P("new\\nline") + "\n"), std::string::npos)
      << text.out;

  Spawned json = Spawn({kSte, "log", "dump", "--json", t.log_dir});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(::ste::testing::Lines(json.out), records);
  for (const char* key : {"\"pid\":", "\"ppid\":", "\"scope\":\"//r/t\"", "\"kind\":\"content\"",
                          "\"path\":"}) {
    EXPECT_NE(json.out.find(key), std::string::npos) << key;
  }
  EXPECT_NE(json.out.find("\"path_hex\":\""), std::string::npos) << "non-UTF-8 path kept in hex";

  EXPECT_EQ(Spawn({kSte, "log", "dump", "--bogus", t.log_dir}).exit_code, 2);
  EXPECT_EQ(Spawn({kSte, "log", "dump", "--help"}).exit_code, 0);
}

TEST_F(Workspace, LogDumpReportsATruncatedLogAndStillPrintsTheRest) {
  Traced t = RunTraced({"/bin/sh", "-c", "cat '" + P("f") + "' > /dev/null"});
  ASSERT_EQ(t.run.exit_code, 0);
  ASSERT_GE(t.logs.size(), 2u);
  const ProcessLog& victim = t.logs.back();
  // Cut inside its first record (cat's log may hold only its open of f:
  // what it was loaded with, the shell wrote already, STE_SEEN).
  ASSERT_EQ(truncate(victim.file.c_str(), STE_LOG_HEADER_SIZE + 8), 0);
  Spawned dump = Spawn({kSte, "log", "dump", t.log_dir});
  EXPECT_EQ(dump.exit_code, 1);
  EXPECT_NE(dump.err.find(victim.file), std::string::npos) << dump.err;
  EXPECT_NE(dump.err.find("offset"), std::string::npos) << dump.err;
  // The shell's own log is whole and still printed.
  EXPECT_NE(dump.out.find("\tloaded\t/bin/sh\n"), std::string::npos) << dump.out;
}

}  // namespace
}  // namespace ste
