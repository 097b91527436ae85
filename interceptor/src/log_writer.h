/* Layer log: the per-process log writer (format: ste/log_format.h). Calls
 * only sys. The layers are listed in preload.c.
 *
 * It knows nothing of forks or dedup: the process layer decides when a new
 * log is opened (at start, in a forked child) and what follows it. */
#ifndef STE_INTERCEPTOR_LOG_WRITER_H_
#define STE_INTERCEPTOR_LOG_WRITER_H_

#include <stdint.h>

#include "sys.h"

/* Creates a new log file in the absolute directory `dir` and makes it the
 * current log; the previous one stays mapped (another thread may still be
 * appending to it). `dir` must stay valid as long as the log is current:
 * growth reopens the file by path. `flags` are SteLogFlags for the header.
 * Returns 0 or -1 (errno set; the current log is unchanged). */
STE_HIDDEN int ste_log_open(const char* dir, uint32_t flags);

/* Appends one record to the current log (none open: does nothing).
 * Lock-free; drops (and counts in header.lost) only when the log cannot
 * grow. */
STE_HIDDEN void ste_log_append(uint8_t kind, uint8_t op, uint32_t scope_id,
                               const char* path, uint32_t len);

#endif /* STE_INTERCEPTOR_LOG_WRITER_H_ */
