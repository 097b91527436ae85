/* syscall_call CALL DIR: makes exactly one system call through syscall(3)
 * on files in DIR (the Workspace of interceptor_test.cc: f, d/{a,b},
 * l -> f, sub/f), bypassing the libc wrapper. Exits 77 when this
 * architecture has no such system call (AArch64 has no open, stat,
 * access, readlink, getdents: only their *at forms). Table-driven from
 * interceptor_test.cc. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

/* struct open_how of <linux/openat2.h>. */
struct how {
  uint64_t flags, mode, resolve;
};
#define IN_ROOT 0x10 /* RESOLVE_IN_ROOT */

__attribute__((unused)) static int unsupported(const char* call) {
  fprintf(stderr, "no %s on this architecture\n", call);
  return 77;
}

int main(int argc, char** argv) {
  CHECK(argc == 3);
  const char* call = argv[1];
  const char* dir = argv[2];
  const char* f = join(dir, "f");
  const char* l = join(dir, "l");
  const char* missing = join(dir, "missing");
  char buf[4096];
  struct stat st;
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0);
  (void)l; /* unused where there is no SYS_lstat nor SYS_readlink */
#define IS(name) (strcmp(call, name) == 0)
  if (IS("openat2")) {
    struct how h = {O_RDONLY, 0, 0};
    CHECK(syscall(SYS_openat2, dfd, "f", &h, sizeof h) >= 0);
  } else if (IS("openat2_missing")) {
    struct how h = {O_RDONLY, 0, 0};
    CHECK(syscall(SYS_openat2, dfd, "missing", &h, sizeof h) == -1 && errno == ENOENT);
  } else if (IS("openat2_write")) {
    struct how h = {O_WRONLY | O_CREAT, 0644, 0};
    CHECK(syscall(SYS_openat2, AT_FDCWD, join(dir, "new"), &h, sizeof h) >= 0);
  } else if (IS("openat2_in_root")) {
    /* "/sub/f" below dfd, the root for this lookup. */
    struct how h = {O_RDONLY, 0, IN_ROOT};
    CHECK(syscall(SYS_openat2, dfd, "/sub/f", &h, sizeof h) >= 0);
  } else if (IS("openat")) {
    CHECK(syscall(SYS_openat, dfd, "f", O_RDONLY) >= 0);
  } else if (IS("openat_missing")) {
    CHECK(syscall(SYS_openat, AT_FDCWD, missing, O_RDONLY) == -1 && errno == ENOENT);
  } else if (IS("openat_rdwr_creat")) {
    CHECK(syscall(SYS_openat, dfd, "f", O_RDWR | O_CREAT, 0644) >= 0);
  } else if (IS("open")) {
#ifdef SYS_open
    CHECK(syscall(SYS_open, f, O_RDONLY) >= 0);
#else
    return unsupported(call);
#endif
  } else if (IS("creat")) {
#ifdef SYS_creat
    CHECK(syscall(SYS_creat, join(dir, "new"), 0644) >= 0);
#else
    return unsupported(call);
#endif
  } else if (IS("stat")) {
#ifdef SYS_stat
    CHECK(syscall(SYS_stat, f, &st) == 0);
#else
    return unsupported(call);
#endif
  } else if (IS("stat_missing")) {
#ifdef SYS_stat
    CHECK(syscall(SYS_stat, missing, &st) == -1 && errno == ENOENT);
#else
    return unsupported(call);
#endif
  } else if (IS("lstat")) {
#ifdef SYS_lstat
    CHECK(syscall(SYS_lstat, l, &st) == 0);
#else
    return unsupported(call);
#endif
  } else if (IS("newfstatat")) {
    CHECK(syscall(SYS_newfstatat, dfd, "f", &st, 0) == 0);
  } else if (IS("newfstatat_missing")) {
    CHECK(syscall(SYS_newfstatat, dfd, "missing", &st, 0) == -1 && errno == ENOENT);
  } else if (IS("statx")) {
    struct statx sx;
    CHECK(syscall(SYS_statx, dfd, "f", 0, STATX_ALL, &sx) == 0);
  } else if (IS("statx_missing")) {
    struct statx sx;
    CHECK(syscall(SYS_statx, AT_FDCWD, missing, 0, STATX_ALL, &sx) == -1 && errno == ENOENT);
  } else if (IS("statx_empty_path")) {
    /* An fstat: nothing to record. */
    struct statx sx;
    int fd = open(f, O_RDONLY);
    CHECK(fd >= 0);
    CHECK(syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_ALL, &sx) == 0);
  } else if (IS("access")) {
#ifdef SYS_access
    CHECK(syscall(SYS_access, f, R_OK) == 0);
#else
    return unsupported(call);
#endif
  } else if (IS("faccessat")) {
    CHECK(syscall(SYS_faccessat, dfd, "f", R_OK) == 0);
  } else if (IS("faccessat2")) {
    CHECK(syscall(SYS_faccessat2, dfd, "missing", F_OK, 0) == -1 && errno == ENOENT);
  } else if (IS("readlink")) {
#ifdef SYS_readlink
    CHECK(syscall(SYS_readlink, l, buf, sizeof buf) > 0);
#else
    return unsupported(call);
#endif
  } else if (IS("readlinkat")) {
    CHECK(syscall(SYS_readlinkat, dfd, "l", buf, sizeof buf) > 0);
  } else if (IS("getdents64") || IS("getdents")) {
    long nr = SYS_getdents64;
    if (IS("getdents")) {
#ifdef SYS_getdents
      nr = SYS_getdents;
#else
      return unsupported(call);
#endif
    }
    int fd = open(join(dir, "d"), O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    long n;
    while ((n = syscall(nr, fd, buf, sizeof buf)) > 0) {
    }
    CHECK(n == 0);
  } else if (IS("chdir")) {
    /* The cached cwd must follow: a relative open afterwards is in d. */
    CHECK(syscall(SYS_chdir, join(dir, "d")) == 0);
    CHECK(open("a", O_RDONLY) >= 0);
  } else if (IS("fchdir")) {
    int fd = open(join(dir, "sub"), O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    CHECK(syscall(SYS_fchdir, fd) == 0);
    CHECK(syscall(SYS_openat, AT_FDCWD, "f", O_RDONLY) >= 0);
  } else if (IS("errno")) {
    /* The pass-through and the handled paths leave errno as libc does:
     * untouched on success, the kernel's error on failure. */
    static int word;
    errno = 777;
    CHECK(syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) == 0);
    CHECK(errno == 777);
    CHECK(syscall(SYS_getppid) == getppid() && errno == 777);
    CHECK(syscall(SYS_openat, dfd, "f", O_RDONLY) >= 0 && errno == 777);
    CHECK(syscall(SYS_close, -1) == -1 && errno == EBADF);
    errno = 777;
    CHECK(syscall(SYS_openat, dfd, "missing", O_RDONLY) == -1 && errno == ENOENT);
    CHECK(syscall(-1L) == -1 && errno == ENOSYS);
    CHECK(syscall(100000L) == -1 && errno == ENOSYS);
    /* The sixth argument reaches the kernel (from the caller's stack on
     * x86-64): FUTEX_WAKE_BITSET reads it as the bitset, and 0 is EINVAL. */
    CHECK(syscall(SYS_futex, &word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0) == -1 &&
          errno == EINVAL);
    CHECK(syscall(SYS_futex, &word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, ~0u) == 0);
  } else {
    fprintf(stderr, "unknown call %s\n", call);
    return 2;
  }
  return 0;
}
