/* paths_after_chdir DIR: relative paths and *at calls after chdir. DIR
 * holds sub/f and f. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  struct stat st;
  int sub = open(join(argv[1], "sub"), O_RDONLY | O_DIRECTORY);
  CHECK(sub >= 0);
  CHECK(chdir("/") == 0);
  CHECK(openat(sub, "f", O_RDONLY) >= 0);              /* DIR/sub/f */
  CHECK(fstatat(sub, "at_missing", &st, 0) < 0);       /* DIR/sub/at_missing */
  CHECK(chdir(join(argv[1], "sub")) == 0);
  CHECK(open("f", O_RDONLY) >= 0);                     /* DIR/sub/f */
  CHECK(open("../f", O_RDONLY) >= 0);                  /* DIR/f */
  CHECK(stat("./rel_missing", &st) < 0);               /* DIR/sub/rel_missing */
  CHECK(open(".//./f", O_RDONLY) >= 0);                /* DIR/sub/f */
  CHECK(fchdir(sub) == 0 && chdir("..") == 0);
  CHECK(access("f", R_OK) == 0);                       /* DIR/f */
  return 0;
}
