// Concurrency on one store with real processes (issue 15, item 5), SQLite
// and PostgreSQL (a real server, tests/support/pg_test_server.h):
// eight `ste select` loops run while `ste record` (twice) and `ste baseline
// gc` write the same store. Every select must exit 0 with a valid
// selection that names the baseline it used; none may fail with "database
// is locked". The loops run until the writers are done (a stop file: a
// condition, not a time); how many selects overlapped is reported, not
// asserted.
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pg_test_server.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::MakeTempDir;
using ::ste::testing::ReadFile;
using ::ste::testing::Spawn;
using ::ste::testing::Spawned;
using ::ste::testing::WriteFile;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);

// Checks every select output a loop wrote: one JSON document per run
// (out.N), with its exit code (rc.N). Prints "runs bad" and the first
// problem.
const char kCheck[] = R"PY(
import glob, json, os, sys
runs = bad = 0
first = ""
for rc_file in sorted(glob.glob(os.path.join(sys.argv[1], "rc.*"))):
    n = rc_file.rsplit(".", 1)[1]
    rc = open(rc_file).read().strip()
    out = open(os.path.join(sys.argv[1], "out." + n)).read()
    err = open(os.path.join(sys.argv[1], "err." + n)).read()
    runs += 1
    problem = ""
    if rc != "0":
        problem = "exit %s: %s" % (rc, err)
    elif "locked" in err or "busy" in err.lower():
        problem = "locked: " + err
    else:
        try:
            d = json.loads(out)
            if d["mode"] not in ("all", "subset", "none"):
                problem = "mode " + d["mode"]
            elif d["baseline"] is None or not isinstance(d["baseline"].get("id"), int):
                problem = "no baseline named: " + d["reason"]
            elif d["mode"] != "none" and not d["tests"]:
                problem = "no tests in mode " + d["mode"]
        except Exception as e:
            problem = "unreadable json (%s): %r" % (e, out[:200])
    if problem:
        bad += 1
        first = first or problem
print(runs, bad, first)
)PY";

// `store_toml`: the [store] table's lines ("" for the default SQLite store).
void EightSelectsWhileRecordAndGcWrite(const std::string& store_toml) {
  const std::string root = MakeTempDir();
  for (int i = 0; i < 6; i++) {
    WriteFile(root + "/lib/l" + std::to_string(i) + ".sh", "f() { echo " + std::to_string(i) + "; }\n");
    WriteFile(root + "/tests/test_" + std::to_string(i) + ".sh",
              ". lib/l" + std::to_string(i) + ".sh\n[ \"$(f)\" = " + std::to_string(i) + " ]\n");
  }
  WriteFile(root + "/ste.toml", "[tests]\ninclude = [\"tests/test_*.sh\"]\n[runner]\ncommand = \"sh {test}\"\n" +
                                    store_toml);
  WriteFile(root + "/.gitignore", ".ste/\n");
  ::ste::testing::InitGitRepo(root);
  ASSERT_EQ(::ste::testing::Git(root, {"add", "-A"}).exit_code, 0);
  ASSERT_EQ(::ste::testing::Git(root, {"commit", "-q", "-m", "init"}).exit_code, 0);
  Spawned first = Spawn({kSte, "record", "--progress", "none"}, {}, root);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  WriteFile(root + "/lib/l1.sh", "f() { echo 1; }  # changed\n");

  const std::string work = MakeTempDir();
  const std::string stop = work + "/stop";
  std::vector<std::unique_ptr<::ste::testing::Process>> loops;
  for (int k = 0; k < 8; k++) {
    const std::string dir = work + "/loop" + std::to_string(k);
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    // At least one select, then until the stop file exists.
    const std::string script =
        "n=0; while :; do n=$((n+1)); \"$0\" select --format json > \"$1/out.$n\" 2> \"$1/err.$n\"; "
        "echo $? > \"$1/rc.$n\"; [ -e \"$2\" ] && break; done";
    loops.push_back(std::make_unique<::ste::testing::Process>(
        std::vector<std::string>{"sh", "-c", script, kSte, dir, stop}, std::vector<std::string>{}, root,
        dir + "/loop.out", dir + "/loop.err"));
  }
  // The writers, one after another, while the selects run.
  for (int round = 0; round < 2; round++) {
    ASSERT_EQ(::ste::testing::Git(root, {"commit", "-q", "--allow-empty", "-m", "round"}).exit_code, 0);
    Spawned r = Spawn({kSte, "record", "--progress", "none"}, {}, root);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  Spawned gc = Spawn({kSte, "baseline", "gc", "--keep", "1"}, {}, root);
  EXPECT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  WriteFile(stop, "");
  for (auto& loop : loops) EXPECT_EQ(loop->Wait(300), 0) << loop->err();

  size_t total = 0;
  for (int k = 0; k < 8; k++) {
    Spawned check = Spawn({"/usr/bin/python3", "-c", kCheck, work + "/loop" + std::to_string(k)});
    ASSERT_EQ(check.exit_code, 0) << check.err;
    size_t runs = 0, bad = 0;
    ASSERT_EQ(std::sscanf(check.out.c_str(), "%zu %zu", &runs, &bad), 2) << check.out;
    EXPECT_GE(runs, 1u);
    EXPECT_EQ(bad, 0u) << "loop " << k << ": " << check.out;
    total += runs;
  }
  std::printf("StoreConcurrency: %zu selects by 8 loops while 2 records and a gc wrote the store\n", total);
}

TEST(StoreConcurrency, EightSelectsWhileRecordAndGcWriteTheSameSqliteStore) {
  EightSelectsWhileRecordAndGcWrite("");
}

TEST(StoreConcurrencyPostgres, EightSelectsWhileRecordAndGcWriteTheSamePostgresStore) {
  absl::StatusOr<::ste::testing::PgTestServer*> server = ::ste::testing::PgTestServer::Shared();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> url = (*server)->CreateDatabase();
  ASSERT_TRUE(url.ok()) << url.status();
  EightSelectsWhileRecordAndGcWrite("[store]\nurl = \"" + *url + "\"\n");
}

}  // namespace
}  // namespace ste
