/* bench_open_close N FILE...
 *
 * P1 of the interceptor benchmark: N open(O_RDONLY)+close pairs over the
 * given existing files, round-robin. Nothing else: no reads, no stdio in
 * the loop, so the time is the syscalls plus whatever a preload library
 * or a tracer adds to them. Exits 1 (with a message) if any open or close
 * fails, so a broken setup cannot pass as a fast run.
 *
 * The files are created by run.sh (once, outside the timing); passing them
 * on the command line keeps this program free of set-up work that would be
 * traced too. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s N FILE...\n", argv[0]);
    return 2;
  }
  char* end = NULL;
  long long n = strtoll(argv[1], &end, 10);
  if (*argv[1] == '\0' || *end != '\0' || n < 0) {
    fprintf(stderr, "%s: bad N '%s'\n", argv[0], argv[1]);
    return 2;
  }
  char** files = argv + 2;
  int nfiles = argc - 2;
  int next = 0;
  for (long long i = 0; i < n; i++) {
    int fd = open(files[next], O_RDONLY);
    if (fd < 0) {
      fprintf(stderr, "%s: open %s: %s\n", argv[0], files[next],
              strerror(errno));
      return 1;
    }
    if (close(fd) != 0) {
      fprintf(stderr, "%s: close %s: %s\n", argv[0], files[next],
              strerror(errno));
      return 1;
    }
    if (++next == nfiles) next = 0;
  }
  return 0;
}
