/* spawn_empty_env PROG FILE: posix_spawnp(PROG) with envp = {NULL}. PROG
 * may be a bare name, looked up in this process's PATH. */
#include <spawn.h>
#include <sys/wait.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 3);
  char* child_argv[] = {argv[1], argv[2], NULL};
  char* empty_env[] = {NULL};
  pid_t pid;
  CHECK(posix_spawnp(&pid, argv[1], NULL, NULL, child_argv, empty_env) == 0);
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return 0;
}
