/* scopes DIR: the runner API, as a runner uses it (resolved at run time).
 *   push a; open f1; fork -> child opens f2, pushes c, opens f3
 *   push b; open f4; system("cat f6"); pop; pop; open f5
 * and the API's errors. */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  const char* dir = argv[1];
  int (*push)(const char*) = (int (*)(const char*))dlsym(RTLD_DEFAULT, "ste_scope_push");
  int (*pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ste_scope_pop");
  const char* (*current)(void) = (const char* (*)(void))dlsym(RTLD_DEFAULT, "ste_scope_current");
  CHECK(push && pop && current);
  CHECK(strcmp(current(), "//r/t") == 0);
  CHECK(pop() == -1 && errno == ERANGE);
  CHECK(push("") == -1 && errno == EINVAL);
  CHECK(push("/x") == -1 && errno == EINVAL);
  CHECK(push("x//y") == -1 && errno == EINVAL);
  CHECK(strcmp(current(), "//r/t") == 0);

  CHECK(push("a") == 0);
  CHECK(strcmp(current(), "//r/t/a") == 0);
  CHECK(open(join(dir, "f1"), O_RDONLY) >= 0);
  pid_t pid = fork();
  if (pid == 0) {
    CHECK(open(join(dir, "f2"), O_RDONLY) >= 0);
    CHECK(push("c") == 0);
    CHECK(open(join(dir, "f3"), O_RDONLY) >= 0);
    _exit(0);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(push("b/deeper") == 0);
  CHECK(strcmp(current(), "//r/t/a/b/deeper") == 0);
  CHECK(open(join(dir, "f4"), O_RDONLY) >= 0);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "cat '%s' > /dev/null", join(dir, "f6"));
  CHECK(system(cmd) == 0);
  CHECK(pop() == 0 && pop() == 0);
  CHECK(strcmp(current(), "//r/t") == 0);
  CHECK(open(join(dir, "f5"), O_RDONLY) >= 0);
  return 0;
}
