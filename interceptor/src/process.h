/* Layer process: this process's life as the library sees it (lazy start,
 * fork, a forked child taking over its own log, the objects the dynamic
 * linker loaded), the control paths (ste/control.h: a thread pausing its
 * listings) and the ste_note* functions every hook records through.
 * Calls only record, scope, log, path and sys. The layers are listed in
 * preload.c. */
#ifndef STE_INTERCEPTOR_PROCESS_H_
#define STE_INTERCEPTOR_PROCESS_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "sys.h"

/* ---- lifecycle ---------------------------------------------------------- */

/* 1 when this process records (STE_LOG_DIR set and its log is open);
 * initialises on first use (reads STE_LOG_DIR and STE_SCOPE, opens the
 * log, defines the scope stack, registers the fork handler, records the
 * program and its loaded objects). 0: pass every call straight through.
 * Thread-safe; a call from inside the initialisation returns 0. */
STE_HIDDEN int ste_enabled(void);

/* Absolute STE_LOG_DIR and this library's absolute path ("" until
 * ste_enabled succeeded). They point into strings that live as long as
 * the process (the initial environment, the loader's name for us) unless
 * those were relative, then into a buffer. */
STE_HIDDEN extern const char* ste_log_dir;
STE_HIDDEN extern const char* ste_self_path;

/* Called in a child right after fork() (the pthread_atfork handler; the
 * _Fork hook calls it too). The child keeps appending to its parent's log
 * (the mapping is shared, the cursor atomic) until it records something
 * of its own (ste_ensure_own_log). Saves a file per fork+exec. */
STE_HIDDEN void ste_after_fork_child(void);

/* Opens this process's own log if it is a forked child still writing to
 * its parent's, then empties the dedup set and defines the scope stack in
 * it. Cheap when not. errno is preserved. */
STE_HIDDEN void ste_ensure_own_log(void);

/* Records every object the dynamic linker has loaded that was not yet
 * recorded (the main program, its libraries, dlopen'ed ones). */
STE_HIDDEN void ste_note_loaded_objects(void);

/* The STE_SEEN keys (record.h) for a program this process is about to
 * exec: `program_key` (ste_note_key of the program it recorded; 0: none)
 * and those of its own start-up objects its dedup set says it wrote in
 * the current scope. Writes at most STE_SEEN_MAX to `out`; the count. */
STE_HIDDEN int ste_seen_keys(uint64_t program_key, uint64_t* out);

/* record.h's ste_record_key under this process's log directory. */
STE_HIDDEN uint64_t ste_note_key(int kind, const char* path, size_t len);
/* Set by the dlopen hook: the next record first notes loaded objects. */
STE_HIDDEN extern _Atomic uint32_t ste_dlopen_calls;

/* ---- control paths (ste/control.h) --------------------------------------- */

enum SteControl {
  STE_CTL_NONE = 0,            /* an ordinary path */
  STE_CTL_UNKNOWN = 1,         /* reserved, but no control we know */
  STE_CTL_PAUSE_LISTINGS = 2,  /* STE_CONTROL_PAUSE_LISTINGS */
  STE_CTL_RESUME_LISTINGS = 3, /* STE_CONTROL_RESUME_LISTINGS */
};

/* What `path` (NUL-terminated, as the caller gave it) is. Pure, no side
 * effect; an ordinary path costs a byte compare or two. */
STE_HIDDEN enum SteControl ste_control_classify(const char* path);

/* Classifies `path` and, for a pause or resume, changes the calling
 * thread's pause count. Returns 1 if `path` is reserved (the caller records
 * nothing), 0 for an ordinary path. errno is untouched. */
STE_HIDDEN int ste_control_apply(const char* path);

/* The calling thread's pause count: its listings are not recorded while it
 * is above 0. Thread-local; async-signal-safe. */
STE_HIDDEN unsigned ste_listings_paused(void);

/* ---- recording ------------------------------------------------------------ */

/* Records (kind, op, path) in the current scope. A control path
 * (ste/control.h) is acted on and never recorded; that check comes first
 * (the dedup fast path would swallow a second pause). A listing is dropped
 * while this thread has listings paused. `path` is resolved against
 * `dirfd` (AT_FDCWD: the cached cwd) and normalised; /proc, /sys, /dev and
 * "/\001ste" are skipped; a (scope, path, kind) this process already
 * recorded is skipped; an unresolvable path is recorded as given, as
 * STE_KIND_UNFOLLOWED. Does nothing unless ste_enabled(). errno is
 * preserved. Lock-free, no heap. */
STE_HIDDEN void ste_note(int kind, int op, int dirfd, const char* path);

/* Same with an already absolute, normalised path of `len` bytes (never
 * acted on as a control; a listing is still dropped while paused); does
 * not check ste_enabled() (callers did). Takes over a forked child's log first,
 * except for what an exec or spawn records (that may go to the parent's
 * log: the image is about to be replaced). */
STE_HIDDEN void ste_note_abs(int kind, int op, const char* path, size_t len);

/* Records the outcome of a lookup of `path`: content when it succeeded,
 * absent on ENOENT/ENOTDIR, nothing for errors that say nothing about
 * the file (EBADF, EFAULT, EINTR, ENOMEM, EMFILE, ENFILE, ENAMETOOLONG),
 * content for every other error (the file exists in some form). */
STE_HIDDEN void ste_note_lookup(int op, int dirfd, const char* path, int ok,
                                int err);

/* Records an open of `path` (relative to dirfd) with open(2) `flags` that
 * succeeded (`ok`) or failed with `err`: an open for writing only that
 * succeeded is an output (write), any other a lookup (ste_note_lookup);
 * a read-write open with O_CREAT that succeeded is both; O_TMPFILE (an
 * unnamed output) records nothing. Every open hook, wrapper or syscall(3),
 * records through this. errno is preserved. */
STE_HIDDEN void ste_note_open(int dirfd, const char* path, int flags, int ok,
                              int err);

/* Records a listing of the directory `fd` is open on (fdopendir, a
 * getdents64 on it), its path read through /proc/self/fd; when it has
 * none, `unnamed` ("<fdopendir>") as unfollowed. Nothing while this
 * thread has listings paused (ste/control.h), not even the unfollowed
 * record, nor unless ste_enabled(). errno is preserved. */
STE_HIDDEN void ste_note_fd_listing(int fd, const char* unnamed);

/* Records that the program read the environment variable `name` (getenv,
 * secure_getenv, a PATH search): an `absent` record of
 * "/\001ste-env:<name>", '%' written "%25" and '/' "%2F" (indexer's
 * ste/environment.h), op `op`. Nothing for an empty name, one holding '='
 * (no variable has one), or STE_* (ste's own), nor unless ste_enabled().
 * A name too long for the record's buffer records "<getenv: a name over
 * 1000 bytes>" as unfollowed: its test is opaque (always selected).
 * errno is preserved. */
STE_HIDDEN void ste_note_env(const char* name, int op);

/* ---- io_uring --------------------------------------------------------------- */

/* 1 when this process must be refused an io_uring instance: it records
 * (ste_enabled()) and did not start with STE_ALLOW_IO_URING=1. What a
 * ring does with files the library never sees; refused, runtimes (libuv)
 * fall back to calls it does. */
STE_HIDDEN int ste_io_uring_refused(void);

/* Records that this process set up an io_uring instance (allowed by
 * STE_ALLOW_IO_URING=1): "<io_uring>" as unfollowed in the current scope,
 * so its test is opaque (always selected). Nothing unless ste_enabled().
 * errno is preserved. */
STE_HIDDEN void ste_note_io_uring(void);

#endif /* STE_INTERCEPTOR_PROCESS_H_ */
