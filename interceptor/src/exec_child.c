/* What an exec depends on, and the environment that keeps the new image
 * traced (layer child: exec_child.h).
 *
 * What an exec depends on is recorded before the call: the program
 * (content), every PATH directory probed before it was found (absent),
 * a script's interpreter (content). A program the library cannot follow
 * is recorded as STE_KIND_UNFOLLOWED: a static binary (no PT_INTERP), one
 * for another ELF class or machine, a setuid/setgid one that would change
 * our identity (the loader ignores LD_PRELOAD then), one with file
 * capabilities (same), one we cannot read, or an exec whose environment
 * could not be rebuilt. */
#define _GNU_SOURCE
#include "exec_child.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "process.h"
#include "scope_stack.h"
#include "ste/log_format.h"
#include "sys.h"

/* ---- what an exec depends on ------------------------------------------- */

void ste_note_unfollowed(const char* what, int op) {
  int saved = errno;
  ste_note_abs(STE_KIND_UNFOLLOWED, op, what, ste_strlen(what));
  errno = saved;
}

#if defined(__LP64__)
#define STE_ELF_CLASS ELFCLASS64
typedef Elf64_Ehdr SteEhdr;
typedef Elf64_Phdr StePhdr;
#else
#define STE_ELF_CLASS ELFCLASS32
typedef Elf32_Ehdr SteEhdr;
typedef Elf32_Phdr StePhdr;
#endif
#if defined(__x86_64__)
#define STE_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define STE_ELF_MACHINE EM_AARCH64
#else
#define STE_ELF_MACHINE 0 /* not checked */
#endif

/* Verdicts on ELF files already checked by this process, keyed by the
 * file's identity. Entries may be written by a vfork child into its
 * parent's memory while a thread of the parent reads them, so each entry
 * carries a check over its fields: a torn entry is a miss, never a wrong
 * "followable". */
typedef struct ElfVerdict {
  uint64_t dev, ino, size, mtime_ns, ctime_ns;
  uint64_t followable; /* 1 or 0 */
  uint64_t check;
} ElfVerdict;
static ElfVerdict verdicts[16];
static _Atomic unsigned verdict_next;

static uint64_t verdict_check(const ElfVerdict* v) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  const uint64_t* f = &v->dev;
  for (int i = 0; i < 6; i++) h = (h ^ f[i]) * 0x100000001b3ull + (h >> 29);
  return h | 1;
}

static void identity(const struct stat* st, ElfVerdict* v) {
  v->dev = st->st_dev;
  v->ino = st->st_ino;
  v->size = (uint64_t)st->st_size;
  v->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
  v->ctime_ns = (uint64_t)st->st_ctim.tv_sec * 1000000000ull + (uint64_t)st->st_ctim.tv_nsec;
}

/* 1 followable, 0 not, -1 unknown. */
static int cached_verdict(const struct stat* st) {
  ElfVerdict key;
  identity(st, &key);
  for (unsigned i = 0; i < sizeof verdicts / sizeof verdicts[0]; i++) {
    ElfVerdict v = verdicts[i];
    if (v.check == verdict_check(&v) && v.dev == key.dev && v.ino == key.ino &&
        v.size == key.size && v.mtime_ns == key.mtime_ns && v.ctime_ns == key.ctime_ns) {
      return (int)v.followable;
    }
  }
  return -1;
}

static void remember_verdict(const struct stat* st, int followable) {
  ElfVerdict v;
  identity(st, &v);
  v.followable = (uint64_t)followable;
  v.check = verdict_check(&v);
  unsigned i = atomic_fetch_add(&verdict_next, 1u) % (sizeof verdicts / sizeof verdicts[0]);
  verdicts[i].check = 0;
  verdicts[i] = v;
}

/* Checks that the loader will honour LD_PRELOAD in the image `abs`, whose
 * stat is `known` (NULL: stat it here). */
static void check_followable_stat(const char* abs, int op, int depth,
                                  const struct stat* known) {
  struct stat st;
  if (known) {
    st = *known;
  } else if (ste_sys_stat(abs, &st) != 0) {
    return; /* the exec fails */
  }
  if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
      ((st.st_mode & S_ISGID) && st.st_gid != getgid())) {
    ste_note_unfollowed(abs, op);
    return;
  }
  int cached = cached_verdict(&st);
  if (cached >= 0) {
    if (!cached) ste_note_unfollowed(abs, op);
    return;
  }
  uid_t uid = getuid();
  int fd = ste_sys_open(abs, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    ste_note_unfollowed(abs, op); /* execute-only: cannot tell */
    return;
  }
  char head[1024];
  long n = ste_sys_pread(fd, head, sizeof head, 0);
  if (n < 0) {
    ste_sys_close(fd);
    ste_note_unfollowed(abs, op);
    return;
  }
  if (uid != 0 && ste_sys_getxattr(abs, "security.capability") >= 0) {
    ste_sys_close(fd);
    ste_note_unfollowed(abs, op);
    return;
  }
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    ste_sys_close(fd);
    /* "#!  /path/to/interp arg" — the kernel execs the interpreter. */
    long i = 2;
    while (i < n && (head[i] == ' ' || head[i] == '\t')) i++;
    long start = i;
    while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n') i++;
    if (i == start || i >= n) return;
    char interp[STE_PATH_CAP];
    memcpy(interp, head + start, (size_t)(i - start));
    interp[i - start] = '\0';
    char abs_interp[STE_PATH_CAP];
    size_t len = ste_path_resolve(AT_FDCWD, interp, abs_interp, sizeof abs_interp);
    if (!len) return;
    ste_note_abs(STE_KIND_CONTENT, op, abs_interp, len);
    if (depth < 4) check_followable_stat(abs_interp, op, depth + 1, 0);
    return;
  }
  if (n < (long)sizeof(SteEhdr) || memcmp(head, ELFMAG, SELFMAG) != 0) {
    ste_sys_close(fd);
    return; /* not ELF: the exec fails or a shell runs it */
  }
  SteEhdr eh;
  memcpy(&eh, head, sizeof eh);
  int followable = 0;
  if (eh.e_ident[EI_CLASS] == STE_ELF_CLASS &&
      (!STE_ELF_MACHINE || eh.e_machine == STE_ELF_MACHINE)) {
    for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
      StePhdr ph;
      long off = (long)eh.e_phoff + (long)i * eh.e_phentsize;
      if (off >= 0 && off + (long)sizeof ph <= n) {
        memcpy(&ph, head + off, sizeof ph); /* usually in the first read */
      } else if (ste_sys_pread(fd, &ph, sizeof ph, off) != (long)sizeof ph) {
        break;
      }
      if (ph.p_type == PT_INTERP) {
        followable = 1; /* dynamically linked */
        break;
      }
    }
  }
  ste_sys_close(fd);
  remember_verdict(&st, followable);
  if (!followable) ste_note_unfollowed(abs, op);
}

void ste_exec_check_followable(const char* abs, int op) {
  int saved = errno;
  check_followable_stat(abs, op, 0, 0);
  errno = saved;
}

/* The key of the program this thread last recorded as exec'd (a vfork
 * child writes its parent thread's copy: scratch either way), for the
 * child's STE_SEEN; 0: none. A stale one is still true: that record is
 * in a log of this run. */
static __thread uint64_t last_program_key __attribute__((tls_model("initial-exec")));

/* 1 an executable regular file, 0 something else, -1 nothing (*st set
 * when it exists). */
static int executable_file(const char* abs, struct stat* st) {
  if (ste_sys_stat(abs, st) != 0) return -1;
  return S_ISREG(st->st_mode) && (st->st_mode & 0111) ? 1 : 0;
}

void ste_exec_note_program(const char* file, int search, int op) {
  if (!ste_enabled() || ste_strlen(file) == 0) return;
  int saved = errno;
  char abs[STE_PATH_CAP];
  size_t len = 0;
  struct stat st;
  int have_stat = 0;
  if (search && !strchr(file, '/')) {
    const char* path = ste_getenv("PATH");
    ste_note_env("PATH", STE_OP_PATH_SEARCH); /* another PATH, another program */
    if (!path) path = "/bin:/usr/bin";
    size_t flen = ste_strlen(file);
    while (!len) {
      const char* end = strchr(path, ':');
      size_t dlen = end ? (size_t)(end - path) : ste_strlen(path);
      char cand[STE_PATH_CAP];
      if (dlen + flen + 3 < sizeof cand) {
        size_t k = 0;
        if (dlen == 0) cand[k++] = '.';
        memcpy(cand + k, path, dlen);
        k += dlen;
        cand[k++] = '/';
        memcpy(cand + k, file, flen + 1);
        size_t clen = ste_path_resolve(AT_FDCWD, cand, abs, sizeof abs);
        if (clen) {
          int x = executable_file(abs, &st);
          if (x == 1) {
            len = clen;
            have_stat = 1;
          } else {
            ste_note_abs(x < 0 ? STE_KIND_ABSENT : STE_KIND_CONTENT,
                         STE_OP_PATH_SEARCH, abs, clen);
          }
        }
      }
      if (!end) break;
      path = end + 1;
    }
  } else {
    len = ste_path_resolve(AT_FDCWD, file, abs, sizeof abs);
    if (len) {
      if (executable_file(abs, &st) < 0) {
        ste_note_abs(STE_KIND_ABSENT, op, abs, len);
        len = 0;
      } else {
        have_stat = 1;
      }
    }
  }
  last_program_key = 0;
  if (len) {
    ste_note_abs(STE_KIND_CONTENT, op, abs, len);
    last_program_key = ste_note_key(STE_KIND_CONTENT, abs, len);
    check_followable_stat(abs, op, 0, have_stat ? &st : 0);
  }
  errno = saved;
}

size_t ste_exec_note_at(int dirfd, const char* path, int flags,
                        const char* unnamed, char* abs, size_t cap) {
  int saved = errno;
  size_t n = 0;
  if (ste_strlen(path) > 0) {
    n = ste_path_resolve(dirfd, path, abs, cap);
  } else if (flags & AT_EMPTY_PATH) {
    n = ste_path_of_fd(dirfd, abs, cap);
    if (n) n = ste_path_normalise(abs, n);
  }
  last_program_key = 0;
  if (n) {
    ste_note_abs(STE_KIND_CONTENT, STE_OP_EXEC, abs, n);
    last_program_key = ste_note_key(STE_KIND_CONTENT, abs, n);
    check_followable_stat(abs, STE_OP_EXEC, 0, 0);
  } else {
    ste_note_unfollowed(unnamed, STE_OP_EXEC);
  }
  errno = saved;
  return n;
}

/* ---- the child's environment -------------------------------------------- */

static int is_ste_var(const char* e) {
  return ste_starts_with(e, "LD_PRELOAD=") || ste_starts_with(e, "STE_LOG_DIR=") ||
         ste_starts_with(e, "STE_SCOPE=") || ste_starts_with(e, "STE_SEEN=");
}

/* "STE_SEEN=<key>,<key>..." into out (room for 9 + 17 * STE_SEEN_MAX
 * bytes), or "" when there is no key to pass. */
static void seen_entry(char* out) {
  uint64_t keys[STE_SEEN_MAX];
  int n = ste_seen_keys(last_program_key, keys);
  if (n == 0) {
    out[0] = '\0';
    return;
  }
  memcpy(out, "STE_SEEN=", 9);
  size_t k = 9;
  for (int i = 0; i < n; i++) {
    if (i) out[k++] = ',';
    for (int shift = 60; shift >= 0; shift -= 4) out[k++] = "0123456789abcdef"[(keys[i] >> shift) & 15];
  }
  out[k] = '\0';
}

int ste_preload_has_self(const char* list) {
  size_t self_len = ste_strlen(ste_self_path);
  const char* p = list;
  while (*p) {
    while (*p == ' ' || *p == ':') p++;
    const char* start = p;
    while (*p && *p != ' ' && *p != ':') p++;
    if ((size_t)(p - start) == self_len &&
        memcmp(start, ste_self_path, self_len) == 0) {
      return 1;
    }
  }
  return 0;
}

static char* put(char* s, const char* text) {
  size_t n = ste_strlen(text);
  memcpy(s, text, n);
  return s + n;
}

char** ste_child_env(char* const* in, SteChildEnv* ce) {
  ce->map = 0;
  size_t n = 0;
  const char* preload = 0;
  for (; in && in[n]; n++) {
    if (ste_starts_with(in[n], "LD_PRELOAD=")) preload = in[n] + 11;
  }
  const char* scope = ste_scope_string(); /* callers checked ste_enabled() */
  char seen[9 + 17 * STE_SEEN_MAX + 1];
  seen_entry(seen);
  const size_t seen_len = ste_strlen(seen);
  size_t strings = 11 + (preload ? ste_strlen(preload) + 1 : 0) +
                   ste_strlen(ste_self_path) + 1 + 12 +
                   ste_strlen(ste_log_dir) + 1 + 10 + ste_strlen(scope) + 1 + seen_len + 1;
  size_t slots = n + 5;
  char** envp = ce->small_envp;
  char* s = ce->small_strings;
  if (slots > kSteSmallEnv || strings > kSteSmallEnvStrings) {
    ce->map_len = slots * sizeof(char*) + strings;
    ce->map = mmap(0, ce->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ce->map == MAP_FAILED) {
      ce->map = 0;
      return 0;
    }
    envp = (char**)ce->map;
    s = (char*)ce->map + slots * sizeof(char*);
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_ste_var(in[i])) envp[k++] = in[i];
  }
  envp[k++] = s;
  s = put(s, "LD_PRELOAD=");
  if (preload && preload[0]) {
    s = put(s, preload);
    if (!ste_preload_has_self(preload)) {
      *s++ = ' ';
      s = put(s, ste_self_path);
    }
  } else {
    s = put(s, ste_self_path);
  }
  *s++ = '\0';
  envp[k++] = s;
  s = put(s, "STE_LOG_DIR=");
  s = put(s, ste_log_dir);
  *s++ = '\0';
  envp[k++] = s;
  s = put(s, "STE_SCOPE=");
  s = put(s, scope);
  *s++ = '\0';
  if (seen_len) {
    envp[k++] = s;
    s = put(s, seen);
    *s++ = '\0';
  }
  envp[k] = 0;
  ce->envp = envp;
  return envp;
}

void ste_child_env_done(SteChildEnv* ce) {
  if (ce->map) munmap(ce->map, ce->map_len);
}

/* system() and popen() spawn /bin/sh with environ through glibc-internal
 * calls we never see: make environ right first. Neither is async-signal-
 * safe, so setenv (which allocates) is allowed here. */
void ste_environ_restore(void) {
  const char* preload = ste_getenv("LD_PRELOAD");
  if (!preload || !ste_preload_has_self(preload)) {
    size_t a = preload ? ste_strlen(preload) : 0;
    char value[a + ste_strlen(ste_self_path) + 2];
    char* s = value;
    if (a) {
      s = put(s, preload);
      *s++ = ' ';
    }
    s = put(s, ste_self_path);
    *s = '\0';
    setenv("LD_PRELOAD", value, 1);
  }
  const char* dir = ste_getenv("STE_LOG_DIR");
  if (!dir || strcmp(dir, ste_log_dir) != 0) setenv("STE_LOG_DIR", ste_log_dir, 1);
  ste_scope_bind_environ();
}
