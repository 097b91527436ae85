/* kill_self DIR: records, then SIGKILLs itself. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  struct stat st;
  CHECK(open(join(argv[1], "f"), O_RDONLY) >= 0);
  CHECK(stat(join(argv[1], "before_kill"), &st) < 0);
  kill(getpid(), SIGKILL);
  return 0;
}
