// What each integration adds to a run's environment (runner_kind.h,
// IntegrationEnvironment): one table of runs and inherited environments
// with the exact entries each gives, in order.
#include "ste/runner_kind.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ste {
namespace {

TEST(IntegrationEnvironment, Table) {
  struct Case {
    const char* name;
    bool batch, names, definitions;
    std::string integrations_dir;
    std::map<std::string, std::string> inherited;
    std::vector<std::string> want;
  };
  const std::string py = "/i/python", rb = "/i/ruby";
  // clang-format off
  const std::vector<Case> cases = {
      {"a generic run recording imports as listings gets nothing", false, false, false, "/i",
       {{"PYTHONPATH", "/u"}}, {}},
      {"the import hook", false, true, false, "/i", {},
       {"PYTHONPATH=" + py + "/ste_site", "PYTHONUSERBASE=" + py + "/ste_userbase",
        "STE_PYTHONUSERBASE=", "STE_PYTHON_VIEWS=1"}},
      {"the hook before the user's path; the user's base remembered", false, true, false, "/i",
       {{"PYTHONPATH", "/a:/b"}, {"PYTHONUSERBASE", "/home/u/.local"}},
       {"PYTHONPATH=" + py + "/ste_site:/a:/b", "PYTHONUSERBASE=" + py + "/ste_userbase",
        "STE_PYTHONUSERBASE=/home/u/.local", "STE_PYTHON_VIEWS=1"}},
      {"ste under ste keeps the outer ste's remembered base", false, true, false, "/i",
       {{"PYTHONUSERBASE", py + "/ste_userbase"}, {"STE_PYTHONUSERBASE", "/outer"}},
       {"PYTHONPATH=" + py + "/ste_site", "PYTHONUSERBASE=" + py + "/ste_userbase",
        "STE_PYTHONUSERBASE=/outer", "STE_PYTHON_VIEWS=1"}},
      {"empty inherited values count as unset", false, true, false, "/i",
       {{"PYTHONPATH", ""}, {"PYTHONUSERBASE", ""}},
       {"PYTHONPATH=" + py + "/ste_site", "PYTHONUSERBASE=" + py + "/ste_userbase",
        "STE_PYTHONUSERBASE=", "STE_PYTHON_VIEWS=1"}},
      {"no hook without the integrations folder", false, true, false, "", {}, {}},
      {"a batch run: each integration on its language's path", true, false, false, "/i",
       {{"RUBYLIB", "/r"}}, {"PYTHONPATH=" + py, "RUBYLIB=" + rb + ":/r"}},
      {"a batch run with the hook: the hook first", true, true, false, "/i",
       {{"PYTHONPATH", "/u"}},
       {"PYTHONPATH=" + py + "/ste_site:" + py + ":/u", "RUBYLIB=" + rb,
        "PYTHONUSERBASE=" + py + "/ste_userbase", "STE_PYTHONUSERBASE=", "STE_PYTHON_VIEWS=1"}},
      {"a batch run without a folder (never made: IntegrationsDirForRuns)", true, true, false, "", {},
       {"PYTHONPATH=/python", "RUBYLIB=/ruby"}},
      {"definitions: the Ruby tracker before the user's options", false, false, true, "/i",
       {{"RUBYOPT", "-w"}},
       {"STE_DEFINITIONS=/repo", "RUBYOPT=-r" + rb + "/ste_defs.rb -w"}},
      {"definitions without the folder: no Ruby tracker", false, false, true, "", {{"RUBYOPT", "-w"}},
       {"STE_DEFINITIONS=/repo"}},
      {"a folder with white space gets no Ruby tracker", false, false, true, "/my i", {},
       {"STE_DEFINITIONS=/repo"}},
      {"everything, in the table's order", true, true, true, "/i",
       {{"PYTHONPATH", "/u"}, {"RUBYLIB", "/r"}, {"PYTHONUSERBASE", "/b"}, {"RUBYOPT", "-w"}},
       {"PYTHONPATH=" + py + "/ste_site:" + py + ":/u", "RUBYLIB=" + rb + ":/r",
        "PYTHONUSERBASE=" + py + "/ste_userbase", "STE_PYTHONUSERBASE=/b", "STE_PYTHON_VIEWS=1",
        "STE_DEFINITIONS=/repo", "RUBYOPT=-r" + rb + "/ste_defs.rb -w"}},
  };
  // clang-format on
  for (const Case& c : cases) {
    RunEnvironmentInputs run;
    run.batch = c.batch;
    run.python_imports_by_name = c.names;
    run.definitions = c.definitions;
    run.root = "/repo";
    run.integrations_dir = c.integrations_dir;
    auto inherited = [&](const char* name) -> const char* {
      auto it = c.inherited.find(name);
      return it == c.inherited.end() ? nullptr : it->second.c_str();
    };
    EXPECT_EQ(IntegrationEnvironment(run, inherited), c.want) << c.name;
  }
}

}  // namespace
}  // namespace ste
