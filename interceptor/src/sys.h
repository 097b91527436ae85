/* Layer sys (the bottom): what libste_preload.so uses of the outside world
 * without entering its own hooks: raw system calls, the next definition of
 * a hooked function, string helpers, a warning line. Includes no other
 * header of the library. The layers are listed in preload.c.
 *
 * Nothing here is exported: the linker version script (libste_preload.map)
 * exports only the hooks and the runner API of ste/scope.h. */
#ifndef STE_INTERCEPTOR_SYS_H_
#define STE_INTERCEPTOR_SYS_H_

#include <stdatomic.h>
#include <stddef.h>

#define STE_HIDDEN __attribute__((visibility("hidden")))

/* ---- real functions --------------------------------------------------- */

/* Returns the next definition of `name` after this library, resolving it
 * once (dlsym(RTLD_NEXT)) and caching it in *slot. Thread-safe: racing
 * resolvers store the same value. Never returns NULL for a libc symbol. */
STE_HIDDEN void* ste_real(_Atomic(void*)* slot, const char* name);

#define STE_REAL_SLOT(fn) static _Atomic(void*) ste_real_slot_##fn
#define STE_REAL(fn) ((__typeof__(&fn))ste_real(&ste_real_slot_##fn, #fn))

/* ---- raw system calls: never re-enter our own hooks ------------------- */

/* The system call `number` with six arguments, as libc's syscall(3) makes
 * it (unused arguments are ignored by the kernel): returns the kernel's
 * result, or -1 with errno set on an error; errno is untouched otherwise.
 * The library exports its own syscall() hook, so neither it nor anything
 * below may call libc's by name: on x86-64 and AArch64 this is the trap
 * instruction inline; elsewhere, libc's syscall found with ste_real.
 * Async-signal-safe, no locks, no heap. */
STE_HIDDEN long ste_syscall(long number, long a1, long a2, long a3, long a4,
                            long a5, long a6);

STE_HIDDEN int ste_sys_open(const char* path, int flags, int mode);
STE_HIDDEN int ste_sys_close(int fd);
STE_HIDDEN long ste_sys_pread(int fd, void* buf, size_t n, long off);
STE_HIDDEN long ste_sys_readlink(const char* path, char* buf, size_t cap);
STE_HIDDEN long ste_sys_getcwd(char* buf, size_t cap);
STE_HIDDEN int ste_sys_stat(const char* path, void* statbuf /* struct stat */);
STE_HIDDEN int ste_sys_fallocate(int fd, long off, long len);
STE_HIDDEN int ste_sys_ftruncate(int fd, long len);
STE_HIDDEN int ste_sys_fstat(int fd, void* statbuf);
STE_HIDDEN long ste_sys_write(int fd, const void* buf, size_t n);
STE_HIDDEN long ste_sys_getxattr(const char* path, const char* name);

/* Small string helpers that cannot call into hooked functions. */
STE_HIDDEN size_t ste_strlen(const char* s);
STE_HIDDEN int ste_starts_with(const char* s, const char* prefix);

/* getenv(3) without our getenv hook (preload.c): the value of `name` in
 * environ, or NULL. The library's own reads of its variables use this, so
 * they are never recorded as a dependency of the program. */
STE_HIDDEN char* ste_getenv(const char* name);

/* One line to stderr, "ste: <msg>"; for conditions a user must know of. */
STE_HIDDEN void ste_warn(const char* msg, const char* detail);

#endif /* STE_INTERCEPTOR_SYS_H_ */
