/* Layer path: absolute, lexically normalised paths for records, and the
 * cached cwd they are resolved against. Calls only sys. The layers are
 * listed in preload.c. */
#ifndef STE_INTERCEPTOR_PATH_H_
#define STE_INTERCEPTOR_PATH_H_

#include <stddef.h>
#include <stdint.h>

#include "sys.h"

#define STE_PATH_CAP 8200 /* an absolute path: cwd (PATH_MAX) + relative */

/* Writes the absolute, lexically normalised form of `path` (relative to
 * dirfd, or the cached cwd for AT_FDCWD) to out[cap]. Returns its length,
 * or 0 when it cannot be resolved (unknown cwd, dirfd without a path, the
 * path before normalising, joined to its base, does not fit in cap with its
 * NUL). Reads the cwd on first need if ste_cwd_refresh never ran. */
STE_HIDDEN size_t ste_path_resolve(int dirfd, const char* path, char* out,
                                   size_t cap);

/* 1 if an absolute path is already normalised (no "//", ".", ".."
 * components, no trailing '/'): it can be recorded without a copy. */
STE_HIDDEN int ste_path_is_normal(const char* path, size_t len);

/* Normalises an absolute path in place ("." and empty components removed,
 * "x/.." folded, ".." at the root dropped); returns the new length and
 * writes a NUL after it (path[len] must be writable). */
STE_HIDDEN size_t ste_path_normalise(char* path, size_t len);

/* Path of an open fd via /proc/self/fd; 0 if it has none. */
STE_HIDDEN size_t ste_path_of_fd(int fd, char* out, size_t cap);

/* Reads the cwd into the cache (at start, after chdir/fchdir). A cwd that
 * cannot be read (removed, outside our root) caches "unknown". */
STE_HIDDEN void ste_cwd_refresh(void);
/* Changes every time the cached cwd does (keys the raw-path fast path). */
STE_HIDDEN uint64_t ste_cwd_generation(void);

/* 1 for paths never recorded: /proc, /sys, /dev, "/\001ste" (the control
 * paths, ste/control.h) and what lies below. */
STE_HIDDEN int ste_path_skipped(const char* path, size_t len);

#endif /* STE_INTERCEPTOR_PATH_H_ */
