// End-to-end: the command table of cli/main.cc. Every command the usage
// text lists has a help of its own, and `ste help CMD` is `ste CMD --help`.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace ste {
namespace {

using ::ste::testing::Spawn;
using ::ste::testing::Spawned;

const std::string kSte = ste::testing::SteBinary(STE_BINARY);

// The names in the "Commands:" block of `ste --help` (not help, --version).
std::vector<std::string> ListedCommands(const std::string& usage) {
  std::vector<std::string> names;
  bool in_block = false;
  for (absl::string_view line : absl::StrSplit(usage, '\n')) {
    if (line == "Commands:") {
      in_block = true;
      continue;
    }
    if (!in_block) continue;
    if (line.empty()) break;
    std::string name(line.substr(2, line.find(' ', 2) - 2));
    if (name != "help" && name != "--version") names.push_back(name);
  }
  return names;
}

TEST(CliHelp, EveryListedCommandHasItsHelpAndHelpCmdIsCmdHelp) {
  Spawned usage = Spawn({kSte, "--help"});
  ASSERT_EQ(usage.exit_code, 0);
  EXPECT_EQ(Spawn({kSte, "help"}).out, usage.out);
  const std::vector<std::string> names = ListedCommands(usage.out);
  EXPECT_EQ(names.size(), 14u) << usage.out;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    Spawned direct = Spawn({kSte, name, "--help"});
    Spawned via_help = Spawn({kSte, "help", name});
    EXPECT_EQ(direct.exit_code, 0) << direct.err;
    EXPECT_EQ(via_help.exit_code, 0) << via_help.err;
    EXPECT_EQ(via_help.out, direct.out);
    EXPECT_TRUE(absl::StrContains(direct.out, "Usage: ste " + name)) << direct.out;
  }
  // A subcommand's own help.
  Spawned sub = Spawn({kSte, "help", "baseline", "export"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(sub.out, "Usage: ste baseline export")) << sub.out;
  // Unknown: a usage error naming it.
  Spawned unknown = Spawn({kSte, "help", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "unknown command 'nope'")) << unknown.err;
  EXPECT_EQ(Spawn({kSte, "nope"}).exit_code, 2);
  EXPECT_EQ(Spawn({kSte}).exit_code, 2);
}

}  // namespace
}  // namespace ste
