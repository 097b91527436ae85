/* Raw system calls for the interceptor's own I/O, and the real functions
 * behind the hooks (layer sys, the bottom: sys.h).
 *
 * The library exports open/stat/... hooks, so calling the libc wrappers
 * from inside it would re-enter the hooks. Everything the library does for
 * itself goes through syscall(2) here. Each sets errno like libc does;
 * callers that must preserve the program's errno save and restore it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

void* ste_real(_Atomic(void*)* slot, const char* name) {
  void* fn = atomic_load_explicit(slot, memory_order_acquire);
  if (!fn) {
    fn = dlsym(RTLD_NEXT, name);
    atomic_store_explicit(slot, fn, memory_order_release);
  }
  return fn;
}

int ste_sys_open(const char* path, int flags, int mode) {
  return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int ste_sys_close(int fd) { return (int)syscall(SYS_close, fd); }

long ste_sys_pread(int fd, void* buf, size_t n, long off) {
  return syscall(SYS_pread64, fd, buf, n, off);
}

long ste_sys_readlink(const char* path, char* buf, size_t cap) {
  return syscall(SYS_readlinkat, AT_FDCWD, path, buf, cap);
}

long ste_sys_getcwd(char* buf, size_t cap) {
  return syscall(SYS_getcwd, buf, cap);
}

int ste_sys_stat(const char* path, void* statbuf) {
  return (int)syscall(SYS_newfstatat, AT_FDCWD, path, statbuf, 0);
}

int ste_sys_fstat(int fd, void* statbuf) {
  return (int)syscall(SYS_fstat, fd, statbuf);
}

int ste_sys_fallocate(int fd, long off, long len) {
  return (int)syscall(SYS_fallocate, fd, 0, off, len);
}

int ste_sys_ftruncate(int fd, long len) {
  return (int)syscall(SYS_ftruncate, fd, len);
}

long ste_sys_write(int fd, const void* buf, size_t n) {
  return syscall(SYS_write, fd, buf, n);
}

long ste_sys_getxattr(const char* path, const char* name) {
  return syscall(SYS_getxattr, path, name, (void*)0, (size_t)0);
}

size_t ste_strlen(const char* s) { return s ? strlen(s) : 0; }

int ste_starts_with(const char* s, const char* prefix) {
  while (*prefix) {
    if (*s++ != *prefix++) return 0;
  }
  return 1;
}

void ste_warn(const char* msg, const char* detail) {
  int saved = errno;
  char line[1024];
  size_t n = 0;
  const char* parts[4] = {"ste: ", msg, detail ? ": " : "", detail ? detail : ""};
  for (int i = 0; i < 4; i++) {
    for (const char* p = parts[i]; *p && n < sizeof line - 2; p++) line[n++] = *p;
  }
  line[n++] = '\n';
  ste_sys_write(2, line, n);
  errno = saved;
}
