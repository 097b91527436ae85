// Environment variables as dependencies (ste/environment.h): view names
// and their escapes, the --env-file format, the view's value in a scan,
// env_ignore in the reduction, env_run_all and the explanation in the
// selection.
#include "ste/environment.h"

#include <stdlib.h>
#include <xxhash.h>

#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inventory_test_util.h"
#include "ste/inventory.h"
#include "ste/log_format.h"
#include "ste/log_reduction.h"
#include "ste/selection.h"

namespace ste {
namespace {

using ::testing::HasSubstr;

TEST(EnvViewNames, EscapeOnlyPercentAndSlashAndRoundTrip) {
  EXPECT_EQ(EnvViewPath("HOME"), "/\x01ste-env:HOME");
  EXPECT_EQ(EnvViewName("a/b%c"), "ste-env:a%2Fb%25c");
  for (std::string name : {"HOME", "a/b%c", "%2F", "x y\xff\x01", "/", "%"}) {
    std::optional<View> v = ParseView(EnvViewPath(name));
    ASSERT_TRUE(v.has_value()) << name;
    EXPECT_EQ(v->kind, ViewKind::kEnv);
    EXPECT_EQ(v->dir, "/");
    EXPECT_EQ(v->arg, name);
    EXPECT_TRUE(IsEnvViewPath(EnvViewPath(name)));
  }
}

TEST(EnvViewNames, OneSpellingPerNameAndOnlyOfTheRootDirectory) {
  // Not escapes EnvViewName makes: not a known view (the reduction then
  // keeps a listing of "/", coarser).
  for (std::string bad : {"ste-env:", "ste-env:a%2fb", "ste-env:a%41", "ste-env:a%2", "ste-env:a%",
                          "ste-env:A=B", "ste-env:%zz"}) {
    EXPECT_FALSE(ParseView("/\x01" + bad).has_value()) << bad;
  }
  EXPECT_FALSE(ParseView("/usr/\x01ste-env:HOME").has_value()) << "a variable is a view of / only";
  EXPECT_FALSE(ParseView("src/\x01ste-env:HOME").has_value());
  EXPECT_FALSE(ParseView("\x01ste-env:HOME").has_value()) << "nor of the repo root";
  EXPECT_FALSE(IsEnvViewPath("/usr/\x01ste-env:HOME"));
  EXPECT_FALSE(IsEnvViewPath("/\x01ste-env:"));
}

TEST(EnvFile, LinesSplitAtTheFirstEqualsWithValuesAsWritten) {
  absl::StatusOr<Environment> env =
      Environment::Parse("# a comment\nA=1\n\nB=x=y\nC=\nD= spaced \r\nE=\"quoted\"", "f");
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->Get("A"), "1");
  EXPECT_EQ(env->Get("B"), "x=y");
  EXPECT_EQ(env->Get("C"), "");
  EXPECT_EQ(env->Get("D"), " spaced \r") << "bytes as written";
  EXPECT_EQ(env->Get("E"), "\"quoted\"") << "no quoting";
  EXPECT_EQ(env->Get("F"), std::nullopt) << "not named: unset";
  EXPECT_EQ(env->Names(), (std::vector<std::string>{"A", "B", "C", "D", "E"}));
}

TEST(EnvFile, NulEndedEntriesAsEnvDashZeroPrintsThem) {
  const std::string bytes("A=line one\nline two\0#B=not a comment\0C=\0", 39);
  absl::StatusOr<Environment> env = Environment::Parse(bytes, "f");
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->Get("A"), "line one\nline two");
  EXPECT_EQ(env->Get("#B"), "not a comment");
  EXPECT_EQ(env->Get("C"), "");
}

TEST(EnvFile, AMalformedFileSaysWhere) {
  struct Case {
    std::string bytes;
    std::string message;
  } cases[] = {
      {"A=1\nnot a pair\n", "f: line 2: no '=' (NAME=VALUE)"},
      {"A=1\n=2\n", "f: line 2: an empty name"},
      {"A=1\nB=2\nA=3\n", "f: line 3: the variable A a second time"},
      {std::string("A=1\0B\0", 6), "f: entry 2: no '='"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Environment> env = Environment::Parse(c.bytes, "f");
    ASSERT_FALSE(env.ok()) << c.bytes;
    EXPECT_TRUE(absl::IsInvalidArgument(env.status()));
    EXPECT_THAT(std::string(env.status().message()), HasSubstr(c.message));
  }
  absl::StatusOr<Environment> missing = Environment::ReadFile("/nonexistent/env-file");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("cannot read the environment file /nonexistent/env-file: No such file"));
  absl::StatusOr<Environment> directory = Environment::ReadFile("/");
  ASSERT_FALSE(directory.ok()) << "a directory is no environment file";
  EXPECT_THAT(std::string(directory.status().message()), HasSubstr("Is a directory"));
}

TEST(EnvViews, TheValueIsTheNameAndTheValueHashedAndUnsetIsMissing) {
  Environment env;
  env.Set("DB_URL", "postgresql://x");
  env.Set("EMPTY", "");
  absl::StatusOr<std::vector<InventoryEntry>> views = ComputeViews(
      "/tmp", {EnvViewPath("DB_URL"), EnvViewPath("EMPTY"), EnvViewPath("UNSET")}, GlobSet(), nullptr, &env);
  ASSERT_TRUE(views.ok()) << views.status();
  ASSERT_EQ(views->size(), 3u);
  const std::string value = std::string("ste-env:DB_URL") + '\0' + "postgresql://x";
  EXPECT_EQ((*views)[0].type, FileType::kRegular);
  EXPECT_TRUE(XXH128_isEqual((*views)[0].hash, XXH3_128bits(value.data(), value.size())));
  EXPECT_EQ((*views)[1].type, FileType::kRegular) << "set to nothing is set";
  EXPECT_EQ((*views)[2].type, FileType::kMissing);
  // The same name with another value, and another name with the same value,
  // hash apart.
  Environment other;
  other.Set("DB_URL", "postgresql://y");
  other.Set("EMPTY", "postgresql://x");
  absl::StatusOr<std::vector<InventoryEntry>> again =
      ComputeViews("/tmp", {EnvViewPath("DB_URL"), EnvViewPath("EMPTY")}, GlobSet(), nullptr, &other);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(XXH128_isEqual((*again)[0].hash, (*views)[0].hash));
  EXPECT_FALSE(XXH128_isEqual((*again)[1].hash, (*views)[0].hash));
}

TEST(EnvViews, AScanComputesThemInItsEnvironmentOrThisProcesssOwn) {
  test::TempTree tree;
  tree.Write("a.txt", "a");
  ASSERT_EQ(setenv("STE_TEST_ENV_VIEW", "mine", 1), 0);
  ScanOptions scan;
  scan.root = tree.root();
  scan.view_paths = {EnvViewPath("STE_TEST_ENV_VIEW")};
  absl::StatusOr<Inventory> own = Inventory::Scan(scan, nullptr);
  ASSERT_TRUE(own.ok()) << own.status();
  Environment given;
  given.Set("STE_TEST_ENV_VIEW", "mine");
  scan.environment = &given;
  absl::StatusOr<Inventory> same = Inventory::Scan(scan, nullptr);
  given.Set("STE_TEST_ENV_VIEW", "theirs");
  absl::StatusOr<Inventory> changed = Inventory::Scan(scan, nullptr);
  unsetenv("STE_TEST_ENV_VIEW");
  ASSERT_TRUE(same.ok() && changed.ok());
  EXPECT_TRUE(Inventory::Diff(*own, *same).changes.empty());
  InventoryDiff diff = Inventory::Diff(*own, *changed);
  ASSERT_EQ(diff.changes.size(), 1u);
  EXPECT_EQ(diff.changes[0].path, EnvViewPath("STE_TEST_ENV_VIEW"));
  // The walk never makes such an entry, and it survives the file format.
  absl::StatusOr<Inventory> round = Inventory::Parse(changed->Serialize());
  ASSERT_TRUE(round.ok());
  EXPECT_NE(round->Find(EnvViewPath("STE_TEST_ENV_VIEW")), nullptr);
}

TEST(EnvRunAll, TheViewsOfTheSetVariablesItNames) {
  Environment env;
  env.Set("LANG", "C.UTF-8");
  env.Set("LC_ALL", "C");
  env.Set("HOME", "/root");
  absl::StatusOr<GlobSet> globs = GlobSet::Compile({"LANG", "LC_*", "TZ"});
  ASSERT_TRUE(globs.ok());
  EXPECT_EQ(EnvRunAllViews(*globs, env),
            (std::vector<std::string>{EnvViewPath("LANG"), EnvViewPath("LC_ALL")}));
  EXPECT_TRUE(EnvRunAllViews(GlobSet(), env).empty());
}

TEST(EnvIgnore, AReadOfAnIgnoredVariableIsNoDependency) {
  ProcessLog log;
  for (const char* name : {"DB_URL", "GITHUB_RUN_ID", "CI_JOB_ID", "PWD", "a/GITHUB_SHA"}) {
    log.records.push_back(LogRecord{"//r/t.sh", RecordKind::kAbsent, STE_OP_GETENV, EnvViewPath(name), 0});
  }
  // A malformed one: coarser (the listing of /), never lost.
  log.records.push_back(LogRecord{"//r/t.sh", RecordKind::kAbsent, STE_OP_GETENV, "/\x01ste-env:a%2fb", 0});
  PathPolicy policy;
  policy.root = "/nonexistent-repo";
  policy.log_dir = "/nonexistent-logs";
  policy.exists = [](const std::string&) { return true; };
  policy.env_ignore = *GlobSet::Compile(kDefaultEnvIgnore);
  TestDependencies deps = ReduceLogs({log}, absl::OkStatus(), policy);
  ASSERT_EQ(deps.scopes.size(), 1u);
  std::vector<std::string> got;
  for (const DepKey& k : deps.scopes[0].deps) got.push_back(k.path + "(" + std::string(DepKindName(k.kind)) + ")");
  EXPECT_EQ(got, (std::vector<std::string>{"/(listing)", EnvViewPath("DB_URL") + "(content)",
                                           EnvViewPath("a/GITHUB_SHA") + "(content)"}))
      << "a name holding '/' is never matched by a glob";
}

// One test read DB_URL, one LANG (through the view too), one nothing.
std::unique_ptr<SelectionIndex> EnvIndex() {
  SelectionIndexBuilder b;
  EXPECT_TRUE(b.AddTests({"//r/t_db.sh", "//r/t_lang.sh", "//r/t_none.sh"}).ok());
  EXPECT_TRUE(b.AddTestDependency(*b.FindTest("//r/t_db.sh"), EnvViewPath("DB_URL"), DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(*b.FindTest("//r/t_lang.sh"), EnvViewPath("LANG"), DepKind::kContent).ok());
  EXPECT_TRUE(b.AddTestDependency(*b.FindTest("//r/t_none.sh"), "t_none.sh", DepKind::kContent).ok());
  absl::StatusOr<std::string> image = b.Finish();
  EXPECT_TRUE(image.ok());
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::FromBytes(*image);
  EXPECT_TRUE(index.ok());
  return *std::move(index);
}

TEST(SelectEnv, AChangedVariableSelectsItsReadersAndEnvRunAllSelectsAll) {
  std::unique_ptr<SelectionIndex> index = EnvIndex();
  const std::vector<std::string> tests = {"t_db.sh", "t_lang.sh", "t_none.sh"};
  SelectionRules rules;
  rules.skip_all = *GlobSet::Compile({"*.md"});
  rules.env_run_all = *GlobSet::Compile({"TZ"});
  auto select = [&](std::vector<InventoryChange> changes) {
    return Select(rules, SelectionInputs{*index, {}, changes, tests, ""});
  };
  Selection s = select({InventoryChange{EnvViewPath("DB_URL"), ChangeKind::kModified, FileType::kRegular,
                                        FileType::kRegular}});
  EXPECT_EQ(s.mode, SelectionMode::kSubset) << s.reason;
  ASSERT_EQ(s.tests.size(), 1u);
  EXPECT_EQ(s.tests[0].test, "t_db.sh");
  // Never skippable beside a docs change.
  s = select({InventoryChange{"README.md", ChangeKind::kModified, FileType::kRegular, FileType::kRegular},
              InventoryChange{EnvViewPath("LANG"), ChangeKind::kAdded, FileType::kRegular, FileType::kMissing}});
  ASSERT_EQ(s.tests.size(), 1u) << s.reason;
  EXPECT_EQ(s.tests[0].test, "t_lang.sh");
  // A variable no test read: none.
  s = select({InventoryChange{EnvViewPath("OTHER"), ChangeKind::kModified, FileType::kRegular,
                              FileType::kRegular}});
  EXPECT_EQ(s.mode, SelectionMode::kNone) << s.reason;
  // One env_run_all names, read by a test or not: all, with the reason.
  s = select({InventoryChange{EnvViewPath("TZ"), ChangeKind::kDeleted, FileType::kRegular, FileType::kRegular}});
  EXPECT_EQ(s.mode, SelectionMode::kAll);
  EXPECT_EQ(s.reason, "the environment variable TZ changed and matches selection.env_run_all 'TZ'");
  EXPECT_EQ(DescribeViewChange(EnvViewPath("DB_URL"), "modified"), "the environment variable DB_URL changed");
  EXPECT_EQ(DescribeViewChange(EnvViewPath("DB_URL"), "added"),
            "the environment variable DB_URL changed (was unset)");
  EXPECT_EQ(DescribeViewChange(EnvViewPath("DB_URL"), "deleted"),
            "the environment variable DB_URL changed (is unset now)");
}

}  // namespace
}  // namespace ste
