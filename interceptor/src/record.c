/* The hot path: resolve, filter, dedup, append.
 *
 * Dedup: an open-addressing set of 64-bit hashes of (scope id, kind,
 * path), inserted with compare-and-swap, probed at most kMaxProbe slots.
 * A full neighbourhood only means a duplicate record, never a lost one:
 * correctness does not depend on the set, only the log's size does. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

enum { kDedupBits = 18, kMaxProbe = 32 };
#define DEDUP_SLOTS (1u << kDedupBits)

static _Atomic uint64_t dedup_static[DEDUP_SLOTS];
static _Atomic(_Atomic uint64_t*) dedup_table = dedup_static;

void ste_dedup_reset_after_fork(void) {
  /* The parent's entries describe the parent's log; the child starts an
   * empty set. A fresh anonymous mapping costs nothing until touched. */
  void* fresh = mmap(0, sizeof dedup_static, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh != MAP_FAILED) {
    _Atomic uint64_t* old = atomic_exchange(&dedup_table, (_Atomic uint64_t*)fresh);
    if (old != dedup_static) munmap((void*)old, sizeof dedup_static);
  } else {
    /* No memory for a new set: disable dedup rather than skip records. */
    atomic_store(&dedup_table, (_Atomic uint64_t*)0);
  }
}

static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static uint64_t record_hash(uint32_t scope_id, int kind, const char* p,
                            size_t len) {
  uint64_t h = mix64(((uint64_t)scope_id << 8 | (uint64_t)kind) ^ len);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ mix64(w)) * 0x9e3779b97f4a7c15ull;
  }
  uint64_t tail = 0;
  memcpy(&tail, p + i, len - i);
  h = mix64(h ^ tail ^ (uint64_t)(len - i) << 59);
  return h | 1; /* 0 marks an empty slot */
}

/* 1 if h is in the set. */
static int dedup_contains(_Atomic uint64_t* t, uint64_t h) {
  for (uint32_t i = 0; i < kMaxProbe; i++) {
    uint64_t v = atomic_load_explicit(&t[(h + i) & (DEDUP_SLOTS - 1)],
                                      memory_order_relaxed);
    if (v == h) return 1;
    if (v == 0) return 0;
  }
  return 0;
}

static void dedup_insert(_Atomic uint64_t* t, uint64_t h) {
  for (uint32_t i = 0; i < kMaxProbe; i++) {
    _Atomic uint64_t* slot = &t[(h + i) & (DEDUP_SLOTS - 1)];
    uint64_t expected = 0;
    if (atomic_compare_exchange_strong_explicit(
            slot, &expected, h, memory_order_relaxed, memory_order_relaxed)) {
      return;
    }
    if (expected == h) return;
  }
}

void ste_note_abs(int kind, int op, const char* path, size_t len) {
  if (len == 0 || ste_path_skipped(path, len)) return;
  if (atomic_load_explicit(&ste_dlopen_calls, memory_order_relaxed)) {
    ste_note_loaded_objects();
  }
  uint32_t scope = ste_scope_id();
  _Atomic uint64_t* t = atomic_load_explicit(&dedup_table, memory_order_relaxed);
  uint64_t h = 0;
  if (t) {
    h = record_hash(scope, kind, path, len);
    if (dedup_contains(t, h)) return;
  }
  ste_log_append((uint8_t)kind, (uint8_t)op, scope, path, (uint32_t)len);
  if (t) dedup_insert(t, h);
}

void ste_note(int kind, int op, int dirfd, const char* path) {
  if (!path || !path[0] || !ste_enabled()) return;
  int saved = errno;
  char abs[STE_PATH_CAP];
  size_t len = ste_path_resolve(dirfd, path, abs, sizeof abs);
  if (len) {
    ste_note_abs(kind, op, abs, len);
  } else {
    /* Unresolvable (cwd unknown, dirfd without a path, too long): record
     * it as given, as unfollowed, so its test can never be narrowed. */
    size_t n = ste_strlen(path);
    if (n > 4096) n = 4096;
    ste_note_abs(STE_KIND_UNFOLLOWED, op, path, n);
  }
  errno = saved;
}

void ste_note_lookup(int op, int dirfd, const char* path, int ok, int err) {
  if (ok) {
    ste_note(STE_KIND_CONTENT, op, dirfd, path);
    return;
  }
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      ste_note(STE_KIND_ABSENT, op, dirfd, path);
      return;
    case EBADF:
    case EFAULT:
    case EINTR:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
    case ENAMETOOLONG:
      return;
    default:
      ste_note(STE_KIND_CONTENT, op, dirfd, path);
  }
}
