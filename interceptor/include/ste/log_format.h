/* The per-process record log written by libste_preload.so.
 *
 * This header is the contract between the interceptor (writer, C11, libc
 * only) and every reader (indexer/log_reader). It is plain C so both sides
 * include the same definitions. Change it only with a version bump.
 *
 * Files
 * -----
 * One file per process image that records anything, in $STE_LOG_DIR, named
 *     p<pid>-<start_ns in hex>.stelog
 * A process that execs starts a new file (same pid, later start time) at
 * its first record; a forked child starts its own at its first record of
 * its own. A process whose every record its parent already wrote (STE_SEEN,
 * interceptor/src/record.h) makes none. Files are created with O_EXCL,
 * mode 0644.
 *
 * Layout (all integers little-endian, i.e. native on the platforms we run)
 * -------------------------------------------------------------------------
 *     offset 0    SteLogHeader        (STE_LOG_HEADER_SIZE = 128 bytes)
 *     offset 128  record, record, ... up to header.cursor
 *     ...         zero bytes (pre-allocated, never written)
 *
 * The writer maps the file MAP_SHARED and appends with an atomic
 * fetch-add on header.cursor, so records reach the page cache without a
 * syscall and survive SIGKILL of the writer. The file grows (fallocate)
 * when a reservation passes header.capacity.
 *
 * Record (8-byte aligned, `size` bytes in all):
 *     u32 size       total length incl. this header and padding, a multiple
 *                    of 8; stored LAST, with release order: a record whose
 *                    size word is 0 was reserved but never completed (its
 *                    writer died inside the hook, before the hooked call
 *                    returned to the program).
 *     u8  kind       SteRecordKind
 *     u8  op         SteRecordOp: which call produced it (for humans)
 *     u16 check      low 16 bits of ste_log_check(kind, op, scope_id, path)
 *     u32 scope_id   the scope the process was in (see STE_KIND_SCOPE)
 *     u32 path_len   bytes of path, excluding the NUL
 *     u8  path[path_len], u8 0, zero padding to the next multiple of 8
 *
 * Paths are absolute and lexically normalised ("." and empty components
 * removed, "a/.." folded) byte strings; they may hold any byte but NUL.
 *
 * Scopes. A record of kind STE_KIND_SCOPE defines `scope_id` as the scope
 * string in `path` (e.g. "//r/tests/test_a.py"). Ids are per file. Every
 * other record refers to a scope id defined earlier in the same file. A
 * new file starts with the definitions of the whole scope stack.
 *
 * Readers walk records from offset 128 to min(cursor, file size). A zero
 * size word inside that range is an incomplete record; the reader skips
 * forward in 8-byte steps to the next record whose fields and check agree
 * (resynchronisation) and reports how many bytes it skipped.
 * header.lost counts records the writer had to drop (the log reached its
 * maximum size, or it could not grow); a reader must treat a log with
 * lost > 0 as incomplete (its process's test cannot be narrowed).
 */
#ifndef STE_LOG_FORMAT_H_
#define STE_LOG_FORMAT_H_

#include <stdint.h>

#define STE_LOG_MAGIC "STELOG\0\1" /* 8 bytes, incl. the embedded NUL */
#define STE_LOG_VERSION 1u
#define STE_LOG_HEADER_SIZE 128u
#define STE_LOG_RECORD_HEADER_SIZE 16u
#define STE_LOG_SUFFIX ".stelog"

typedef struct SteLogHeader {
  char magic[8];          /* STE_LOG_MAGIC */
  uint32_t version;       /* STE_LOG_VERSION */
  uint32_t header_size;   /* STE_LOG_HEADER_SIZE */
  uint32_t pid;           /* writer's pid */
  uint32_t ppid;          /* its parent's pid at start */
  uint64_t start_ns;      /* CLOCK_REALTIME when the log was opened */
  uint64_t cursor;        /* atomic: end of reserved records (file offset) */
  uint64_t capacity;      /* atomic: bytes the file is known to hold */
  uint64_t lost;          /* atomic: records dropped by the writer */
  uint32_t flags;         /* SteLogFlags */
  uint32_t reserved0;
  char reserved[64];      /* zero */
} SteLogHeader;

enum SteLogFlags {
  STE_LOG_FLAG_FORKED = 1u,   /* opened in a child after fork() */
  STE_LOG_FLAG_EXECED = 2u,   /* a new image (constructor after exec) */
};

typedef struct SteRecordHeader {
  uint32_t size;
  uint8_t kind;
  uint8_t op;
  uint16_t check;
  uint32_t scope_id;
  uint32_t path_len;
} SteRecordHeader;

enum SteRecordKind {
  STE_KIND_SCOPE = 0,      /* defines scope_id := path */
  STE_KIND_CONTENT = 1,    /* read, exec'd, dlopen'd, stat'ed: its content matters */
  STE_KIND_ABSENT = 2,     /* looked up and not found (ENOENT/ENOTDIR) */
  STE_KIND_LISTING = 3,    /* a directory was enumerated (unless the
                              thread paused listings: ste/control.h) */
  STE_KIND_WRITE = 4,      /* opened for writing only: an output */
  STE_KIND_UNFOLLOWED = 5, /* a child the interceptor cannot follow (path =
                              the program); its test is opaque */
  STE_KIND_MAX = 5
};

enum SteRecordOp {
  STE_OP_NONE = 0,
  STE_OP_OPEN = 1,
  STE_OP_FOPEN = 2,
  STE_OP_STAT = 3,
  STE_OP_ACCESS = 4,
  STE_OP_READLINK = 5,
  STE_OP_OPENDIR = 6,
  STE_OP_DLOPEN = 7,
  STE_OP_EXEC = 8,
  STE_OP_SPAWN = 9,
  STE_OP_LOADED = 10,   /* loaded at start by the dynamic linker */
  STE_OP_REALPATH = 11,
  STE_OP_PATH_SEARCH = 12, /* execvp/posix_spawnp PATH lookup */
  STE_OP_SCOPE = 13,
  STE_OP_GETENV = 14,   /* getenv/secure_getenv, or a PATH search, read an
                           environment variable: an `absent` record of
                           "/\001ste-env:<name, '%' and '/' escaped>"
                           (indexer's ste/environment.h) */
  STE_OP_MAX = 14
};

/* The record check: FNV-1a over the fields, folded to 16 bits. Cheap; it
 * only has to make resynchronisation after a torn record unambiguous. */
static inline uint16_t ste_log_check(uint8_t kind, uint8_t op,
                                     uint32_t scope_id, const char* path,
                                     uint32_t path_len) {
  uint32_t h = 2166136261u;
  h = (h ^ kind) * 16777619u;
  h = (h ^ op) * 16777619u;
  for (int i = 0; i < 4; i++) h = (h ^ ((scope_id >> (8 * i)) & 0xffu)) * 16777619u;
  for (uint32_t i = 0; i < path_len; i++) h = (h ^ (uint8_t)path[i]) * 16777619u;
  return (uint16_t)(h ^ (h >> 16));
}

static inline uint32_t ste_log_record_size(uint32_t path_len) {
  return (STE_LOG_RECORD_HEADER_SIZE + path_len + 1u + 7u) & ~7u;
}

#endif /* STE_LOG_FORMAT_H_ */
