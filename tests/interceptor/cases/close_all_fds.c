/* close_all_fds DIR N: closes every descriptor, then opens DIR/f and
 * looks up N distinct missing names (enough to make the log grow, which
 * must not need a descriptor the program closed or reused). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 3);
  for (int fd = 0; fd < 1024; fd++) close(fd);
  /* Reuse low descriptors for the program's own files, as daemons do. */
  int a = open("/dev/null", O_RDONLY);
  int b = open("/dev/null", O_WRONLY);
  if (a != 0 || b != 1) return 98;
  if (open(join(argv[1], "f"), O_RDONLY) < 0) return 97;
  int n = atoi(argv[2]);
  char name[4096];
  struct stat st;
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s/closed_%d", argv[1], i);
    stat(name, &st);
  }
  return 0;
}
