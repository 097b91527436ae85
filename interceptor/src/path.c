/* Absolute, normalised paths for records, and the cached cwd (layer path:
 * path.h).
 *
 * The cwd is read once at start and after every successful chdir/fchdir
 * (and in a forked child), into one of two buffers; readers take the
 * current buffer through an atomic pointer, so a hook never makes a
 * syscall to learn the cwd. A path relative to a real dirfd is resolved
 * with readlink("/proc/self/fd/N") — one syscall, off the common path.
 *
 * Normalisation is lexical: empty and "." components vanish, "x/.."
 * folds. If x is a symlink to another directory, the kernel would resolve
 * "x/.." differently; such paths are rare in test runs, and the content
 * of what was opened is still recorded under the path the kernel did not
 * use only in that case (documented in docs/HACKING.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "path.h"

static char cwd_buf[2][4096];
static _Atomic(const char*) cwd_current; /* NULL: unknown */
static _Atomic int cwd_next;
static _Atomic uint64_t cwd_generation;

uint64_t ste_cwd_generation(void) {
  return atomic_load_explicit(&cwd_generation, memory_order_relaxed);
}

void ste_cwd_refresh(void) {
  int saved = errno;
  int slot = atomic_fetch_add(&cwd_next, 1) & 1;
  long n = ste_sys_getcwd(cwd_buf[slot], sizeof cwd_buf[slot]);
  /* getcwd(2) returns "(unreachable)..." for a cwd outside our root. */
  if (n > 0 && cwd_buf[slot][0] == '/') {
    atomic_store(&cwd_current, cwd_buf[slot]);
  } else {
    atomic_store(&cwd_current, (const char*)0);
  }
  atomic_fetch_add(&cwd_generation, 1);
  errno = saved;
}

int ste_path_skipped(const char* p, size_t len) {
  /* "/\001ste": the control paths' directory (ste/control.h), which does
   * not exist; nothing at or below it is ever recorded. */
  static const char* const kSkipped[] = {"/proc", "/sys", "/dev", "/\001ste"};
  for (size_t i = 0; i < sizeof kSkipped / sizeof kSkipped[0]; i++) {
    size_t k = ste_strlen(kSkipped[i]);
    if (len >= k && memcmp(p, kSkipped[i], k) == 0 &&
        (len == k || p[k] == '/')) {
      return 1;
    }
  }
  return 0;
}

int ste_path_is_normal(const char* p, size_t len) {
  if (len == 0 || p[0] != '/') return 0;
  if (len == 1) return 1;
  if (p[len - 1] == '/') return 0;
  for (size_t i = 0; i < len; i++) {
    if (p[i] != '/') continue;
    /* p[i] starts a component: reject "", ".", ".." */
    const char* c = p + i + 1;
    size_t rest = len - i - 1;
    if (rest == 0 || c[0] == '/') return 0;
    if (c[0] == '.' && (rest == 1 || c[1] == '/')) return 0;
    if (c[0] == '.' && c[1] == '.' && (rest == 2 || c[2] == '/')) return 0;
  }
  return 1;
}

size_t ste_path_normalise(char* p, size_t len) {
  /* p[0] == '/'. Walk components, writing the result over the input. */
  size_t out = 1;
  size_t i = 1;
  while (i < len) {
    while (i < len && p[i] == '/') i++;
    size_t start = i;
    while (i < len && p[i] != '/') i++;
    size_t n = i - start;
    if (n == 0 || (n == 1 && p[start] == '.')) continue;
    if (n == 2 && p[start] == '.' && p[start + 1] == '.') {
      /* Drop the last written component (never above the root). */
      if (out > 1) {
        out--; /* the trailing '/' */
        while (out > 1 && p[out - 1] != '/') out--;
      }
      continue;
    }
    if (out > 1 && p[out - 1] != '/') p[out++] = '/';
    memmove(p + out, p + start, n);
    out += n;
  }
  if (out > 1 && p[out - 1] == '/') out--;
  p[out] = '\0';
  return out;
}

size_t ste_path_of_fd(int fd, char* out, size_t cap) {
  char link[64] = "/proc/self/fd/";
  size_t n = 14;
  char digits[16];
  size_t d = 0;
  unsigned v = (unsigned)fd;
  do {
    digits[d++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && d < sizeof digits);
  while (d) link[n++] = digits[--d];
  link[n] = '\0';
  long r = ste_sys_readlink(link, out, cap - 1);
  if (r <= 0 || out[0] != '/') return 0;
  out[r] = '\0';
  return (size_t)r;
}

size_t ste_path_resolve(int dirfd, const char* path, char* out, size_t cap) {
  size_t plen = ste_strlen(path);
  size_t base = 0;
  if (path[0] != '/') {
    if (dirfd == AT_FDCWD) {
      /* The cwd is read on first need: most short processes never ask. */
      if (atomic_load_explicit(&cwd_generation, memory_order_acquire) == 0) ste_cwd_refresh();
      const char* cwd = atomic_load(&cwd_current);
      if (!cwd) return 0;
      base = ste_strlen(cwd);
      if (base + 1 >= cap) return 0;
      memcpy(out, cwd, base);
    } else {
      base = ste_path_of_fd(dirfd, out, cap);
      if (!base) return 0;
    }
    out[base++] = '/';
  }
  if (base + plen + 1 > cap) return 0;
  memcpy(out + base, path, plen);
  return ste_path_normalise(out, base + plen);
}
