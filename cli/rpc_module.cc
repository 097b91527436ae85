#include "rpc_module.h"

#include <dlfcn.h>

#include <cstdio>

#include "absl/status/statusor.h"
#include "ste/traced_run.h"

namespace ste::cli {

int RunInRpcModule(const std::string& name, const std::vector<std::string>& args) {
  absl::StatusOr<std::string> path = FindPrivateFile("libste_rpc.so");
  if (!path.ok()) {
    std::fprintf(stderr, "ste %s: cannot find the part of ste that talks to schedulers: %s (reinstall ste)\n",
                 name.c_str(), std::string(path.status().message()).c_str());
    return 1;
  }
  // RTLD_LOCAL: its symbols (its own copies of ste's libraries) stay its own.
  void* module = dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    std::fprintf(stderr, "ste %s: cannot load %s: %s (reinstall ste)\n", name.c_str(), path->c_str(),
                 dlerror());
    return 1;
  }
  using Entry = int (*)(const char*, int, const char* const*);
  auto entry = reinterpret_cast<Entry>(dlsym(module, "ste_rpc_command"));
  if (entry == nullptr) {
    std::fprintf(stderr, "ste %s: %s has no ste_rpc_command (reinstall ste)\n", name.c_str(), path->c_str());
    return 1;
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::fflush(stdout);
  // Not unloaded: the command's threads and handlers may outlive the call
  // until exit.
  return entry(name.c_str(), static_cast<int>(argv.size()), argv.data());
}

int RecordInRpcModule(const std::vector<std::string>& args) { return RunInRpcModule("record", args); }
int SchedulerInRpcModule(const std::vector<std::string>& args) { return RunInRpcModule("scheduler", args); }
int WorkerInRpcModule(const std::vector<std::string>& args) { return RunInRpcModule("worker", args); }

}  // namespace ste::cli
