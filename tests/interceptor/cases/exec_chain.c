/* exec_chain N FILE: execs itself N times, then opens FILE. */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 3);
  int n = atoi(argv[1]);
  if (n > 0) {
    char next[16];
    snprintf(next, sizeof next, "%d", n - 1);
    execl(argv[0], argv[0], next, argv[2], (char*)NULL);
    CHECK(0);
  }
  CHECK(open(argv[2], O_RDONLY) >= 0);
  return 0;
}
