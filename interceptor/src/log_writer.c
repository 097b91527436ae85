/* The per-process log writer (layer log: log_writer.h). Format:
 * ste/log_format.h.
 *
 * The file is mapped MAP_SHARED over a large virtual window reserved once
 * (the file itself starts small and grows with fallocate, which never
 * shrinks a file, so racing growers need no lock). A record is reserved
 * with one atomic fetch-add on header.cursor, filled, then published by
 * storing its size word with release order. No fd is kept open: a program
 * that closes every descriptor cannot take the log away from us, and
 * growth (rare: the file doubles) opens the file by path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log_writer.h"
#include "ste/log_format.h"

enum { kInitialCapacity = 4 * 1024 }; /* one page: most processes never grow */

typedef struct SteLog {
  SteLogHeader* header; /* start of the mapping */
  uint64_t window;      /* bytes mapped */
  _Atomic int grow_lock;
  const char* dir;      /* the directory ste_log_open was given */
  char name[64];        /* file name in dir */
} SteLog;

/* dir + "/" + name into out[cap]; 0 if it does not fit. */
static int log_path(const SteLog* log, char* out, size_t cap) {
  size_t d = ste_strlen(log->dir), n = ste_strlen(log->name);
  if (d + 1 + n + 1 > cap) return 0;
  memcpy(out, log->dir, d);
  out[d] = '/';
  memcpy(out + d + 1, log->name, n + 1);
  return 1;
}

static SteLog logs[2];
static _Atomic(SteLog*) current_log;

static void append_hex(char* out, size_t* n, uint64_t v) {
  char digits[16];
  int d = 0;
  do {
    digits[d++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  while (d) out[(*n)++] = digits[--d];
}

static void append_dec(char* out, size_t* n, uint64_t v) {
  char digits[24];
  int d = 0;
  do {
    digits[d++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (d) out[(*n)++] = digits[--d];
}

int ste_log_open(const char* dir, uint32_t flags) {
  SteLog* old = atomic_load(&current_log);
  SteLog* log = (old == &logs[0]) ? &logs[1] : &logs[0];
  log->dir = dir;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  uint32_t pid = (uint32_t)getpid();

  int fd = -1;
  char path[4200];
  for (int attempt = 0; attempt < 64 && fd < 0; attempt++) {
    size_t n = 0;
    log->name[n++] = 'p';
    append_dec(log->name, &n, pid);
    log->name[n++] = '-';
    append_hex(log->name, &n, start_ns + (uint64_t)attempt);
    memcpy(log->name + n, STE_LOG_SUFFIX, sizeof STE_LOG_SUFFIX);
    if (!log_path(log, path, sizeof path)) {
      errno = ENAMETOOLONG;
      return -1;
    }
    fd = ste_sys_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) return -1;
  }
  if (fd < 0) return -1;
  if (ste_sys_fallocate(fd, 0, kInitialCapacity) != 0 &&
      ste_sys_ftruncate(fd, kInitialCapacity) != 0) {
    int err = errno;
    ste_sys_close(fd);
    errno = err;
    return -1;
  }
  static const uint64_t kWindows[] = {1ull << 30, 256ull << 20, 64ull << 20,
                                      16ull << 20, kInitialCapacity};
  void* base = MAP_FAILED;
  uint64_t window = 0;
  for (size_t i = 0; i < sizeof kWindows / sizeof kWindows[0]; i++) {
    window = kWindows[i];
    base = mmap(0, window, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED) break;
  }
  int err = errno;
  ste_sys_close(fd);
  if (base == MAP_FAILED) {
    errno = err;
    return -1;
  }
  SteLogHeader* h = (SteLogHeader*)base;
  h->version = STE_LOG_VERSION;
  h->header_size = STE_LOG_HEADER_SIZE;
  h->pid = pid;
  h->ppid = (uint32_t)getppid();
  h->start_ns = start_ns;
  h->flags = flags;
  atomic_store((_Atomic uint64_t*)&h->capacity, (uint64_t)kInitialCapacity);
  atomic_store((_Atomic uint64_t*)&h->cursor, (uint64_t)STE_LOG_HEADER_SIZE);
  memcpy(h->magic, STE_LOG_MAGIC, 8); /* last: a reader sees a whole header */

  log->header = h;
  log->window = window;
  atomic_store(&log->grow_lock, 0);
  /* A forked child's inherited window (the parent's file) stays mapped:
   * another thread of the child may still be appending to it. */
  atomic_store(&current_log, log);
  return 0;
}

/* Makes the file hold at least `need` bytes. 1 on success. */
static int log_grow(SteLog* log, uint64_t need) {
  _Atomic uint64_t* capacity = (_Atomic uint64_t*)&log->header->capacity;
  for (int attempt = 0; attempt < 10000; attempt++) {
    uint64_t cap = atomic_load(capacity);
    if (cap >= need) return 1;
    uint64_t grown = cap * 2;
    while (grown < need) grown *= 2;
    if (grown > log->window) grown = log->window;
    char path[4200];
    if (!log_path(log, path, sizeof path)) return 0;
    int fd = ste_sys_open(path, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) return 0;
    int ok = ste_sys_fallocate(fd, 0, (long)grown) == 0;
    if (!ok && (errno == EOPNOTSUPP || errno == ENOSYS)) {
      /* Filesystems without fallocate: ftruncate, which can shrink, so
       * only under the lock and only upwards. A signal handler that
       * interrupts the holder gives up instead of deadlocking. */
      int unlocked = 0;
      if (atomic_compare_exchange_strong(&log->grow_lock, &unlocked, 1)) {
        struct stat st;
        ok = ste_sys_fstat(fd, &st) == 0 &&
             ((uint64_t)st.st_size >= grown ||
              ste_sys_ftruncate(fd, (long)grown) == 0);
        atomic_store(&log->grow_lock, 0);
      } else {
        ste_sys_close(fd);
        sched_yield();
        continue;
      }
    }
    ste_sys_close(fd);
    if (!ok) return 0;
    while (cap < grown && !atomic_compare_exchange_weak(capacity, &cap, grown)) {
    }
  }
  return 0;
}

void ste_log_append(uint8_t kind, uint8_t op, uint32_t scope_id,
                    const char* path, uint32_t len) {
  SteLog* log = atomic_load_explicit(&current_log, memory_order_acquire);
  if (!log || !log->header) return;
  SteLogHeader* h = log->header;
  uint32_t size = ste_log_record_size(len);
  uint64_t off = atomic_fetch_add((_Atomic uint64_t*)&h->cursor, (uint64_t)size);
  if (off + size > log->window ||
      (off + size > atomic_load((_Atomic uint64_t*)&h->capacity) &&
       !log_grow(log, off + size))) {
    atomic_fetch_add((_Atomic uint64_t*)&h->lost, 1);
    return;
  }
  char* rec = (char*)h + off;
  SteRecordHeader r;
  r.size = 0;
  r.kind = kind;
  r.op = op;
  r.check = ste_log_check(kind, op, scope_id, path, len);
  r.scope_id = scope_id;
  r.path_len = len;
  memcpy(rec + 4, (char*)&r + 4, sizeof r - 4);
  memcpy(rec + sizeof r, path, len);
  rec[sizeof r + len] = '\0'; /* padding is already zero: the file is new */
  atomic_store_explicit((_Atomic uint32_t*)rec, size, memory_order_release);
}
