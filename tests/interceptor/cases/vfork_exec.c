/* vfork_exec PROG FILE: vfork, then the child execs PROG FILE. */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 3);
  pid_t pid = vfork();
  if (pid == 0) {
    execl(argv[1], argv[1], argv[2], (char*)NULL);
    _exit(127);
  }
  int status;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return 0;
}
