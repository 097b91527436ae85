/* errno_kept DIR: hooks return the real result and errno, untouched. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  struct stat st;
  errno = 777;
  CHECK(open(join(argv[1], "f"), O_RDONLY) >= 0);
  if (errno != 777) return 10;
  errno = 778;
  CHECK(stat(join(argv[1], "f"), &st) == 0);
  if (errno != 778) return 11;
  if (open(join(argv[1], "missing"), O_RDONLY) != -1 || errno != ENOENT) return 12;
  if (access(join(argv[1], "f/x"), F_OK) != -1 || errno != ENOTDIR) return 13;
  if (fopen(join(argv[1], "missing2"), "r") != NULL || errno != ENOENT) return 14;
  return 0;
}
