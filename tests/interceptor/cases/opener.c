/* opener FILE...: opens each FILE for reading (a generic traced child). */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    int fd = open(argv[i], O_RDONLY);
    CHECK(fd >= 0);
    close(fd);
  }
  return 0;
}
