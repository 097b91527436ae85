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

/* Empties the dedup set (a forked child that opened its own log). */
STE_HIDDEN void ste_dedup_reset(void);

#endif /* STE_INTERCEPTOR_RECORD_H_ */
