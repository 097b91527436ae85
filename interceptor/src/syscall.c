/* syscall(3) and io_uring: the ways around the libc wrappers.
 *
 * Runtimes increasingly make their system calls through syscall(3)
 * (syscall(SYS_openat2, ...), syscall(SYS_getdents64, ...)) instead of the
 * wrappers the other hook files catch. The syscall hook reads its six
 * arguments as `long`, as the x86-64 and AArch64 ABIs pass them and as
 * glibc's own syscall() reads them (it loads all six, whatever the caller
 * passed), and hands them to the kernel unchanged (ste_syscall). Numbers
 * that name no file (futex, getpid, ...: most calls through syscall(3))
 * pass straight through: one table lookup and the trap, nothing
 * recorded, errno set only by the kernel's answer, as libc does. The
 * others are recorded exactly as their wrappers are: the same kinds and
 * ops, the same lookup rule for errors (ste_note_lookup), paths relative
 * to a dirfd resolved against it, a getdents on an fd a listing of its
 * directory (ste_note_fd_listing, as fdopendir), chdir/fchdir refreshing
 * the cached cwd, execve/execveat through the child layer (exec_child.h)
 * like the exec hooks: the program and what it needs recorded first, and
 * the environment rebuilt so the new image is traced.
 *
 * Handled where the architecture has them (AArch64 has no open, creat,
 * stat, lstat, access, readlink or getdents: only their *at forms):
 *   open creat openat openat2                 -> as open/openat
 *   stat lstat newfstatat statx               -> as stat/fstatat/statx
 *   access faccessat faccessat2               -> as access/faccessat
 *   readlink readlinkat                       -> as readlink/readlinkat
 *   getdents getdents64                       -> as fdopendir (a listing)
 *   chdir fchdir                              -> as chdir/fchdir
 *   execve execveat                           -> as execve/execveat
 *   io_uring_setup io_uring_enter             -> below
 * One table (ste_syscall_handler) says which numbers are handled; on
 * x86-64 and AArch64 syscall() is an entry stub that makes every other
 * call itself with a handful of instructions more than glibc's, and jumps
 * to the C side for the handled ones. Each handler is out of line, so the C side keeps a
 * small frame too (an exec's environment is ~14 KiB of stack).
 *
 * io_uring. A ring reads and writes files without any call the library
 * sees (libuv in Node >= 20 can, with UV_USE_IO_URING=1). So while a
 * process records, io_uring_setup fails with ENOSYS, through syscall(3)
 * and through liburing's set-up functions (which make the system call
 * inline, not through syscall(3)): liburing returns -ENOSYS and errno is
 * ENOSYS too, for callers of either convention. Runtimes fall back to
 * calls the library sees (libuv to its thread pool). With
 * STE_ALLOW_IO_URING=1 in its environment (process.h) a process may set
 * rings up, and each one it sets up records "<io_uring>" as unfollowed in
 * the current scope: its test is opaque (always selected), never silently
 * under-recorded. An io_uring_enter through syscall(3) records the same
 * (a ring the library let through, inherited, or set up without it). A
 * ring set up by inline system calls (a static liburing, a runtime of
 * its own) and driven the same way is beyond an LD_PRELOAD library. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec_child.h"
#include "path.h"
#include "process.h"
#include "ste/log_format.h"
#include "sys.h"

#define NOINLINE __attribute__((noinline))

static long forward(long n, const long a[6]) {
  return ste_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ---- files ---------------------------------------------------------------- */

static NOINLINE long on_open(long n, const long a[6], int dirfd, const char* path,
                             int flags) {
  long ret = forward(n, a);
  int err = errno;
  ste_note_open(dirfd, path, flags, ret >= 0, err);
  errno = err;
  return ret;
}

#if defined(SYS_openat2)
/* struct open_how of <linux/openat2.h>: the first version, 24 bytes. */
typedef struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
} OpenHow;
#define STE_RESOLVE_IN_ROOT 0x10

/* openat2(dirfd, path, how, size). */
static NOINLINE long on_openat2(long n, const long a[6]) {
  long ret = forward(n, a);
  int err = errno;
  const OpenHow* how = (const OpenHow*)a[2];
  size_t size = (size_t)a[3];
  /* The kernel read *how, so can we, unless it was too small to hold the
   * flags (EINVAL, not read), too large (E2BIG, maybe not read) or not
   * readable (EFAULT). */
  if (how && size >= sizeof *how && (ret >= 0 || (err != EFAULT && err != E2BIG))) {
    const char* path = (const char*)a[1];
    /* RESOLVE_IN_ROOT: dirfd is the root, "/x" is below it. */
    if (path && (how->resolve & STE_RESOLVE_IN_ROOT)) {
      while (*path == '/') path++;
      if (!*path) path = ".";
    }
    ste_note_open((int)a[0], path, (int)how->flags, ret >= 0, err);
  }
  errno = err;
  return ret;
}
#endif

/* stat, access, readlink and their *at forms: success is ret >= 0. */
static NOINLINE long on_lookup(long n, const long a[6], int op, int dirfd,
                               const char* path) {
  long ret = forward(n, a);
  int err = errno;
  ste_note_lookup(op, dirfd, path, ret >= 0, err); /* "" (AT_EMPTY_PATH) skipped */
  errno = err;
  return ret;
}

/* getdents(fd, ...), getdents64(fd, ...): the end of the directory (0)
 * says nothing new. */
static NOINLINE long on_getdents(long n, const long a[6]) {
  long ret = forward(n, a);
  if (ret > 0) ste_note_fd_listing((int)a[0], "<getdents>");
  return ret;
}

static NOINLINE long on_chdir(long n, const long a[6]) {
  long ret = forward(n, a);
  int err = errno;
  ste_note_lookup(STE_OP_STAT, AT_FDCWD, (const char*)a[0], ret == 0, err);
  if (ret == 0) ste_cwd_refresh();
  errno = err;
  return ret;
}

static NOINLINE long on_fchdir(long n, const long a[6]) {
  long ret = forward(n, a);
  if (ret == 0) {
    int err = errno;
    ste_cwd_refresh();
    errno = err;
  }
  return ret;
}

/* ---- exec ----------------------------------------------------------------- */

/* execve(path, argv, envp): as the execve hook (exec.c). */
static NOINLINE long on_execve(long n, const long a[6]) {
  if (!ste_enabled()) return forward(n, a);
  const char* path = (const char*)a[0];
  ste_exec_note_program(path, 0, STE_OP_EXEC);
  STE_WITH_CHILD_ENV((char* const*)a[2], path, STE_OP_EXEC, env,
                     ste_syscall(n, a[0], a[1], (long)env, a[3], a[4], a[5]));
}

#if defined(SYS_execveat)
/* execveat(dirfd, path, argv, envp, flags): as the execveat hook. */
static NOINLINE long on_execveat(long n, const long a[6]) {
  if (!ste_enabled()) return forward(n, a);
  char abs[STE_PATH_CAP];
  size_t len = ste_exec_note_at((int)a[0], (const char*)a[1], (int)a[4], "<execveat>",
                                abs, sizeof abs);
  const char* program = len ? abs : "<execveat>";
  STE_WITH_CHILD_ENV((char* const*)a[3], program, STE_OP_EXEC, env,
                     ste_syscall(n, a[0], a[1], a[2], (long)env, a[4], a[5]));
}
#endif

/* ---- io_uring --------------------------------------------------------------- */

#if defined(SYS_io_uring_setup)
static NOINLINE long on_io_uring_setup(long n, const long a[6]) {
  if (ste_io_uring_refused()) {
    errno = ENOSYS;
    return -1;
  }
  long ret = forward(n, a);
  if (ret >= 0) ste_note_io_uring();
  return ret;
}
#endif

#if defined(SYS_io_uring_enter)
static NOINLINE long on_io_uring_enter(long n, const long a[6]) {
  long ret = forward(n, a);
  if (ret >= 0) ste_note_io_uring();
  return ret;
}
#endif

/* liburing's set-up functions (liburing.h; pointers to its structs taken
 * as void*). Our definitions come first in symbol lookup, liburing's are
 * the next ones (ste_real), and liburing's io_uring_queue_init calls
 * io_uring_queue_init_params through its PLT: that lands here too. */
int io_uring_setup(unsigned entries, void* params);
int io_uring_queue_init(unsigned entries, void* ring, unsigned flags);
int io_uring_queue_init_params(unsigned entries, void* ring, void* params);
int io_uring_queue_init_mem(unsigned entries, void* ring, void* params, void* buf,
                            size_t buf_size);
STE_REAL_SLOT(io_uring_setup);
STE_REAL_SLOT(io_uring_queue_init);
STE_REAL_SLOT(io_uring_queue_init_params);
STE_REAL_SLOT(io_uring_queue_init_mem);

#define LIBURING_HOOK(name, params, args)                       \
  int name params {                                             \
    __typeof__(&name) real = 0;                                 \
    if (!ste_io_uring_refused()) real = STE_REAL(name);         \
    if (!real) { /* refused, or no liburing behind us */        \
      errno = ENOSYS;                                           \
      return -ENOSYS;                                           \
    }                                                           \
    int ret = real args;                                        \
    if (ret >= 0) ste_note_io_uring();                          \
    return ret;                                                 \
  }

LIBURING_HOOK(io_uring_setup, (unsigned entries, void* params), (entries, params))
LIBURING_HOOK(io_uring_queue_init, (unsigned entries, void* ring, unsigned flags),
              (entries, ring, flags))
LIBURING_HOOK(io_uring_queue_init_params, (unsigned entries, void* ring, void* params),
              (entries, ring, params))
LIBURING_HOOK(io_uring_queue_init_mem,
              (unsigned entries, void* ring, void* params, void* buf, size_t buf_size),
              (entries, ring, params, buf, buf_size))

/* ---- the hook ----------------------------------------------------------------- */

/* What each system call number needs: kPass (0) for all but the handled
 * ones. Numbers from 512 up (and negative ones) pass. The table is the
 * one list of handled numbers: the entry stub tests it, the traced path
 * switches on it. */
enum SyscallHandler {
  kPass = 0,
  kOpen,        /* open(path, flags, mode) */
  kCreat,       /* creat(path, mode) */
  kOpenat,      /* openat(dirfd, path, flags, mode) */
  kOpenat2,     /* openat2(dirfd, path, how, size) */
  kStat,        /* stat/lstat(path, buf) */
  kStatAt,      /* newfstatat(dirfd, path, buf, flags), statx(dirfd, path, ...) */
  kAccess,      /* access(path, mode) */
  kAccessAt,    /* faccessat(dirfd, path, mode), faccessat2(..., flags) */
  kReadlink,    /* readlink(path, buf, size) */
  kReadlinkAt,  /* readlinkat(dirfd, path, buf, size) */
  kGetdents,    /* getdents/getdents64(fd, buf, size) */
  kChdir,       /* chdir(path) */
  kFchdir,      /* fchdir(fd) */
  kExecve,      /* execve(path, argv, envp) */
  kExecveat,    /* execveat(dirfd, path, argv, envp, flags) */
  kIoUringSetup,
  kIoUringEnter,
};
enum { kSyscallTable = 512 };

STE_HIDDEN __attribute__((used)) const unsigned char ste_syscall_handler[kSyscallTable] = {
#if defined(SYS_open)
    [SYS_open] = kOpen,
#endif
#if defined(SYS_creat)
    [SYS_creat] = kCreat,
#endif
    [SYS_openat] = kOpenat,
#if defined(SYS_openat2)
    [SYS_openat2] = kOpenat2,
#endif
#if defined(SYS_stat)
    [SYS_stat] = kStat,
#endif
#if defined(SYS_lstat)
    [SYS_lstat] = kStat,
#endif
    [SYS_newfstatat] = kStatAt,
#if defined(SYS_statx)
    [SYS_statx] = kStatAt,
#endif
#if defined(SYS_access)
    [SYS_access] = kAccess,
#endif
    [SYS_faccessat] = kAccessAt,
#if defined(SYS_faccessat2)
    [SYS_faccessat2] = kAccessAt,
#endif
#if defined(SYS_readlink)
    [SYS_readlink] = kReadlink,
#endif
    [SYS_readlinkat] = kReadlinkAt,
#if defined(SYS_getdents)
    [SYS_getdents] = kGetdents,
#endif
    [SYS_getdents64] = kGetdents,
    [SYS_chdir] = kChdir,
    [SYS_fchdir] = kFchdir,
    [SYS_execve] = kExecve,
#if defined(SYS_execveat)
    [SYS_execveat] = kExecveat,
#endif
#if defined(SYS_io_uring_setup)
    [SYS_io_uring_setup] = kIoUringSetup,
#endif
#if defined(SYS_io_uring_enter)
    [SYS_io_uring_enter] = kIoUringEnter,
#endif
};

/* The handled numbers: the same arguments syscall() got (the entry stub
 * jumps here with the caller's registers and stack untouched). */
STE_HIDDEN __attribute__((used)) long ste_syscall_traced(long number, ...) {
  long a[6];
  va_list ap;
  va_start(ap, number);
  for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
  va_end(ap);
  int handler = (unsigned long)number < kSyscallTable ? ste_syscall_handler[number] : kPass;
  switch (handler) {
    case kOpen:
      return on_open(number, a, AT_FDCWD, (const char*)a[0], (int)a[1]);
    case kCreat:
      return on_open(number, a, AT_FDCWD, (const char*)a[0], O_WRONLY | O_CREAT | O_TRUNC);
    case kOpenat:
      return on_open(number, a, (int)a[0], (const char*)a[1], (int)a[2]);
#if defined(SYS_openat2)
    case kOpenat2:
      return on_openat2(number, a);
#endif
    case kStat:
      return on_lookup(number, a, STE_OP_STAT, AT_FDCWD, (const char*)a[0]);
    case kStatAt:
      return on_lookup(number, a, STE_OP_STAT, (int)a[0], (const char*)a[1]);
    case kAccess:
      return on_lookup(number, a, STE_OP_ACCESS, AT_FDCWD, (const char*)a[0]);
    case kAccessAt:
      return on_lookup(number, a, STE_OP_ACCESS, (int)a[0], (const char*)a[1]);
    case kReadlink:
      return on_lookup(number, a, STE_OP_READLINK, AT_FDCWD, (const char*)a[0]);
    case kReadlinkAt:
      return on_lookup(number, a, STE_OP_READLINK, (int)a[0], (const char*)a[1]);
    case kGetdents:
      return on_getdents(number, a);
    case kChdir:
      return on_chdir(number, a);
    case kFchdir:
      return on_fchdir(number, a);
    case kExecve:
      return on_execve(number, a);
#if defined(SYS_execveat)
    case kExecveat:
      return on_execveat(number, a);
#endif
#if defined(SYS_io_uring_setup)
    case kIoUringSetup:
      return on_io_uring_setup(number, a);
#endif
#if defined(SYS_io_uring_enter)
    case kIoUringEnter:
      return on_io_uring_enter(number, a);
#endif
    default:
      return forward(number, a);
  }
}

/* The pass-through's error: errno from the kernel's -errno, as libc. */
STE_HIDDEN __attribute__((used)) long ste_syscall_failed(long ret) {
  errno = (int)-ret;
  return -1;
}

/* syscall() itself. On x86-64 and AArch64 an entry stub: one table load
 * decides, and every number that names no file makes the system call
 * right there, as glibc's syscall.S does (on x86-64 the sixth argument
 * from the caller's stack; an error through ste_syscall_failed): five or
 * six instructions more than libc's. A handled number jumps to
 * ste_syscall_traced with the caller's registers and stack as they came.
 * Elsewhere (or built with -DSTE_SYSCALL_PLAIN_HOOK, which the tests can
 * run too) the same in C, reading the six arguments with va_arg. */
#if defined(__x86_64__) && !defined(STE_SYSCALL_PLAIN_HOOK)
__asm__(
    ".text\n"
    ".globl syscall\n"
    ".type syscall, @function\n"
    "syscall:\n"
    "  .cfi_startproc\n"
    "  endbr64\n"
    "  cmp $512, %rdi\n" /* kSyscallTable; unsigned: negatives pass */
    "  jae 1f\n"
    "  lea ste_syscall_handler(%rip), %rax\n"
    "  cmpb $0, (%rax,%rdi)\n"
    "  jne ste_syscall_traced\n"
    "1:\n"
    "  mov %rdi, %rax\n"
    "  mov %rsi, %rdi\n"
    "  mov %rdx, %rsi\n"
    "  mov %rcx, %rdx\n"
    "  mov %r8, %r10\n"
    "  mov %r9, %r8\n"
    "  mov 8(%rsp), %r9\n"
    "  syscall\n"
    "  cmp $-4095, %rax\n"
    "  jae 2f\n"
    "  ret\n"
    "2:\n"
    "  mov %rax, %rdi\n"
    "  jmp ste_syscall_failed\n"
    "  .cfi_endproc\n"
    ".size syscall, .-syscall\n");
#elif defined(__aarch64__) && !defined(STE_SYSCALL_PLAIN_HOOK)
__asm__(
    ".text\n"
    ".globl syscall\n"
    ".type syscall, %function\n"
    "syscall:\n"
    "  cmp x0, #512\n" /* kSyscallTable; unsigned: negatives pass */
    "  b.hs 1f\n"
    "  adrp x16, ste_syscall_handler\n"
    "  add x16, x16, :lo12:ste_syscall_handler\n"
    "  ldrb w16, [x16, x0]\n"
    "  cbnz w16, 2f\n"
    "1:\n"
    "  uxtw x8, w0\n"
    "  mov x0, x1\n"
    "  mov x1, x2\n"
    "  mov x2, x3\n"
    "  mov x3, x4\n"
    "  mov x4, x5\n"
    "  mov x5, x6\n"
    "  svc 0\n"
    "  cmn x0, #4095\n"
    "  b.hs 3f\n"
    "  ret\n"
    "2:\n"
    "  b ste_syscall_traced\n"
    "3:\n"
    "  b ste_syscall_failed\n"
    ".size syscall, .-syscall\n");
#else
long syscall(long number, ...) {
  long a[6];
  va_list ap;
  va_start(ap, number);
  for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
  va_end(ap);
  if ((unsigned long)number < kSyscallTable && ste_syscall_handler[number] != kPass) {
    return ste_syscall_traced(number, a[0], a[1], a[2], a[3], a[4], a[5]);
  }
  return forward(number, a);
}
#endif
