/* Raw system calls for the interceptor's own I/O, and the real functions
 * behind the hooks (layer sys, the bottom: sys.h).
 *
 * The library exports open/stat/... hooks, and a syscall() hook too, so
 * calling the libc wrappers, or libc's syscall(), from inside it would
 * re-enter the hooks. Everything the library does for itself goes through
 * ste_syscall here: the trap instruction inline on x86-64 and AArch64.
 * Each sets errno like libc does; callers that must preserve the program's
 * errno save and restore it. */
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

/* The kernel's raw answer: a value, or -errno in [-4095, -1]. */
#if defined(__x86_64__)
static inline long raw_syscall(long n, long a1, long a2, long a3, long a4,
                               long a5, long a6) {
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8),
                     "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
#define STE_HAVE_RAW_SYSCALL 1
#elif defined(__aarch64__)
static inline long raw_syscall(long n, long a1, long a2, long a3, long a4,
                               long a5, long a6) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a1;
  register long x1 __asm__("x1") = a2;
  register long x2 __asm__("x2") = a3;
  register long x3 __asm__("x3") = a4;
  register long x4 __asm__("x4") = a5;
  register long x5 __asm__("x5") = a6;
  __asm__ volatile("svc 0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory", "cc");
  return x0;
}
#define STE_HAVE_RAW_SYSCALL 1
#endif

#if defined(STE_HAVE_RAW_SYSCALL)
long ste_syscall(long number, long a1, long a2, long a3, long a4, long a5,
                 long a6) {
  long ret = raw_syscall(number, a1, a2, a3, a4, a5, a6);
  if ((unsigned long)ret > -4096ul) {
    errno = (int)-ret;
    return -1;
  }
  return ret;
}
#else
static _Atomic(void*) libc_syscall;
long ste_syscall(long number, long a1, long a2, long a3, long a4, long a5,
                 long a6) {
  long (*real)(long, ...) = (long (*)(long, ...))ste_real(&libc_syscall, "syscall");
  return real(number, a1, a2, a3, a4, a5, a6);
}
#endif

#define SYSCALL(n, a1, a2, a3, a4) \
  ste_syscall((n), (long)(a1), (long)(a2), (long)(a3), (long)(a4), 0, 0)

int ste_sys_open(const char* path, int flags, int mode) {
  return (int)SYSCALL(SYS_openat, AT_FDCWD, path, flags, mode);
}

int ste_sys_close(int fd) { return (int)SYSCALL(SYS_close, fd, 0, 0, 0); }

long ste_sys_pread(int fd, void* buf, size_t n, long off) {
  return SYSCALL(SYS_pread64, fd, buf, n, off);
}

long ste_sys_readlink(const char* path, char* buf, size_t cap) {
  return SYSCALL(SYS_readlinkat, AT_FDCWD, path, buf, cap);
}

long ste_sys_getcwd(char* buf, size_t cap) {
  return SYSCALL(SYS_getcwd, buf, cap, 0, 0);
}

int ste_sys_stat(const char* path, void* statbuf) {
  return (int)SYSCALL(SYS_newfstatat, AT_FDCWD, path, statbuf, 0);
}

int ste_sys_fstat(int fd, void* statbuf) {
  return (int)SYSCALL(SYS_fstat, fd, statbuf, 0, 0);
}

int ste_sys_fallocate(int fd, long off, long len) {
  return (int)SYSCALL(SYS_fallocate, fd, 0, off, len);
}

int ste_sys_ftruncate(int fd, long len) {
  return (int)SYSCALL(SYS_ftruncate, fd, len, 0, 0);
}

long ste_sys_write(int fd, const void* buf, size_t n) {
  return SYSCALL(SYS_write, fd, buf, n, 0);
}

long ste_sys_getxattr(const char* path, const char* name) {
  return SYSCALL(SYS_getxattr, path, name, (void*)0, (size_t)0);
}

size_t ste_strlen(const char* s) { return s ? strlen(s) : 0; }

int ste_starts_with(const char* s, const char* prefix) {
  while (*prefix) {
    if (*s++ != *prefix++) return 0;
  }
  return 1;
}

extern char** environ;

char* ste_getenv(const char* name) {
  /* As glibc's getenv: the first "NAME=" entry. */
  if (!name || !name[0] || !environ) return 0;
  size_t len = strlen(name);
  for (char** e = environ; *e; e++) {
    if (strncmp(*e, name, len) == 0 && (*e)[len] == '=') return *e + len + 1;
  }
  return 0;
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
