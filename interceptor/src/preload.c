/* libste_preload.so — records what every process of a test run depends on.
 *
 * Loaded with LD_PRELOAD into every process of a run (`ste run`), so it
 * lives by these rules:
 *   - links libc (and libdl) only: no libstdc++, no abseil, no protobuf;
 *     plain C11, no exceptions, no RTTI;
 *   - no heap on the hot path (malloc may be the program's own, or be in
 *     a state we must not touch); buffers are on the stack or static;
 *   - no locks on the common path: records are appended with one atomic
 *     fetch-add; the only lock guards file growth on filesystems without
 *     fallocate and is never waited on forever;
 *   - errno is preserved: every hook returns the real call's result and
 *     errno, whatever bookkeeping happened after it;
 *   - async-signal-safe where the hooked call is (open, stat, access,
 *     readlink, execve, chdir...): only atomics and raw syscalls inside;
 *   - the library's own I/O uses raw syscalls (sys.c), so it never
 *     re-enters its hooks;
 *   - it exports only the hooks and the runner API (libste_preload.map).
 *
 * (Over 600 lines with this comment: the rules and the layer map of the
 * whole library belong at the top of its entry point, and the hooks of one
 * family — files, stat, dirs — read best side by side.)
 *
 * The files are layers, each calling only the layers below it (any of
 * them, not only the next); nothing calls back up:
 *
 *   hooks -> child -> process -> record -> scope -> log -> path -> sys
 *
 * A layer's header includes only headers of layers below
 * (the hooks have none), so a loop cannot be written without an #include
 * that tests/interceptor/check_layers.sh (ctest InterceptorLayers) rejects;
 * it reads the "layer" lines below, top to bottom. When a lower layer
 * needs something from above, the upper one does it after calling down
 * (the process layer empties the dedup set after the log opened a forked
 * child's file) or passes it down (the log directory to ste_log_open).
 *
 *   layer hooks:   preload.c exec.c syscall.c runner_api.c
 *       exported entry points: files, stat, dirs, dlopen, fork here;
 *       exec and spawn in exec.c; syscall(3) and io_uring set-up (refused)
 *       in syscall.c; the runner API (ste/scope.h)
 *   layer child:   exec_child.h exec_child.c
 *       what an exec depends on (program, PATH probes, interpreter, can
 *       the loader preload us) and the traced child's environment: shared
 *       by exec.c and syscall.c
 *   layer process: process.h process.c
 *       lazy start (ste_enabled), fork handler, a forked child taking over
 *       its own log, loaded objects, the control paths (ste/control.h: a
 *       thread pausing its listings), ste_note* (control, resolve, skip,
 *       dedup fast path, an open's flags, an fd's listing): what every
 *       hook records through; the io_uring verdict
 *   layer record:  record.h record.c
 *       the dedup set; one resolved path appended in the current scope
 *   layer scope:   scope_stack.h scope_stack.c
 *       the scope stack, its definitions in the log, environ's STE_SCOPE
 *   layer log:     log_writer.h log_writer.c
 *       the mmap'ed per-process log (ste/log_format.h)
 *   layer path:    path.h path.c
 *       lexical normalisation, the cached cwd, dirfds via /proc/self/fd
 *   layer sys:     sys.h sys.c
 *       raw syscalls, the real functions (ste_real, STE_REAL_SLOT), strings
 *
 * Environment (set by `ste run`, restored into every child by exec.c):
 *   STE_LOG_DIR  directory for the per-process logs; unset: record nothing
 *   STE_SCOPE    the scope this process tree starts in (default "//r")
 *   STE_SEEN     keys of start-up records the parent already wrote
 *                (record.h): not written again, and a process with nothing
 *                else makes no log
 *   LD_PRELOAD   contains this library
 * and one a user may set (read at start, passed on like any variable):
 *   STE_ALLOW_IO_URING=1  let io_uring_setup through (syscall(3), liburing)
 *                instead of failing it with ENOSYS; the library cannot see
 *                what a ring does to files, so each process that sets one
 *                up records "<io_uring>" as unfollowed: its test is opaque
 *                (always selected). See syscall.c.
 *
 * What is recorded, and how: ste/log_format.h and docs/HACKING.md. A
 * process talks back to the library by looking up reserved paths
 * ("/\001ste/..."): ste/control.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "process.h"
#include "ste/log_format.h"
#include "sys.h"

/* ---- start and exit ------------------------------------------------------ */

__attribute__((constructor)) static void ste_constructor(void) {
  ste_enabled();
}

__attribute__((destructor)) static void ste_destructor(void) {
  ste_note_loaded_objects();
}

/* ---- environment ---------------------------------------------------------
 * A variable a program reads is a dependency of its test (indexer's
 * ste/environment.h): C and C++ programs, Ruby's ENV[], Node's
 * process.env, Python's own start-up (os.environ is a copy: the startup
 * hook records its reads). What a program reads from environ itself, and
 * what glibc reads inside itself (setlocale, tzset), is not seen. The
 * lookup is ours (sys.c), as glibc's: no dlsym before the first record. */

char* getenv(const char* name) {
  char* value = ste_getenv(name);
  ste_note_env(name, STE_OP_GETENV);
  return value;
}

char* secure_getenv(const char* name) {
  char* value = getauxval(AT_SECURE) ? 0 : ste_getenv(name);
  ste_note_env(name, STE_OP_GETENV);
  return value;
}

/* ---- open family ------------------------------------------------------- */

STE_REAL_SLOT(open);
STE_REAL_SLOT(open64);
STE_REAL_SLOT(openat);
STE_REAL_SLOT(openat64);
STE_REAL_SLOT(creat);
STE_REAL_SLOT(creat64);
STE_REAL_SLOT(fopen);
STE_REAL_SLOT(fopen64);
STE_REAL_SLOT(freopen);
STE_REAL_SLOT(freopen64);

int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);
STE_REAL_SLOT(__open_2);
STE_REAL_SLOT(__open64_2);
STE_REAL_SLOT(__openat_2);
STE_REAL_SLOT(__openat64_2);

static int takes_mode(int flags) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static void note_open(int dirfd, const char* path, int flags, int ret,
                      int err) {
  ste_note_open(dirfd, path, flags, ret >= 0, err);
}

#define OPEN_HOOK(name, real_call, dirfd_expr)             \
  int name(const char* path, int flags, ...) {             \
    int mode = 0;                                          \
    if (takes_mode(flags)) {                               \
      va_list ap;                                          \
      va_start(ap, flags);                                 \
      mode = va_arg(ap, int);                              \
      va_end(ap);                                          \
    }                                                      \
    int ret = real_call;                                   \
    int err = errno;                                       \
    note_open(dirfd_expr, path, flags, ret, err);          \
    errno = err;                                           \
    return ret;                                            \
  }

#include <stdarg.h>

OPEN_HOOK(open, STE_REAL(open)(path, flags, mode), AT_FDCWD)
OPEN_HOOK(open64, STE_REAL(open64)(path, flags, mode), AT_FDCWD)

#define OPENAT_HOOK(name)                                  \
  int name(int dirfd, const char* path, int flags, ...) {  \
    int mode = 0;                                          \
    if (takes_mode(flags)) {                               \
      va_list ap;                                          \
      va_start(ap, flags);                                 \
      mode = va_arg(ap, int);                              \
      va_end(ap);                                          \
    }                                                      \
    int ret = STE_REAL(name)(dirfd, path, flags, mode);    \
    int err = errno;                                       \
    note_open(dirfd, path, flags, ret, err);               \
    errno = err;                                           \
    return ret;                                            \
  }

OPENAT_HOOK(openat)
OPENAT_HOOK(openat64)

#define CREAT_HOOK(name)                                       \
  int name(const char* path, mode_t mode) {                    \
    int ret = STE_REAL(name)(path, mode);                      \
    int err = errno;                                           \
    note_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, ret, err); \
    errno = err;                                               \
    return ret;                                                \
  }

CREAT_HOOK(creat)
CREAT_HOOK(creat64)

/* The fortify variants (-D_FORTIFY_SOURCE callers): no mode argument. */
#define OPEN2_HOOK(name, params, args, dirfd_expr)   \
  int name params {                                  \
    int ret = STE_REAL(name) args;                   \
    int err = errno;                                 \
    note_open(dirfd_expr, path, flags, ret, err);    \
    errno = err;                                     \
    return ret;                                      \
  }

OPEN2_HOOK(__open_2, (const char* path, int flags), (path, flags), AT_FDCWD)
OPEN2_HOOK(__open64_2, (const char* path, int flags), (path, flags), AT_FDCWD)
OPEN2_HOOK(__openat_2, (int dirfd, const char* path, int flags), (dirfd, path, flags), dirfd)
OPEN2_HOOK(__openat64_2, (int dirfd, const char* path, int flags), (dirfd, path, flags), dirfd)

/* stdio does not call the public open(): fopen modes map to open flags. */
static int fopen_flags(const char* mode) {
  int plus = mode && strchr(mode, '+') != 0;
  switch (mode ? mode[0] : 'r') {
    case 'w':
      return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC;
    case 'a':
      return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND;
    default:
      return plus ? O_RDWR : O_RDONLY;
  }
}

static void note_fopen(const char* path, const char* mode, FILE* ret,
                       int err) {
  int flags = fopen_flags(mode);
  /* "w+" truncates: the program reads back only what it wrote. */
  if (mode && mode[0] == 'w') flags = (flags & ~O_ACCMODE) | O_WRONLY;
  note_open(AT_FDCWD, path, flags, ret ? 0 : -1, err);
}

#define FOPEN_HOOK(name)                                     \
  FILE* name(const char* path, const char* mode) {           \
    FILE* ret = STE_REAL(name)(path, mode);                  \
    int err = errno;                                         \
    note_fopen(path, mode, ret, err);                        \
    errno = err;                                             \
    return ret;                                              \
  }

FOPEN_HOOK(fopen)
FOPEN_HOOK(fopen64)

#define FREOPEN_HOOK(name)                                         \
  FILE* name(const char* path, const char* mode, FILE* stream) {   \
    FILE* ret = STE_REAL(name)(path, mode, stream);                \
    int err = errno;                                               \
    note_fopen(path, mode, ret, err); /* NULL path: skipped */                    \
    errno = err;                                                   \
    return ret;                                                    \
  }

FREOPEN_HOOK(freopen)
FREOPEN_HOOK(freopen64)

/* ---- stat / access / readlink family ---------------------------------- */

#define LOOKUP(op, dirfd, path, call)                   \
  do {                                                  \
    int ret = (call);                                   \
    int err = errno;                                    \
    ste_note_lookup(op, dirfd, path, ret == 0, err);    \
    errno = err;                                        \
    return ret;                                         \
  } while (0)

STE_REAL_SLOT(stat);
STE_REAL_SLOT(stat64);
STE_REAL_SLOT(lstat);
STE_REAL_SLOT(lstat64);
STE_REAL_SLOT(fstatat);
STE_REAL_SLOT(fstatat64);
STE_REAL_SLOT(statx);
STE_REAL_SLOT(access);
STE_REAL_SLOT(faccessat);
STE_REAL_SLOT(euidaccess);
STE_REAL_SLOT(eaccess);

int stat(const char* path, struct stat* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(stat)(path, st));
}
int stat64(const char* path, struct stat64* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(stat64)(path, st));
}
int lstat(const char* path, struct stat* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(lstat)(path, st));
}
int lstat64(const char* path, struct stat64* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(lstat64)(path, st));
}

/* fstatat(fd, "", st, AT_EMPTY_PATH) is an fstat: nothing to record. */
int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  int ret = STE_REAL(fstatat)(dirfd, path, st, flags);
  int err = errno;
  ste_note_lookup(STE_OP_STAT, dirfd, path, ret == 0, err); /* "" skipped */
  errno = err;
  return ret;
}
int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  int ret = STE_REAL(fstatat64)(dirfd, path, st, flags);
  int err = errno;
  ste_note_lookup(STE_OP_STAT, dirfd, path, ret == 0, err); /* "" skipped */
  errno = err;
  return ret;
}
int statx(int dirfd, const char* path, int flags, unsigned int mask,
          struct statx* stx) {
  int ret = STE_REAL(statx)(dirfd, path, flags, mask, stx);
  int err = errno;
  ste_note_lookup(STE_OP_STAT, dirfd, path, ret == 0, err); /* "" skipped */
  errno = err;
  return ret;
}

/* glibc < 2.33 compiled callers into these; still exported for them. */
int __xstat(int ver, const char* path, struct stat* st);
int __xstat64(int ver, const char* path, struct stat64* st);
int __lxstat(int ver, const char* path, struct stat* st);
int __lxstat64(int ver, const char* path, struct stat64* st);
int __fxstatat(int ver, int dirfd, const char* path, struct stat* st, int fl);
int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st,
                 int fl);
STE_REAL_SLOT(__xstat);
STE_REAL_SLOT(__xstat64);
STE_REAL_SLOT(__lxstat);
STE_REAL_SLOT(__lxstat64);
STE_REAL_SLOT(__fxstatat);
STE_REAL_SLOT(__fxstatat64);

int __xstat(int ver, const char* path, struct stat* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(__xstat)(ver, path, st));
}
int __xstat64(int ver, const char* path, struct stat64* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(__xstat64)(ver, path, st));
}
int __lxstat(int ver, const char* path, struct stat* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(__lxstat)(ver, path, st));
}
int __lxstat64(int ver, const char* path, struct stat64* st) {
  LOOKUP(STE_OP_STAT, AT_FDCWD, path, STE_REAL(__lxstat64)(ver, path, st));
}
int __fxstatat(int ver, int dirfd, const char* path, struct stat* st, int fl) {
  LOOKUP(STE_OP_STAT, dirfd, path,
         STE_REAL(__fxstatat)(ver, dirfd, path, st, fl));
}
int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st,
                 int fl) {
  LOOKUP(STE_OP_STAT, dirfd, path,
         STE_REAL(__fxstatat64)(ver, dirfd, path, st, fl));
}

int access(const char* path, int mode) {
  LOOKUP(STE_OP_ACCESS, AT_FDCWD, path, STE_REAL(access)(path, mode));
}
int faccessat(int dirfd, const char* path, int mode, int flags) {
  LOOKUP(STE_OP_ACCESS, dirfd, path,
         STE_REAL(faccessat)(dirfd, path, mode, flags));
}
int euidaccess(const char* path, int mode) {
  LOOKUP(STE_OP_ACCESS, AT_FDCWD, path, STE_REAL(euidaccess)(path, mode));
}
int eaccess(const char* path, int mode) {
  LOOKUP(STE_OP_ACCESS, AT_FDCWD, path, STE_REAL(eaccess)(path, mode));
}

STE_REAL_SLOT(readlink);
STE_REAL_SLOT(readlinkat);
STE_REAL_SLOT(realpath);

/* EINVAL (not a symlink) still says the file exists: content. */
ssize_t readlink(const char* path, char* buf, size_t size) {
  ssize_t ret = STE_REAL(readlink)(path, buf, size);
  int err = errno;
  ste_note_lookup(STE_OP_READLINK, AT_FDCWD, path, ret >= 0, err);
  errno = err;
  return ret;
}
ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) {
  ssize_t ret = STE_REAL(readlinkat)(dirfd, path, buf, size);
  int err = errno;
  ste_note_lookup(STE_OP_READLINK, dirfd, path, ret >= 0, err);
  errno = err;
  return ret;
}

/* glibc's realpath walks the path with internal calls we never see: the
 * path asked for and the one it resolved to are both recorded. */
char* realpath(const char* path, char* resolved) {
  char* ret = STE_REAL(realpath)(path, resolved);
  int err = errno;
  ste_note_lookup(STE_OP_REALPATH, AT_FDCWD, path, ret != 0, err);
  if (ret) ste_note(STE_KIND_CONTENT, STE_OP_REALPATH, AT_FDCWD, ret);
  errno = err;
  return ret;
}

/* ---- directory enumeration -------------------------------------------- */

STE_REAL_SLOT(opendir);
STE_REAL_SLOT(fdopendir);
STE_REAL_SLOT(scandir);
STE_REAL_SLOT(scandir64);
STE_REAL_SLOT(scandirat);

static void note_listing(int dirfd, const char* path, int ok, int err) {
  if (ok) {
    ste_note(STE_KIND_LISTING, STE_OP_OPENDIR, dirfd, path);
  } else {
    ste_note_lookup(STE_OP_OPENDIR, dirfd, path, 0, err);
  }
}

DIR* opendir(const char* path) {
  DIR* ret = STE_REAL(opendir)(path);
  int err = errno;
  note_listing(AT_FDCWD, path, ret != 0, err);
  errno = err;
  return ret;
}

DIR* fdopendir(int fd) {
  DIR* ret = STE_REAL(fdopendir)(fd);
  int err = errno;
  if (ret) ste_note_fd_listing(fd, "<fdopendir>");
  errno = err;
  return ret;
}

int scandir(const char* path, struct dirent*** list,
            int (*filter)(const struct dirent*),
            int (*compar)(const struct dirent**, const struct dirent**)) {
  int ret = STE_REAL(scandir)(path, list, filter, compar);
  int err = errno;
  note_listing(AT_FDCWD, path, ret >= 0, err);
  errno = err;
  return ret;
}

int scandir64(const char* path, struct dirent64*** list,
              int (*filter)(const struct dirent64*),
              int (*compar)(const struct dirent64**,
                            const struct dirent64**)) {
  int ret = STE_REAL(scandir64)(path, list, filter, compar);
  int err = errno;
  note_listing(AT_FDCWD, path, ret >= 0, err);
  errno = err;
  return ret;
}

int scandirat(int dirfd, const char* path, struct dirent*** list,
              int (*filter)(const struct dirent*),
              int (*compar)(const struct dirent**, const struct dirent**)) {
  int ret = STE_REAL(scandirat)(dirfd, path, list, filter, compar);
  int err = errno;
  note_listing(dirfd, path, ret >= 0, err);
  errno = err;
  return ret;
}

/* ---- cwd ---------------------------------------------------------------- */

STE_REAL_SLOT(chdir);
STE_REAL_SLOT(fchdir);

int chdir(const char* path) {
  int ret = STE_REAL(chdir)(path);
  int err = errno;
  ste_note_lookup(STE_OP_STAT, AT_FDCWD, path, ret == 0, err);
  if (ret == 0) ste_cwd_refresh();
  errno = err;
  return ret;
}

int fchdir(int fd) {
  int ret = STE_REAL(fchdir)(fd);
  if (ret == 0) ste_cwd_refresh();
  return ret;
}

/* ---- dlopen --------------------------------------------------------------
 *
 * dlopen searches the *caller's* RUNPATH and $ORIGIN, found from its return
 * address. A C wrapper would make this library the caller and change which
 * file gets loaded, so on x86-64 and AArch64 dlopen is a tiny assembly stub
 * that calls ste_dlopen_before() and then *jumps* to the real dlopen with
 * the caller's return address intact. What the dynamic linker loaded is
 * recorded on this process's next hook call (and at exit), by walking the
 * loaded objects: the library and everything it pulled in. */
STE_REAL_SLOT(dlopen);

STE_HIDDEN __attribute__((used)) void* ste_dlopen_before(const char* file,
                                                         int mode) {
  (void)mode;
  int saved = errno;
  if (file && strchr(file, '/') && ste_enabled()) {
    struct stat st;
    char abs[STE_PATH_CAP];
    size_t n = ste_path_resolve(AT_FDCWD, file, abs, sizeof abs);
    if (n) {
      int found = ste_sys_stat(abs, &st) == 0;
      ste_note_abs(found ? STE_KIND_CONTENT : STE_KIND_ABSENT, STE_OP_DLOPEN,
                   abs, n);
    }
  }
  atomic_store(&ste_dlopen_calls, 1u);
  void* real = ste_real(&ste_real_slot_dlopen, "dlopen");
  errno = saved;
  return real;
}

#if defined(__x86_64__) && !defined(STE_DLOPEN_PLAIN_WRAPPER)
__asm__(
    ".text\n"
    ".globl dlopen\n"
    ".type dlopen, @function\n"
    "dlopen:\n"
    "  .cfi_startproc\n"
    "  endbr64\n"
    "  push %rdi\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  push %rsi\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  sub $8, %rsp\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  call ste_dlopen_before\n"
    "  add $8, %rsp\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  pop %rsi\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  pop %rdi\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  jmp *%rax\n"
    "  .cfi_endproc\n"
    ".size dlopen, .-dlopen\n");
#elif defined(__aarch64__) && !defined(STE_DLOPEN_PLAIN_WRAPPER)
__asm__(
    ".text\n"
    ".globl dlopen\n"
    ".type dlopen, %function\n"
    "dlopen:\n"
    "  stp x29, x30, [sp, -32]!\n"
    "  mov x29, sp\n"
    "  stp x0, x1, [sp, 16]\n"
    "  bl ste_dlopen_before\n"
    "  mov x16, x0\n"
    "  ldp x0, x1, [sp, 16]\n"
    "  ldp x29, x30, [sp], 32\n"
    "  br x16\n"
    ".size dlopen, .-dlopen\n");
#else
/* Elsewhere (or with -DSTE_DLOPEN_PLAIN_WRAPPER, to show why the stub
 * exists) a plain wrapper: correct for absolute paths, but a dlopen by
 * bare name searches this library's (empty) RUNPATH, not the caller's. */
void* dlopen(const char* file, int mode) {
  void* (*real)(const char*, int) =
      (void* (*)(const char*, int))ste_dlopen_before(file, mode);
  return real(file, mode);
}
#endif

/* ---- temporary files ----------------------------------------------------
 * glibc creates these with an internal open we never see: record the
 * created file as an output, so that a test's own temporary files are not
 * mistaken for dependencies (ReduceLogs drops what a test wrote and
 * removed). */
STE_REAL_SLOT(mkstemp);
STE_REAL_SLOT(mkstemp64);
STE_REAL_SLOT(mkostemp);
STE_REAL_SLOT(mkostemp64);
STE_REAL_SLOT(mkstemps);
STE_REAL_SLOT(mkstemps64);
STE_REAL_SLOT(mkostemps);
STE_REAL_SLOT(mkostemps64);
STE_REAL_SLOT(mkdtemp);

static void note_created(const char* path, int ok) {
  if (ok) ste_note(STE_KIND_WRITE, STE_OP_OPEN, AT_FDCWD, path);
}

#define MKSTEMP_HOOK(name, params, args)                 \
  int name params {                                      \
    int ret = STE_REAL(name) args;                       \
    int err = errno;                                     \
    note_created(tmpl, ret >= 0);                        \
    errno = err;                                         \
    return ret;                                          \
  }

MKSTEMP_HOOK(mkstemp, (char* tmpl), (tmpl))
MKSTEMP_HOOK(mkstemp64, (char* tmpl), (tmpl))
MKSTEMP_HOOK(mkostemp, (char* tmpl, int flags), (tmpl, flags))
MKSTEMP_HOOK(mkostemp64, (char* tmpl, int flags), (tmpl, flags))
MKSTEMP_HOOK(mkstemps, (char* tmpl, int suffixlen), (tmpl, suffixlen))
MKSTEMP_HOOK(mkstemps64, (char* tmpl, int suffixlen), (tmpl, suffixlen))
MKSTEMP_HOOK(mkostemps, (char* tmpl, int suffixlen, int flags), (tmpl, suffixlen, flags))
MKSTEMP_HOOK(mkostemps64, (char* tmpl, int suffixlen, int flags), (tmpl, suffixlen, flags))

char* mkdtemp(char* tmpl) {
  char* ret = STE_REAL(mkdtemp)(tmpl);
  int err = errno;
  note_created(tmpl, ret != 0);
  errno = err;
  return ret;
}

/* ---- fork ---------------------------------------------------------------
 * fork() runs the pthread_atfork child handler registered at start-up.
 * _Fork() (glibc 2.34+) runs no handlers, so it is wrapped. vfork children
 * share our memory and log until they exec, which starts a new log. */
pid_t _Fork(void);
STE_REAL_SLOT(_Fork);

pid_t _Fork(void) {
  pid_t ret = STE_REAL(_Fork)();
  if (ret == 0) ste_after_fork_child();
  return ret;
}
