/* io_uring_case HOW EXPECT: sets up an io_uring instance
 *   HOW     syscall   syscall(SYS_io_uring_setup, ...)
 *           liburing  liburing's io_uring_queue_init, found the way a
 *                     program linked with liburing.so.2 binds it (the
 *                     library loaded RTLD_GLOBAL, then RTLD_DEFAULT);
 *                     exits 77 when liburing.so.2 is not installed
 *   EXPECT  refused   the call fails with ENOSYS (liburing: -ENOSYS)
 *           allowed   it succeeds
 *           probe     prints "allowed" or "refused <errno name>", exit 0
 *                     (is io_uring permitted here at all?) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 3);
  const char* how = argv[1];
  const char* expect = argv[2];
  /* struct io_uring_params is 120 bytes; struct io_uring a little more.
   * Zeroed, generously sized, aligned. */
  static uint64_t params[64];
  static uint64_t ring[512];
  int ok;
  int err;
  if (strcmp(how, "syscall") == 0) {
    long fd = syscall(SYS_io_uring_setup, 4, params);
    ok = fd >= 0;
    err = ok ? 0 : errno;
  } else if (strcmp(how, "liburing") == 0) {
    if (!dlopen("liburing.so.2", RTLD_NOW | RTLD_GLOBAL)) {
      fprintf(stderr, "liburing.so.2 not installed: %s\n", dlerror());
      return 77;
    }
    int (*init)(unsigned, void*, unsigned) =
        (int (*)(unsigned, void*, unsigned))dlsym(RTLD_DEFAULT, "io_uring_queue_init");
    CHECK(init != NULL);
    errno = 0;
    int ret = init(4, ring, 0);
    ok = ret >= 0;
    err = ok ? 0 : -ret;
    if (strcmp(expect, "refused") == 0) CHECK(ok || errno == err);
  } else {
    fprintf(stderr, "unknown way %s\n", how);
    return 2;
  }
  if (strcmp(expect, "probe") == 0) {
    if (ok) printf("allowed\n");
    else printf("refused %s\n", strerrorname_np(err));
    return 0;
  }
  if (strcmp(expect, "refused") == 0) {
    if (ok || err != ENOSYS) {
      fprintf(stderr, "%s: want ENOSYS, got %s\n", how, ok ? "a ring" : strerrorname_np(err));
      return 1;
    }
    return 0;
  }
  if (!ok) {
    fprintf(stderr, "%s: want a ring, got %s\n", how, strerrorname_np(err));
    return 1;
  }
  return 0;
}
