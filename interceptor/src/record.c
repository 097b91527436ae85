/* The hot path's bottom half: dedup, append (layer record: record.h).
 * Resolving and filtering happen above, in process.c's ste_note*.
 *
 * Dedup is a set of 64-bit hashes of (scope id, kind, path), in two tiers:
 * a small table (512 slots, one page) that a short-lived process never
 * outgrows, so it touches one page of dedup state, and a large one
 * (256k slots) mapped on demand once the small one is half full. Inserts
 * are compare-and-swap, probes bounded: a full neighbourhood only means a
 * duplicate record, never a lost one. Correctness never depends on the
 * set, only the log's size does.
 *
 * The fast path: before resolving anything, the *raw* path is looked up
 * (hashed with the scope, the kind and, for a relative path, the cwd
 * generation). A program that opens the same files over and over pays for
 * a strlen, a hash and one probe per call. Only AT_FDCWD and absolute paths
 * take it: what a dirfd names can change between calls. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "log_writer.h"
#include "path.h"
#include "record.h"
#include "scope_stack.h"
#include "ste/log_format.h"

enum {
  kL1Bits = 9, /* 512 slots: one page */
  kL1Fill = 1 << (kL1Bits - 1),
  kL2Bits = 18,
  kMaxProbe = 32,
};
#define L1_SLOTS (1u << kL1Bits)
#define L2_SLOTS (1u << kL2Bits)
#define L2_BYTES (L2_SLOTS * sizeof(uint64_t))

static _Atomic uint64_t l1[L1_SLOTS] __attribute__((aligned(4096)));
static _Atomic uint32_t l1_used;
static _Atomic(_Atomic uint64_t*) l2;
static _Atomic int dedup_off; /* no memory for the large table: dup freely */

void ste_dedup_reset(void) {
  memset((void*)l1, 0, sizeof l1);
  atomic_store(&l1_used, 0u);
  _Atomic uint64_t* old = atomic_exchange(&l2, (_Atomic uint64_t*)0);
  if (old) munmap((void*)old, L2_BYTES);
  atomic_store(&dedup_off, 0);
}

static inline uint64_t fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* A full mix (fmix64, a bijection) per 8-byte word and one for the tail:
 * two paths of one length collide only when the state and the word differ
 * alike, about 2^-64. (A multiply alone keeps a difference in a word's top
 * bits in the top bits, where a rotate and the next word could cancel it:
 * "/full/100009" and "/full/180004" shared a hash, and the second was never
 * recorded.) */
static uint64_t path_hash(uint64_t seed, const char* p, size_t len) {
  uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = fmix64(h ^ w);
  }
  uint64_t tail = 0;
  memcpy(&tail, p + i, len - i);
  h = fmix64(h ^ tail);
  return h | 1; /* 0 marks an empty slot */
}

static int probe_contains(_Atomic uint64_t* t, uint32_t mask, uint64_t h) {
  for (uint32_t i = 0; i < kMaxProbe; i++) {
    uint64_t v = atomic_load_explicit(&t[(h + i) & mask], memory_order_relaxed);
    if (v == h) return 1;
    if (v == 0) return 0;
  }
  return 0;
}

/* 1 if inserted or already there. */
static int probe_insert(_Atomic uint64_t* t, uint32_t mask, uint64_t h) {
  for (uint32_t i = 0; i < kMaxProbe; i++) {
    _Atomic uint64_t* slot = &t[(h + i) & mask];
    uint64_t expected = 0;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, h, memory_order_relaxed,
                                                memory_order_relaxed)) {
      return 1;
    }
    if (expected == h) return 1;
  }
  return 0;
}

static int seen(uint64_t h) {
  if (probe_contains(l1, L1_SLOTS - 1, h)) return 1;
  _Atomic uint64_t* big = atomic_load_explicit(&l2, memory_order_acquire);
  return big && probe_contains(big, L2_SLOTS - 1, h);
}

static void remember(uint64_t h) {
  if (atomic_load_explicit(&l1_used, memory_order_relaxed) < kL1Fill) {
    atomic_fetch_add_explicit(&l1_used, 1u, memory_order_relaxed);
    if (probe_insert(l1, L1_SLOTS - 1, h)) return;
  }
  if (atomic_load_explicit(&dedup_off, memory_order_relaxed)) return;
  _Atomic uint64_t* big = atomic_load_explicit(&l2, memory_order_acquire);
  if (!big) {
    void* fresh = mmap(0, L2_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) {
      atomic_store(&dedup_off, 1);
      return;
    }
    _Atomic uint64_t* expected = 0;
    if (atomic_compare_exchange_strong(&l2, &expected, (_Atomic uint64_t*)fresh)) {
      big = (_Atomic uint64_t*)fresh;
    } else {
      munmap(fresh, L2_BYTES); /* another thread won */
      big = expected;
    }
  }
  probe_insert(big, L2_SLOTS - 1, h);
}

static inline uint64_t record_seed(uint32_t scope, int kind, uint64_t domain) {
  return ((uint64_t)scope << 8 | (uint64_t)kind) ^ domain;
}

/* The dedup key of (scope, kind, path). */
static inline uint64_t record_hash(uint32_t scope, int kind, const char* path, size_t len) {
  return path_hash(record_seed(scope, kind, 0), path, len);
}

void ste_record_abs(int kind, int op, const char* path, size_t len) {
  uint32_t scope = ste_scope_id();
  uint64_t h = record_hash(scope, kind, path, len);
  if (seen(h)) return;
  ste_log_append((uint8_t)kind, (uint8_t)op, scope, path, (uint32_t)len);
  remember(h);
}

int ste_record_raw_seen(int kind, int dirfd, const char* path, uint64_t* key) {
  *key = 0;
  if (path[0] != '/' && dirfd != AT_FDCWD) return 0;
  uint64_t domain = path[0] == '/' ? 0x5bd1e995u : ste_cwd_generation() * 0x2545f4914f6cdd1dull;
  uint64_t raw = path_hash(record_seed(ste_scope_id(), kind, domain) ^ 0xa0761d6478bd642full,
                           path, strlen(path));
  if (seen(raw)) return 1;
  *key = raw;
  return 0;
}

/* ---- what the parent wrote (STE_SEEN) -------------------------------------- */

static uint64_t inherited[STE_SEEN_MAX];
static int n_inherited;

/* A key that means the same in every process of the run: the scope by its
 * name (ids are per log), the log directory (a nested run with its own
 * directory must not take this one's records for its own), the kind and
 * the path. */
uint64_t ste_record_key(const char* log_dir, int kind, const char* path, size_t len) {
  const char* scope = ste_scope_string();
  uint64_t seed = path_hash(0x9e3779b97f4a7c15ull ^ (uint64_t)kind, scope, ste_strlen(scope));
  seed = path_hash(seed, log_dir, ste_strlen(log_dir));
  return path_hash(seed, path, len) | 1; /* never 0: an empty slot */
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void ste_seen_init(const char* value) {
  n_inherited = 0;
  const char* p = value;
  while (p && *p && n_inherited < STE_SEEN_MAX) {
    uint64_t v = 0;
    int digits = 0;
    for (; *p && *p != ','; p++, digits++) {
      int d = hexval(*p);
      if (d < 0 || digits == 16) return; /* malformed: trust none of the rest */
      v = v << 4 | (uint64_t)d;
    }
    if (digits == 16 && (v & 1)) inherited[n_inherited++] = v;
    if (*p == ',') p++;
  }
}

int ste_record_inherited(const char* log_dir, int kind, int op, const char* path, size_t len) {
  if (n_inherited == 0 || op != STE_OP_LOADED) return 0;
  uint64_t key = ste_record_key(log_dir, kind, path, len);
  for (int i = 0; i < n_inherited; i++) {
    if (inherited[i] == key) return 1;
  }
  return 0;
}

void ste_record_remember(int kind, const char* path, size_t len) {
  remember(record_hash(ste_scope_id(), kind, path, len));
}

int ste_record_written(int kind, const char* path, size_t len) {
  return seen(record_hash(ste_scope_id(), kind, path, len));
}

void ste_record_raw_done(uint64_t key) {
  if (key) remember(key);
}
