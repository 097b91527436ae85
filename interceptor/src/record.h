/* Layer record: the dedup set and the record of one resolved path. Calls
 * only scope, log, path and sys. The layers are listed in preload.c.
 *
 * Nothing here checks whether the process records at all, or takes over a
 * forked child's log: the process layer (ste_note*) does that first. */
#ifndef STE_INTERCEPTOR_RECORD_H_
#define STE_INTERCEPTOR_RECORD_H_

#include <stddef.h>
#include <stdint.h>

#include "sys.h"

/* Appends (kind, op, path) in the current scope to the current log unless
 * this process already recorded (scope, kind, path) since the last
 * ste_dedup_reset; `path` is absolute and normalised, `len` bytes. The
 * dedup set may miss (a full set: a duplicate record), never wrongly hit.
 * Lock-free, no heap (the large table is one mmap, on demand). */
STE_HIDDEN void ste_record_abs(int kind, int op, const char* path, size_t len);

/* The fast path before resolving: 1 if `path` exactly as given (absolute,
 * or relative to the cwd: dirfd AT_FDCWD) was recorded with `kind` in the
 * current scope and cwd generation. Otherwise 0, with *key set for
 * ste_record_raw_done (0 when there is no fast path: a path relative to a
 * real dirfd, whose meaning can change between calls). */
STE_HIDDEN int ste_record_raw_seen(int kind, int dirfd, const char* path,
                                   uint64_t* key);

/* Remembers a raw path's key once it was recorded (0: does nothing). */
STE_HIDDEN void ste_record_raw_done(uint64_t key);

/* ---- what the parent wrote: STE_SEEN -------------------------------------
 *
 * A program the parent execs records what it was loaded with (its own
 * path, libc, the loader) at start, and most of those the parent has
 * already written under the same scope. The exec hook passes the child
 * the keys of such records in STE_SEEN (at most STE_SEEN_MAX, each 16 hex
 * digits, comma-separated); a STE_OP_LOADED record whose key is among
 * them is not written again, and a child that writes nothing opens no log
 * (process.c). A key names the scope by its string, the log directory, the
 * kind and the path, so it means the same in every process of one run and
 * nothing in another. A malformed value is trusted no further than its
 * first bad byte: a record not skipped is only a duplicate. */
#define STE_SEEN_MAX 16

/* Reads STE_SEEN's value (may be null) at start-up. */
STE_HIDDEN void ste_seen_init(const char* value);

/* 1 if (the current scope, kind, path) is a STE_OP_LOADED record STE_SEEN
 * says the parent wrote under `log_dir`. */
STE_HIDDEN int ste_record_inherited(const char* log_dir, int kind, int op, const char* path,
                                    size_t len);

/* Puts (current scope, kind, path) in the dedup set without writing it: a
 * record STE_SEEN says a log of this run already holds, which this
 * process's own children may then be told of too. */
STE_HIDDEN void ste_record_remember(int kind, const char* path, size_t len);

/* 1 if this process's dedup set says (current scope, kind, path) is in a
 * log of this run, its own or one STE_SEEN named (never a wrong 1; a 0
 * may be a miss). */
STE_HIDDEN int ste_record_written(int kind, const char* path, size_t len);

/* The key of (the current scope, kind, path) under `log_dir`: odd, never
 * 0. */
STE_HIDDEN uint64_t ste_record_key(const char* log_dir, int kind, const char* path, size_t len);

/* Empties the dedup set (a forked child that opened its own log). */
STE_HIDDEN void ste_dedup_reset(void);

#endif /* STE_INTERCEPTOR_RECORD_H_ */
