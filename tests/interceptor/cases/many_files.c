/* many_files DIR N: looks up N distinct names (N records in one process:
 * the log must grow, and lose nothing). */
#include <fcntl.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 3);
  int n = atoi(argv[2]);
  char name[4096];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s/many/%07d", argv[1], i);
    CHECK(open(name, O_RDONLY) < 0);
  }
  return 0;
}
