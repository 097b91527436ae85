/* bench_syscall N
 *
 * P3 of the interceptor benchmark: N calls of syscall(3) that name no file
 * — what runtimes do most through it — alternating
 *   syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1)   (no waiter: the
 *       kernel returns 0 at once; the uncontended unlock of a runtime's lock)
 *   syscall(SYS_getppid)
 * so the time is the syscalls plus what a preload library adds to each
 * (libste_preload.so hooks syscall(3): its switch must send these straight
 * through). Exits 1 if a call fails, so a broken setup cannot pass as a
 * fast run. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s N\n", argv[0]);
    return 2;
  }
  char* end = NULL;
  long long n = strtoll(argv[1], &end, 10);
  if (*argv[1] == '\0' || *end != '\0' || n < 0) {
    fprintf(stderr, "%s: bad N '%s'\n", argv[0], argv[1]);
    return 2;
  }
  static int word;
  long parent = syscall(SYS_getppid);
  for (long long i = 0; i < n; i += 2) {
    if (syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) != 0) {
      fprintf(stderr, "%s: futex: %s\n", argv[0], strerror(errno));
      return 1;
    }
    if (syscall(SYS_getppid) != parent) {
      fprintf(stderr, "%s: getppid changed\n", argv[0]);
      return 1;
    }
  }
  return 0;
}
