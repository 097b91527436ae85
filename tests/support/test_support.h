// Helpers shared by the end-to-end tests: temporary directories, files,
// and running real programs with their output captured.
#ifndef STE_TESTS_SUPPORT_TEST_SUPPORT_H_
#define STE_TESTS_SUPPORT_TEST_SUPPORT_H_

#include <string>
#include <vector>

namespace ste::testing {

// A new directory under $TMPDIR (or /tmp), its real path.
std::string MakeTempDir();

// Writes `content` to `path`, creating missing parent directories.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);

struct Spawned {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs argv (argv[0] an absolute path, or a name looked up in PATH) in
// `cwd` (empty: ours) with our environment plus `extra_env` ("NAME=value",
// overriding), waits, and captures stdout and stderr.
Spawned Spawn(const std::vector<std::string>& argv,
              const std::vector<std::string>& extra_env = {},
              const std::string& cwd = "");

// Number of '\n' in `text`.
size_t Lines(const std::string& text);

}  // namespace ste::testing

#endif  // STE_TESTS_SUPPORT_TEST_SUPPORT_H_
