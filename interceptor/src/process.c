/* This process's life as the library sees it, and the ste_note* functions
 * every hook records through (layer process: process.h).
 *
 * Start-up is lazy: the constructor (preload.c) or the first hook to run,
 * whichever comes first, calls ste_enabled(), which reads the environment
 * once, opens the log and records what the dynamic linker loaded before
 * any hook could see it. A forked child keeps appending to its parent's
 * log until it records something of its own, then opens its own, empties
 * the dedup set and defines its scope stack there: those steps live here,
 * above the layers they drive, so that the log, the dedup set and the
 * scope stack never call back up.
 *
 * The control paths of ste/control.h are recognised here, in ste_note, the
 * one place every hooked path lookup passes through; the pause count they
 * drive is checked by both ste_note and ste_note_abs (fdopendir's path). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "log_writer.h"
#include "path.h"
#include "process.h"
#include "record.h"
#include "scope_stack.h"
#include "ste/control.h"
#include "ste/log_format.h"
#include "sys.h"

const char* ste_log_dir = "";
const char* ste_self_path = "";
static char log_dir_buf[4096];  /* only when STE_LOG_DIR is relative */
static char self_path_buf[4096];
_Atomic uint32_t ste_dlopen_calls;

enum { kUninitialised = 0, kInitialising = 1, kEnabled = 2, kDisabled = 3 };
static _Atomic int state;
static __thread int initialising; /* this thread is inside initialise() */
static int allow_io_uring;        /* STE_ALLOW_IO_URING=1 at start */

/* ---- start-up ------------------------------------------------------------ */

static size_t make_absolute(const char* in, char* out, size_t cap) {
  size_t n = ste_strlen(in);
  size_t base = 0;
  if (in[0] != '/') {
    long r = ste_sys_getcwd(out, cap);
    if (r <= 0 || out[0] != '/') return 0;
    base = ste_strlen(out);
    out[base++] = '/';
  }
  if (base + n + 1 > cap) return 0;
  memcpy(out + base, in, n + 1);
  return ste_path_normalise(out, base + n);
}

/* The objects the loader brought in at start (ours aside), by name, kept
 * once by the first walk: what a program this one execs mostly loads
 * again (ste_seen_keys). 0: not yet; 1: one thread is keeping them; 2:
 * kept, read-only from then on. */
static char loaded_names[4096];
static uint16_t loaded_at[STE_SEEN_MAX], loaded_len[STE_SEEN_MAX];
static int loaded_count;
static _Atomic int loaded_names_state;
static _Atomic int no_log; /* a new image whose log could not be made */

static int loaded_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  const int keep = data != 0;
  const char* name = info->dlpi_name;
  if (!name || name[0] != '/') return 0; /* main program, vdso */
  size_t n = ste_strlen(name);
  if (strcmp(name, ste_self_path) == 0) return 0;
  if (ste_path_is_normal(name, n)) {
    size_t used = loaded_count ? (size_t)loaded_at[loaded_count - 1] + loaded_len[loaded_count - 1] : 0;
    if (keep && loaded_count < STE_SEEN_MAX - 1 && used + n <= sizeof loaded_names) {
      memcpy(loaded_names + used, name, n);
      loaded_at[loaded_count] = (uint16_t)used;
      loaded_len[loaded_count] = (uint16_t)n;
      loaded_count++;
    }
    ste_note_abs(STE_KIND_CONTENT, STE_OP_LOADED, name, n);
  } else {
    ste_note(STE_KIND_CONTENT, STE_OP_LOADED, AT_FDCWD, name);
  }
  return 0;
}

void ste_note_loaded_objects(void) {
  if (atomic_load(&state) != kEnabled) return;
  int saved = errno;
  atomic_store(&ste_dlopen_calls, 0u);
  int expected = 0;
  const int keep = atomic_compare_exchange_strong(&loaded_names_state, &expected, 1);
  dl_iterate_phdr(loaded_object, keep ? (void*)1 : 0);
  if (keep) atomic_store_explicit(&loaded_names_state, 2, memory_order_release);
  errno = saved;
}

int ste_seen_keys(uint64_t program_key, uint64_t* out) {
  int n = 0;
  if (atomic_load(&no_log)) return 0; /* nothing this process "wrote" is anywhere */
  if (program_key) out[n++] = program_key;
  if (atomic_load_explicit(&loaded_names_state, memory_order_acquire) != 2) return n;
  for (int i = 0; i < loaded_count && n < STE_SEEN_MAX; i++) {
    const char* name = loaded_names + loaded_at[i];
    if (ste_record_written(STE_KIND_CONTENT, name, loaded_len[i])) {
      out[n++] = ste_record_key(ste_log_dir, STE_KIND_CONTENT, name, loaded_len[i]);
    }
  }
  return n;
}

uint64_t ste_note_key(int kind, const char* path, size_t len) {
  return ste_record_key(ste_log_dir, kind, path, len);
}

/* ---- fork ---------------------------------------------------------------- */

/* 0: this process writes its own log (or none could be made); 1: a
 * forked child still writing to its parent's; 2: that child, or a new
 * image, is opening its own right now; 3: a new image that has written
 * nothing yet (its log is made at its first record: a program whose
 * records its parent already wrote makes none, STE_SEEN). */
enum { kOwnLog = 0, kParentsLog = 1, kOpening = 2, kNoLogYet = 3 };
static _Atomic int own_log_state;
static uint32_t new_log_flags = STE_LOG_FLAG_EXECED; /* for kNoLogYet */

void ste_after_fork_child(void) {
  if (atomic_load(&state) != kEnabled) return;
  /* Without a log of its own yet, the parent had none to share either:
   * the child makes its own at its first record. */
  if (atomic_load(&own_log_state) == kNoLogYet) {
    new_log_flags = STE_LOG_FLAG_FORKED;
    return;
  }
  atomic_store(&own_log_state, kParentsLog);
}

void ste_ensure_own_log(void) {
  int expected = atomic_load_explicit(&own_log_state, memory_order_acquire);
  if (expected == kOwnLog) return;
  if (expected != kOpening && atomic_compare_exchange_strong(&own_log_state, &expected, kOpening)) {
    const int forked = expected == kParentsLog;
    int saved = errno;
    if (ste_log_open(ste_log_dir, forked ? STE_LOG_FLAG_FORKED : new_log_flags) == 0) {
      if (forked) ste_dedup_reset();
      ste_scope_emit_all();
    } else if (forked) {
      /* Keep writing to the parent's log: attributed to the parent's pid,
       * but nothing is lost. */
      ste_warn("cannot create a log for a forked child; using its parent's", ste_log_dir);
    } else {
      ste_warn("cannot create a log; this process is not recorded", ste_log_dir);
      atomic_store(&no_log, 1);
    }
    atomic_store(&own_log_state, kOwnLog);
    errno = saved;
    return;
  }
  for (int i = 0; i < 100000 && atomic_load(&own_log_state) == kOpening; i++) sched_yield();
}

/* ---- ste_enabled ----------------------------------------------------------- */

static int initialise(void) {
  const char* dir = ste_getenv("STE_LOG_DIR");
  ste_scope_init(ste_getenv("STE_SCOPE"));
  if (!dir || !dir[0]) return 0;
  const char* io_uring = ste_getenv("STE_ALLOW_IO_URING");
  allow_io_uring = io_uring && strcmp(io_uring, "1") == 0;
  /* `ste run` passes absolute, normal paths: use them in place. */
  if (ste_path_is_normal(dir, ste_strlen(dir))) {
    ste_log_dir = dir;
  } else if (make_absolute(dir, log_dir_buf, sizeof log_dir_buf)) {
    ste_log_dir = log_dir_buf;
  } else {
    return 0;
  }
  /* Any function of ours names the object we are in. */
  Dl_info info;
  if (dladdr((void*)&ste_enabled, &info) && info.dli_fname) {
    if (ste_path_is_normal(info.dli_fname, ste_strlen(info.dli_fname))) {
      ste_self_path = info.dli_fname;
    } else if (make_absolute(info.dli_fname, self_path_buf, sizeof self_path_buf)) {
      ste_self_path = self_path_buf;
    }
  }
  /* The log is made at the first record (ste_ensure_own_log). */
  ste_seen_init(ste_getenv("STE_SEEN"));
  atomic_store(&own_log_state, kNoLogYet);
  pthread_atfork(0, 0, ste_after_fork_child);
  return 1;
}

int ste_enabled(void) {
  int s = atomic_load_explicit(&state, memory_order_acquire);
  if (s == kEnabled) return 1;
  if (s == kDisabled) return 0;
  if (initialising) return 0; /* re-entered from inside initialise() */
  int expected = kUninitialised;
  if (atomic_compare_exchange_strong(&state, &expected, kInitialising)) {
    int saved = errno;
    initialising = 1;
    int on = initialise();
    initialising = 0;
    atomic_store(&state, on ? kEnabled : kDisabled);
    if (on) {
      /* The program and the libraries the dynamic linker loaded before
       * we could see any open(). */
      /* The program as exec'ed (AT_EXECFN: no syscall, and the path as
       * the caller named it), else /proc/self/exe. */
      const char* execfn = (const char*)getauxval(AT_EXECFN);
      size_t execfn_len = ste_strlen(execfn);
      if (ste_path_is_normal(execfn, execfn_len)) {
        ste_note_abs(STE_KIND_CONTENT, STE_OP_LOADED, execfn, execfn_len);
      } else if (execfn_len) {
        ste_note(STE_KIND_CONTENT, STE_OP_LOADED, AT_FDCWD, execfn);
      } else {
        char exe[STE_PATH_CAP];
        long n = ste_sys_readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
          exe[n] = '\0';
          ste_note_abs(STE_KIND_CONTENT, STE_OP_LOADED, exe, (size_t)n);
        }
      }
      ste_note_loaded_objects();
    }
    errno = saved;
    return on;
  }
  /* Another thread is initialising. */
  while (atomic_load(&state) == kInitialising) sched_yield();
  return atomic_load(&state) == kEnabled;
}

/* ---- control paths (ste/control.h) ----------------------------------------- */

/* This thread's listing pause count. Thread-local with the initial-exec
 * model: the library is LD_PRELOADed, so it is loaded at start-up and its
 * TLS lives in the static TLS block: its offset from the GOT, then one
 * %fs-relative load; no __tls_get_addr, no allocation, async-signal-safe
 * (readelf -d shows STATIC_TLS). A new thread starts
 * at 0; fork copies the calling thread's value into the child; exec starts
 * over at 0. */
static __thread unsigned listing_pause __attribute__((tls_model("initial-exec")));

enum SteControl ste_control_classify(const char* path) {
  /* strncmp stops at a shorter path's NUL. */
  if (path[0] != '/' || path[1] != '\001' ||
      strncmp(path, STE_CONTROL_PREFIX, STE_CONTROL_PREFIX_LEN) != 0) {
    return STE_CTL_NONE;
  }
  if (strcmp(path, STE_CONTROL_PAUSE_LISTINGS) == 0) return STE_CTL_PAUSE_LISTINGS;
  if (strcmp(path, STE_CONTROL_RESUME_LISTINGS) == 0) return STE_CTL_RESUME_LISTINGS;
  return STE_CTL_UNKNOWN;
}

int ste_control_apply(const char* path) {
  switch (ste_control_classify(path)) {
    case STE_CTL_NONE:
      return 0;
    case STE_CTL_PAUSE_LISTINGS:
      if (listing_pause != ~0u) listing_pause++;
      return 1;
    case STE_CTL_RESUME_LISTINGS:
      if (listing_pause != 0) listing_pause--;
      return 1;
    case STE_CTL_UNKNOWN:
      return 1;
  }
  return 1;
}

unsigned ste_listings_paused(void) { return listing_pause; }

/* ---- recording ------------------------------------------------------------- */

void ste_note_abs(int kind, int op, const char* path, size_t len) {
  if (kind == STE_KIND_LISTING && listing_pause) return;
  if (len == 0 || ste_path_skipped(path, len)) return;
  if (atomic_load_explicit(&ste_dlopen_calls, memory_order_relaxed)) {
    ste_note_loaded_objects();
  }
  /* What the parent wrote for this image (STE_SEEN): not again, and no
   * log made for it. */
  if (ste_record_inherited(ste_log_dir, kind, op, path, len)) {
    ste_record_remember(kind, path, len); /* so that its own children skip it too */
    return;
  }
  /* A forked child writes to its parent's log until it records something
   * of its own; what an exec records before it replaces the image may go
   * to the parent's log. A new image makes its log now. */
  if ((op != STE_OP_EXEC && op != STE_OP_SPAWN && op != STE_OP_PATH_SEARCH) ||
      atomic_load_explicit(&own_log_state, memory_order_relaxed) == kNoLogYet) {
    ste_ensure_own_log();
  }
  ste_record_abs(kind, op, path, len);
}

void ste_note_env(const char* name, int op) {
  if (!name || !name[0] || ste_starts_with(name, "STE_") || !ste_enabled()) return;
  int saved = errno;
  static const char kPrefix[] = "/\001ste-env:";
  char path[1024 + sizeof kPrefix];
  size_t n = sizeof kPrefix - 1;
  memcpy(path, kPrefix, n);
  for (const char* p = name; *p; p++) {
    if (*p == '=') {
      errno = saved;
      return;
    }
    if (n + 3 > sizeof path - 1) {
      ste_note_abs(STE_KIND_UNFOLLOWED, op, "<getenv: a name over 1000 bytes>", 32);
      errno = saved;
      return;
    }
    if (*p == '%' || *p == '/') {
      path[n++] = '%';
      path[n++] = '2';
      path[n++] = *p == '%' ? '5' : 'F';
    } else {
      path[n++] = *p;
    }
  }
  path[n] = '\0';
  ste_note_abs(STE_KIND_ABSENT, op, path, n);
  errno = saved;
}

void ste_note(int kind, int op, int dirfd, const char* path) {
  if (!path || !path[0] || !ste_enabled()) return;
  /* Before the fast path: a second pause must not be deduplicated away,
   * and a listing skipped while paused must not be remembered as recorded.
   * An ordinary path pays a byte compare, a listing a TLS load. */
  if (path[1] == '\001' && ste_control_apply(path)) return;
  if (kind == STE_KIND_LISTING && listing_pause) return;
  int saved = errno;
  /* Fast path: this raw path, in this scope, kind and cwd, was recorded. */
  uint64_t raw;
  if (ste_record_raw_seen(kind, dirfd, path, &raw)) {
    errno = saved;
    return;
  }
  char abs[STE_PATH_CAP];
  size_t len = ste_path_resolve(dirfd, path, abs, sizeof abs);
  if (len) {
    ste_note_abs(kind, op, abs, len);
    ste_record_raw_done(raw);
  } else {
    /* Unresolvable (cwd unknown, dirfd without a path, too long): record
     * it as given, as unfollowed, so its test can never be narrowed. */
    size_t n = strlen(path);
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

void ste_note_open(int dirfd, const char* path, int flags, int ok, int err) {
  if ((flags & O_TMPFILE) == O_TMPFILE) return; /* an unnamed output */
  int access_mode = flags & O_ACCMODE;
  if (ok && access_mode == O_WRONLY) {
    ste_note(STE_KIND_WRITE, STE_OP_OPEN, dirfd, path);
    return;
  }
  ste_note_lookup(STE_OP_OPEN, dirfd, path, ok, err);
  /* A read-write open that may have created the file is an output too. */
  if (ok && access_mode == O_RDWR && (flags & O_CREAT)) {
    ste_note(STE_KIND_WRITE, STE_OP_OPEN, dirfd, path);
  }
}

void ste_note_fd_listing(int fd, const char* unnamed) {
  if (!ste_enabled() || listing_pause) return;
  int saved = errno;
  char path[STE_PATH_CAP];
  size_t n = ste_path_of_fd(fd, path, sizeof path);
  if (n) {
    ste_note_abs(STE_KIND_LISTING, STE_OP_OPENDIR, path, ste_path_normalise(path, n));
  } else {
    ste_note_abs(STE_KIND_UNFOLLOWED, STE_OP_OPENDIR, unnamed, ste_strlen(unnamed));
  }
  errno = saved;
}

/* ---- io_uring ---------------------------------------------------------------- */

int ste_io_uring_refused(void) { return ste_enabled() && !allow_io_uring; }

void ste_note_io_uring(void) {
  if (!ste_enabled()) return;
  int saved = errno;
  ste_note_abs(STE_KIND_UNFOLLOWED, STE_OP_NONE, "<io_uring>", 10);
  errno = saved;
}
