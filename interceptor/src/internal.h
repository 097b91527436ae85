/* Internal interfaces of libste_preload.so. Nothing here is exported: the
 * linker version script (libste_preload.map) exports only the hooks and
 * the runner API of ste/scope.h; everything below is hidden.
 *
 * The rules every function here follows are stated in preload.c. */
#ifndef STE_INTERCEPTOR_INTERNAL_H_
#define STE_INTERCEPTOR_INTERNAL_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ste/log_format.h"

#define STE_HIDDEN __attribute__((visibility("hidden")))
#define STE_PATH_CAP 8200 /* an absolute path: cwd (PATH_MAX) + relative */

/* ---- real functions (preload.c) --------------------------------------- */

/* Returns the next definition of `name` after this library, resolving it
 * once (dlsym(RTLD_NEXT)) and caching it in *slot. Thread-safe: racing
 * resolvers store the same value. Never returns NULL for a libc symbol. */
STE_HIDDEN void* ste_real(_Atomic(void*)* slot, const char* name);

#define STE_REAL_SLOT(fn) static _Atomic(void*) ste_real_slot_##fn
#define STE_REAL(fn) ((__typeof__(&fn))ste_real(&ste_real_slot_##fn, #fn))

/* ---- process state (preload.c) ---------------------------------------- */

/* 1 when this process records (STE_LOG_DIR set and its log is open);
 * initialises lazily on first use. 0: pass every call straight through. */
STE_HIDDEN int ste_enabled(void);

/* Absolute STE_LOG_DIR and this library's absolute path. They point into
 * strings that live as long as the process (the initial environment, the
 * loader's name for us) unless those were relative, then into a buffer. */
STE_HIDDEN extern const char* ste_log_dir;
STE_HIDDEN extern const char* ste_self_path;

/* Called in a child right after fork() (see ste_log_forked). */
STE_HIDDEN void ste_after_fork_child(void);

/* Records every object the dynamic linker has loaded that was not yet
 * recorded (the main program, its libraries, dlopen'ed ones). */
STE_HIDDEN void ste_note_loaded_objects(void);
STE_HIDDEN extern _Atomic uint32_t ste_dlopen_calls;

/* ---- recording (record.c) --------------------------------------------- */

/* Records (kind, op, path) in the current scope. `path` is resolved
 * against `dirfd` (AT_FDCWD: the cached cwd) and normalised; /proc, /sys
 * and /dev are skipped; a (scope, path, kind) this process already
 * recorded is skipped. errno is preserved. Lock-free, no heap. */
STE_HIDDEN void ste_note(int kind, int op, int dirfd, const char* path);

/* Same with an already absolute, normalised path of `len` bytes. */
STE_HIDDEN void ste_note_abs(int kind, int op, const char* path, size_t len);

/* Records the outcome of a lookup of `path`: content when it succeeded,
 * absent on ENOENT/ENOTDIR, nothing for errors that say nothing about
 * the file (EBADF, EFAULT, EINTR, ENOMEM, EMFILE, ENFILE, ENAMETOOLONG),
 * content for every other error (the file exists in some form). */
STE_HIDDEN void ste_note_lookup(int op, int dirfd, const char* path, int ok,
                                int err);

/* Empties the dedup set (a forked child opening its own log). */
STE_HIDDEN void ste_dedup_reset_after_fork(void);

/* ---- paths (path.c) ---------------------------------------------------- */

/* Writes the absolute, lexically normalised form of `path` (relative to
 * dirfd, or the cached cwd for AT_FDCWD) to out[cap]. Returns its length,
 * or 0 when it cannot be resolved (unknown cwd, dirfd not a directory
 * path, too long). */
STE_HIDDEN size_t ste_path_resolve(int dirfd, const char* path, char* out,
                                   size_t cap);

/* 1 if an absolute path is already normalised (no "//", ".", ".."
 * components, no trailing '/'): it can be recorded without a copy. */
STE_HIDDEN int ste_path_is_normal(const char* path, size_t len);

/* Normalises an absolute path in place; returns the new length. */
STE_HIDDEN size_t ste_path_normalise(char* path, size_t len);

/* Path of an open fd via /proc/self/fd; 0 if it has none. */
STE_HIDDEN size_t ste_path_of_fd(int fd, char* out, size_t cap);

/* Refreshes the cached cwd (after chdir/fchdir, fork, start). */
STE_HIDDEN void ste_cwd_refresh(void);
/* Changes every time the cached cwd does (keys the raw-path fast path). */
STE_HIDDEN uint64_t ste_cwd_generation(void);

/* 1 for paths never recorded: /proc, /sys, /dev and what lies below. */
STE_HIDDEN int ste_path_skipped(const char* path, size_t len);

/* ---- scope (scope.c) ---------------------------------------------------- */

STE_HIDDEN void ste_scope_init(const char* start_scope);
STE_HIDDEN uint32_t ste_scope_id(void);
/* Writes the definitions of every scope on the stack to the current log. */
STE_HIDDEN void ste_scope_emit_all(void);
/* Makes sure environ carries STE_SCOPE pointing at our buffer (so that
 * calls we do not hook, like system(), pass the current scope on). */
STE_HIDDEN void ste_scope_bind_environ(void);

/* ---- log (log.c) ---------------------------------------------------------- */

/* Creates a new log file in ste_log_dir and makes it current. Returns 0 or
 * -1 (errno set). `flags` are SteLogFlags for the header. */
STE_HIDDEN int ste_log_open(uint32_t flags);

/* In a forked child: keep appending to the parent's log (the mapping is
 * shared, the cursor atomic) until the child records something of its own,
 * then open the child's log. Saves a file per fork+exec. */
STE_HIDDEN void ste_log_forked(void);
/* Opens this process's own log if it is a forked child still writing to its
 * parent's (resets the dedup set, defines the scope stack). Cheap when not. */
STE_HIDDEN void ste_log_ensure_own(void);

/* Appends one record. Lock-free; drops (and counts in header.lost) only
 * when the log cannot grow. */
STE_HIDDEN void ste_log_append(uint8_t kind, uint8_t op, uint32_t scope_id,
                               const char* path, uint32_t len);

/* ---- raw system calls (sys.c): never re-enter our own hooks ------------- */

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

/* One line to stderr, "ste: <msg>"; for conditions a user must know of. */
STE_HIDDEN void ste_warn(const char* msg, const char* detail);

#endif /* STE_INTERCEPTOR_INTERNAL_H_ */
