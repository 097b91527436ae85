/* Unit tests of libste_preload.so's layers below the hooks: path
 * normalisation and resolution, the dedup set, the process layer's
 * recording, the control paths (ste/control.h) and a forked child taking
 * over its log; in syscall_unit_test.c, what the syscall(3) hook stands
 * on (ste_syscall, ste_note_open, fd listings, io_uring, the child layer).
 *
 * Linked with the very objects of the .so (ste_preload_core), but not
 * preloaded and without the hooks: the program's own open() and fork()
 * are libc's. Each layer is set up through its own init function
 * (ste_cwd_refresh, ste_scope_init, ste_log_open, ste_enabled), logs are
 * real files in a temporary directory, read back through
 * ste/log_format.h. Table-driven where the shape repeats.
 *
 * Usage: ste_interceptor_unit_test   (exit 0: every check passed) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log_writer.h"
#include "path.h"
#include "process.h"
#include "record.h"
#include "scope_stack.h"
#include "ste/control.h"
#include "ste/log_format.h"
#include "unit_test_support.h"

/* ---- path: normalisation ------------------------------------------------------ */

static void test_normalise(void) {
  static const struct {
    const char* in;
    const char* out;
  } kCases[] = {
      {"/", "/"},
      {"//", "/"},
      {"///a///", "/a"},
      {"/a//b", "/a/b"},
      {"/.", "/"},
      {"/./", "/"},
      {"/..", "/"},
      {"/../..", "/"},
      {"/../a", "/a"},
      {"/a/b/../../..", "/"},
      {"/a/b/../../../c", "/c"},
      {"/a/b/..", "/a"},
      {"/a/b/../", "/a"},
      {"/a/b/./../c", "/a/c"},
      {"/a/./b//c/", "/a/b/c"},
      {"/a/b/", "/a/b"},
      {"/a/b///", "/a/b"},
      {"/...", "/..."},
      {"/a/..b", "/a/..b"},
      {"/a/b..", "/a/b.."},
      {"/.a/", "/.a"},
      {"/a/.b/.", "/a/.b"},
      {"/usr/lib/x.so", "/usr/lib/x.so"},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    const char* in = kCases[i].in;
    const char* want = kCases[i].out;
    char buf[64];
    strcpy(buf, in);
    size_t n = ste_path_normalise(buf, strlen(in));
    CHECK(n == strlen(want) && strcmp(buf, want) == 0, "normalise(\"%s\") = \"%s\" (%zu), want \"%s\"",
          in, buf, n, want);
    CHECK(ste_path_is_normal(want, strlen(want)), "is_normal(\"%s\") = 0", want);
    int same = strcmp(in, want) == 0;
    CHECK(ste_path_is_normal(in, strlen(in)) == same, "is_normal(\"%s\") != %d", in, same);
    n = ste_path_normalise(buf, strlen(buf));
    CHECK(strcmp(buf, want) == 0, "normalise not idempotent on \"%s\"", want);
  }
  /* Not absolute, or normal only up to `len`. */
  static const struct {
    const char* path;
    size_t len;
    int normal;
  } kNormal[] = {
      {"", 0, 0},  {"a", 1, 0},     {"a/b", 3, 0},   {"./a", 3, 0},
      {"/a/", 2, 1}, {"/a/b", 2, 1}, {"/a/.", 3, 0}, {"/a//", 3, 0},
  };
  for (size_t i = 0; i < sizeof kNormal / sizeof kNormal[0]; i++) {
    CHECK(ste_path_is_normal(kNormal[i].path, kNormal[i].len) == kNormal[i].normal,
          "is_normal(\"%.*s\") != %d", (int)kNormal[i].len, kNormal[i].path, kNormal[i].normal);
  }
}

static void test_skipped(void) {
  static const struct {
    const char* path;
    int skipped;
  } kCases[] = {
      {"/proc", 1},       {"/proc/self/status", 1}, {"/sys", 1}, {"/sys/kernel", 1},
      {"/dev", 1},        {"/dev/null", 1},         {"/", 0},    {"/processes", 0},
      {"/system", 0},     {"/devx/a", 0},           {"/usr/dev", 0}, {"/home/proc", 0},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    const char* p = kCases[i].path;
    CHECK(ste_path_skipped(p, strlen(p)) == kCases[i].skipped, "skipped(\"%s\") != %d", p,
          kCases[i].skipped);
  }
}

/* ---- path: resolution ------------------------------------------------------------ */

static void test_resolve(void) {
  char* cwd = fresh_dir("cwd");
  char* dir = fresh_dir("dir");
  char* other = fresh_dir("other");
  REQUIRE(chdir(cwd) == 0, "chdir %s", cwd);
  uint64_t before = ste_cwd_generation();
  ste_cwd_refresh();
  CHECK(ste_cwd_generation() != before, "refresh did not change the generation");

  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  int pipefd[2];
  REQUIRE(dfd >= 0 && pipe(pipefd) == 0, "open %s", dir);
  enum { kCwd, kDir, kClosed, kPipe };
  static const struct {
    int base; /* which dirfd */
    const char* path;
    const char* want; /* relative to the dirfd's dir, "/..." absolute, NULL: 0 */
  } kCases[] = {
      {kCwd, "x", "x"},
      {kCwd, "./x/../y/", "y"},
      {kCwd, ".", ""},
      {kCwd, "a//b/./c", "a/b/c"},
      {kCwd, "/abs//p/.", "/abs/p"},
      {kCwd, "../../../../../../../../../../..", "/"},
      {kDir, "z", "z"},
      {kDir, "z/", "z"},
      {kDir, "/abs", "/abs"},
      {kClosed, "z", NULL},
      {kClosed, "/abs/z", "/abs/z"}, /* an absolute path needs no dirfd */
      {kPipe, "z", NULL},            /* "pipe:[n]": no path */
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    int fd = kCases[i].base == kCwd    ? AT_FDCWD
             : kCases[i].base == kDir  ? dfd
             : kCases[i].base == kPipe ? pipefd[0]
                                       : 1000;
    const char* base = kCases[i].base == kDir ? dir : cwd;
    char want[8192] = "";
    if (kCases[i].want && kCases[i].want[0] == '/') {
      strcpy(want, kCases[i].want);
    } else if (kCases[i].want) {
      snprintf(want, sizeof want, "%s%s%s", base, kCases[i].want[0] ? "/" : "", kCases[i].want);
    }
    char out[STE_PATH_CAP];
    size_t n = ste_path_resolve(fd, kCases[i].path, out, sizeof out);
    if (!kCases[i].want) {
      CHECK(n == 0, "resolve(%d, \"%s\") = \"%s\", want 0", kCases[i].base, kCases[i].path, out);
    } else {
      CHECK(n == strlen(want) && strcmp(out, want) == 0, "resolve(%d, \"%s\") = \"%.*s\", want \"%s\"",
            kCases[i].base, kCases[i].path, (int)n, n ? out : "", want);
    }
  }
  char fd_path[STE_PATH_CAP];
  size_t n = ste_path_of_fd(dfd, fd_path, sizeof fd_path);
  CHECK(n == strlen(dir) && strcmp(fd_path, dir) == 0, "path_of_fd = \"%s\"", fd_path);
  CHECK(ste_path_of_fd(pipefd[0], fd_path, sizeof fd_path) == 0, "a pipe has a path");
  close(pipefd[0]);
  close(pipefd[1]);

  /* The cwd is cached: a chdir the cache was not told of changes nothing. */
  char out[STE_PATH_CAP];
  char* want_cwd = join(cwd, "x");
  char* want_other = join(other, "x");
  REQUIRE(chdir(other) == 0, "chdir %s", other);
  n = ste_path_resolve(AT_FDCWD, "x", out, sizeof out);
  CHECK(n && strcmp(out, want_cwd) == 0, "before refresh: \"%s\", want \"%s\"", out, want_cwd);
  ste_cwd_refresh();
  n = ste_path_resolve(AT_FDCWD, "x", out, sizeof out);
  CHECK(n && strcmp(out, want_other) == 0, "after refresh: \"%s\", want \"%s\"", out, want_other);

  /* A removed cwd is unknown: relative paths do not resolve, absolute ones do. */
  char* gone = fresh_dir("gone");
  REQUIRE(chdir(gone) == 0 && rmdir(gone) == 0, "chdir+rmdir %s", gone);
  ste_cwd_refresh();
  CHECK(ste_path_resolve(AT_FDCWD, "x", out, sizeof out) == 0, "resolved against a removed cwd");
  CHECK(ste_path_resolve(AT_FDCWD, "/a/../b", out, sizeof out) == 2 && strcmp(out, "/b") == 0,
        "absolute under a removed cwd: \"%s\"", out);
  REQUIRE(chdir(cwd) == 0, "chdir %s", cwd);
  ste_cwd_refresh();

  /* Lengths at the cap: the joined path before normalising, with its NUL,
   * must fit in `cap`; one byte more returns 0. */
  static char big[2 * STE_PATH_CAP];
  size_t b = strlen(cwd);
  static const struct {
    int relative;
    long extra; /* path length = what fits exactly + extra */
    size_t cap;
  } kCaps[] = {
      {0, 0, STE_PATH_CAP},  {0, 1, STE_PATH_CAP},  {1, 0, STE_PATH_CAP},
      {1, 1, STE_PATH_CAP},  {0, 0, 64},            {0, 1, 64},
      {1, 0, 0 /* b + 3 */}, {1, 1, 0 /* b + 3 */},
  };
  for (size_t i = 0; i < sizeof kCaps / sizeof kCaps[0]; i++) {
    size_t cap = kCaps[i].cap ? kCaps[i].cap : b + 3;
    size_t fits = kCaps[i].relative ? cap - b - 2 : cap - 1;
    size_t len = fits + (size_t)kCaps[i].extra;
    memset(big, 'a', len);
    big[len] = '\0';
    if (!kCaps[i].relative) big[0] = '/';
    n = ste_path_resolve(AT_FDCWD, big, out, cap);
    size_t want = kCaps[i].extra ? 0 : cap - 1;
    CHECK(n == want, "cap %zu, %s path of %zu bytes: %zu, want %zu", cap,
          kCaps[i].relative ? "relative" : "absolute", len, n, want);
  }
  /* A cwd that leaves no room for "/x" itself. */
  CHECK(ste_path_resolve(AT_FDCWD, "x", out, b + 1) == 0, "cap at the cwd's length");
  /* Measured before normalising: "/./././..." that would fold to "/a". */
  size_t len = 0;
  while (len + 2 < STE_PATH_CAP) {
    memcpy(big + len, "/.", 2);
    len += 2;
  }
  memcpy(big + len, "/a", 3);
  CHECK(ste_path_resolve(AT_FDCWD, big, out, STE_PATH_CAP) == 0, "a long path that folds short");
  CHECK(ste_path_resolve(AT_FDCWD, big + STE_PATH_CAP / 2, out, STE_PATH_CAP) == 2 &&
            strcmp(out, "/a") == 0,
        "half of it: \"%s\"", out);
  close(dfd);
}

/* ---- record: the dedup set ------------------------------------------------------ */

static void test_dedup(void) {
  char* dir = fresh_dir("dedup");
  ste_scope_init("//r");
  REQUIRE(ste_log_open(dir, 0) == 0, "ste_log_open %s: %s", dir, strerror(errno));
  ste_dedup_reset();
  ste_scope_emit_all();
  enum { kRecord, kPush, kPop, kReset };
  static const struct {
    int step;
    int kind;
    int op;
    const char* path; /* for kPush: the scope name */
    int recorded;     /* 1: a new record, 0: a duplicate */
  } kSteps[] = {
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 1},
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 0},
      {kRecord, STE_KIND_CONTENT, STE_OP_STAT, "/d/a", 0}, /* the op is not part of it */
      {kRecord, STE_KIND_ABSENT, STE_OP_STAT, "/d/a", 1},
      {kRecord, STE_KIND_LISTING, STE_OP_OPENDIR, "/d/a", 1},
      {kRecord, STE_KIND_WRITE, STE_OP_OPEN, "/d/a", 1},
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/b", 1},
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a/b", 1},
      {kPush, 0, 0, "t1", 1},                               /* scope 2 */
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 1},
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 0},
      {kPop, 0, 0, NULL, 0},
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 0},
      {kPush, 0, 0, "t1", 1}, /* scope 3: ids are never reused */
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 1},
      {kPop, 0, 0, NULL, 0},
      {kReset, 0, 0, NULL, 0},
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 1},
      {kRecord, STE_KIND_CONTENT, STE_OP_OPEN, "/d/a", 0},
      {kRecord, STE_KIND_ABSENT, STE_OP_OPEN, "/d/a", 1},
  };
  size_t expected = 1; /* the definition of "//r" */
  for (size_t i = 0; i < sizeof kSteps / sizeof kSteps[0]; i++) {
    switch (kSteps[i].step) {
      case kRecord:
        ste_record_abs(kSteps[i].kind, kSteps[i].op, kSteps[i].path, strlen(kSteps[i].path));
        break;
      case kPush:
        CHECK(ste_scope_push_error(kSteps[i].path) == 0, "cannot push %s", kSteps[i].path);
        ste_scope_stack_push(kSteps[i].path, 1); /* 1: defines it in the log */
        break;
      case kPop:
        CHECK(ste_scope_stack_pop() == 0, "pop at step %zu", i);
        ste_scope_update_environ();
        break;
      case kReset:
        ste_dedup_reset();
        break;
    }
    expected += (size_t)kSteps[i].recorded;
    Log log;
    read_only_log_in(dir, &log);
    CHECK(log.n == expected, "step %zu (%s): %zu records, want %zu", i,
          kSteps[i].path ? kSteps[i].path : "-", log.n, expected);
    free_log(&log);
  }
  Log log;
  read_only_log_in(dir, &log);
  CHECK(count(&log, STE_KIND_SCOPE, 1, "//r") == 1, "no definition of //r");
  CHECK(count(&log, STE_KIND_SCOPE, 2, "//r/t1") == 1 && count(&log, STE_KIND_SCOPE, 3, "//r/t1") == 1,
        "scopes 2 and 3 not defined");
  CHECK(count(&log, STE_KIND_CONTENT, 1, "/d/a") == 2 && count(&log, STE_KIND_CONTENT, 2, "/d/a") == 1 &&
            count(&log, STE_KIND_CONTENT, 3, "/d/a") == 1,
        "/d/a per scope");
  CHECK(ste_scope_push_error("") == EINVAL && ste_scope_push_error("/a") == EINVAL &&
            ste_scope_push_error("a//b") == EINVAL && ste_scope_push_error("a/") == EINVAL,
        "bad scope names accepted");
  CHECK(ste_scope_stack_pop() == -1, "popped the starting scope");
  CHECK(strcmp(ste_scope_string(), "//r") == 0, "scope \"%s\"", ste_scope_string());
  free_log(&log);
}

/* A set that is full records duplicates, never drops a first record. */
static void test_dedup_full(void) {
  enum { kPaths = 400000 }; /* more than both tables hold */
  char* dir = fresh_dir("full");
  REQUIRE(ste_log_open(dir, 0) == 0, "ste_log_open %s", dir);
  ste_dedup_reset();
  char path[64];
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < kPaths; i++) {
      int n = snprintf(path, sizeof path, "/full/%d", i);
      ste_record_abs(STE_KIND_CONTENT, STE_OP_OPEN, path, (size_t)n);
    }
    Log log;
    read_only_log_in(dir, &log);
    unsigned char* seen = calloc(kPaths, 1);
    int bad = 0;
    for (size_t r = 0; r < log.n; r++) {
      const char* p = log.recs[r].path;
      int i = strncmp(p, "/full/", 6) == 0 ? atoi(p + 6) : -1;
      if (i < 0 || i >= kPaths) {
        bad++;
      } else if (seen[i] < 255) {
        seen[i]++;
      }
    }
    int missing = 0, twice = 0;
    for (int i = 0; i < kPaths; i++) {
      missing += seen[i] == 0;
      twice += seen[i] > 1;
    }
    CHECK(bad == 0 && missing == 0 && log.header.lost == 0,
          "pass %d: %d strange, %d missing, %llu lost", pass, bad, missing,
          (unsigned long long)log.header.lost);
    if (pass == 0) {
      CHECK(log.n == kPaths && twice == 0, "first pass: %zu records, %d twice", log.n, twice);
    } else {
      /* Many of the second pass are duplicates (the set was full), not all. */
      CHECK(twice > 0 && twice < kPaths, "second pass: %d of %d recorded again", twice, kPaths);
    }
    free(seen);
    free_log(&log);
  }
  ste_dedup_reset();
}

/* No memory for the large table: every record is written, duplicates too.
 * In a child, whose address space is capped (RLIMIT_AS) so that the large
 * table's mmap fails. */
static void test_dedup_without_memory(void) {
  enum { kPaths = 300 }; /* the small table takes half of its 512 slots */
  char* dir = fresh_dir("nomem");
  pid_t pid = fork();
  REQUIRE(pid >= 0, "fork");
  if (pid == 0) {
    ste_dedup_reset();
    if (ste_log_open(dir, 0) != 0) _exit(2);
    char statm[128] = "";
    int fd = open("/proc/self/statm", O_RDONLY);
    if (fd < 0 || read(fd, statm, sizeof statm - 1) <= 0) _exit(3);
    close(fd);
    struct rlimit old;
    getrlimit(RLIMIT_AS, &old);
    struct rlimit capped = {(rlim_t)atol(statm) * (rlim_t)sysconf(_SC_PAGESIZE) + (1u << 20),
                            old.rlim_max};
    if (setrlimit(RLIMIT_AS, &capped) != 0) _exit(4);
    char path[64];
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < kPaths; i++) {
        int n = snprintf(path, sizeof path, "/nomem/%d", i);
        ste_record_abs(STE_KIND_CONTENT, STE_OP_OPEN, path, (size_t)n);
      }
    }
    setrlimit(RLIMIT_AS, &old);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  Log log;
  read_only_log_in(dir, &log);
  int missing = 0, twice = 0;
  for (int i = 0; i < kPaths; i++) {
    char path[64];
    snprintf(path, sizeof path, "/nomem/%d", i);
    size_t n = count(&log, STE_KIND_CONTENT, kAnyScope, path);
    missing += n == 0;
    twice += n == 2;
  }
  CHECK(missing == 0 && log.header.lost == 0, "%d missing, %llu lost", missing,
        (unsigned long long)log.header.lost);
  CHECK(twice >= kPaths - 256, "only %d of the paths past the small table recorded twice", twice);
  CHECK(log.n <= 2 * kPaths, "%zu records", log.n);
  free_log(&log);
}

/* ---- process: ste_note*, a forked child's own log -------------------------------- */

static void test_process(void) {
  char* dir = fresh_dir("process");
  char* a = fresh_dir("process_a");
  char* b = fresh_dir("process_b");
  char* d = fresh_dir("process_d");
  setenv("STE_LOG_DIR", dir, 1);
  setenv("STE_SCOPE", "//r/unit", 1);
  ste_dedup_reset();
  REQUIRE(chdir(a) == 0, "chdir %s", a);
  ste_cwd_refresh();
  REQUIRE(ste_enabled() == 1, "not enabled with STE_LOG_DIR=%s", dir);
  CHECK(strcmp(ste_log_dir, dir) == 0, "ste_log_dir \"%s\"", ste_log_dir);

  /* What a failed lookup says about the file. */
  static const struct {
    int ok, err, kind; /* kind -1: nothing recorded */
  } kLookups[] = {
      {1, 0, STE_KIND_CONTENT},    {0, ENOENT, STE_KIND_ABSENT},  {0, ENOTDIR, STE_KIND_ABSENT},
      {0, EACCES, STE_KIND_CONTENT}, {0, ELOOP, STE_KIND_CONTENT}, {0, EISDIR, STE_KIND_CONTENT},
      {0, EBADF, -1},  {0, EFAULT, -1}, {0, EINTR, -1},  {0, ENOMEM, -1},
      {0, EMFILE, -1}, {0, ENFILE, -1}, {0, ENAMETOOLONG, -1},
  };
  enum { kLookupCount = sizeof kLookups / sizeof kLookups[0] };
  char lookup_path[kLookupCount][32];
  for (int i = 0; i < kLookupCount; i++) {
    snprintf(lookup_path[i], sizeof lookup_path[i], "/unit/lookup/%d", i);
    ste_note_lookup(STE_OP_STAT, AT_FDCWD, lookup_path[i], kLookups[i].ok, kLookups[i].err);
  }

  /* errno survives; a raw relative path is keyed by the cwd it meant. */
  errno = EXDEV;
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "rel");
  CHECK(errno == EXDEV, "errno %d after ste_note", errno);
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "rel");
  REQUIRE(chdir(b) == 0, "chdir %s", b);
  ste_cwd_refresh();
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "rel");
  REQUIRE(chdir(a) == 0, "chdir %s", a);
  ste_cwd_refresh();
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "./rel");
  int dfd = open(d, O_RDONLY | O_DIRECTORY);
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, dfd, "q");
  close(dfd);
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, 1000, "unresolvable");
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "/proc/self/status");
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "/dev/../dev/null");
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "");
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, NULL);

  /* A forked child: what it records for an exec goes to the parent's log;
   * its first record of its own opens its log (forked flag, the whole
   * scope stack defined) with an empty dedup set. */
  ste_scope_stack_push("case", 1);
  ste_note_abs(STE_KIND_CONTENT, STE_OP_OPEN, "/unit/shared", 12);
  pid_t pid = fork();
  REQUIRE(pid >= 0, "fork");
  if (pid == 0) {
    ste_note_abs(STE_KIND_CONTENT, STE_OP_EXEC, "/unit/exec-before", 17);
    ste_note_abs(STE_KIND_CONTENT, STE_OP_OPEN, "/unit/shared", 12);
    ste_note_abs(STE_KIND_CONTENT, STE_OP_OPEN, "/unit/shared", 12);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);

  Log logs[3];
  size_t n = read_logs_in(dir, logs, 3);
  REQUIRE(n == 2, "%zu logs in %s, want the parent's and the child's", n, dir);
  Log* parent = logs[0].header.flags == STE_LOG_FLAG_EXECED ? &logs[0] : &logs[1];
  Log* child = parent == &logs[0] ? &logs[1] : &logs[0];
  CHECK(parent->header.flags == STE_LOG_FLAG_EXECED && parent->header.pid == (uint32_t)getpid(),
        "parent log flags %u pid %u", parent->header.flags, parent->header.pid);
  CHECK(child->header.flags == STE_LOG_FLAG_FORKED && child->header.pid == (uint32_t)pid,
        "child log flags %u pid %u", child->header.flags, child->header.pid);

  CHECK(parent->n > 0 && parent->recs[0].kind == STE_KIND_SCOPE && parent->recs[0].scope == 1 &&
            strcmp(parent->recs[0].path, "//r/unit") == 0,
        "the parent's log does not start in STE_SCOPE");
  size_t loaded = 0;
  for (size_t i = 0; i < parent->n; i++) loaded += parent->recs[i].op == STE_OP_LOADED;
  CHECK(loaded > 0, "no loaded objects recorded at start");
  for (int i = 0; i < kLookupCount; i++) {
    size_t want = kLookups[i].kind < 0 ? 0 : 1;
    size_t got = count(parent, kAnyKind, kAnyScope, lookup_path[i]);
    size_t got_kind = kLookups[i].kind < 0 ? 0 : count(parent, kLookups[i].kind, 1, lookup_path[i]);
    CHECK(got == want && got_kind == want, "lookup ok=%d err=%d: %zu records (%zu of the kind)",
          kLookups[i].ok, kLookups[i].err, got, got_kind);
  }
  char* a_rel = join(a, "rel");
  char* b_rel = join(b, "rel");
  char* d_q = join(d, "q");
  CHECK(count(parent, STE_KIND_CONTENT, 1, a_rel) == 1, "%s recorded %zu times", a_rel,
        count(parent, STE_KIND_CONTENT, 1, a_rel));
  CHECK(count(parent, STE_KIND_CONTENT, 1, b_rel) == 1, "%s not recorded once", b_rel);
  CHECK(count(parent, STE_KIND_CONTENT, 1, d_q) == 1, "%s not recorded once", d_q);
  CHECK(count(parent, STE_KIND_UNFOLLOWED, 1, "unresolvable") == 1, "unresolvable not unfollowed");
  CHECK(count(parent, kAnyKind, kAnyScope, "/proc/self/status") == 0 &&
            count(parent, kAnyKind, kAnyScope, "/dev/null") == 0,
        "/proc or /dev recorded");
  CHECK(count(parent, STE_KIND_SCOPE, 2, "//r/unit/case") == 1, "scope 2 not defined");
  CHECK(count(parent, STE_KIND_CONTENT, 2, "/unit/shared") == 1, "shared not in the parent's log");
  CHECK(count(parent, STE_KIND_CONTENT, 2, "/unit/exec-before") == 1,
        "the child's exec record not in the parent's log");

  CHECK(child->n == 3 && child->recs[0].kind == STE_KIND_SCOPE && child->recs[0].scope == 1 &&
            strcmp(child->recs[0].path, "//r/unit") == 0 && child->recs[1].kind == STE_KIND_SCOPE &&
            child->recs[1].scope == 2 && strcmp(child->recs[1].path, "//r/unit/case") == 0,
        "the child's log does not start with the scope stack (%zu records)", child->n);
  CHECK(count(child, STE_KIND_CONTENT, 2, "/unit/shared") == 1,
        "the child's own record (after the dedup reset) not once in its log");
  CHECK(count(child, kAnyKind, kAnyScope, "/unit/exec-before") == 0, "exec record in the child's log");
  free_log(&logs[0]);
  free_log(&logs[1]);
}

/* ---- process: control paths (ste/control.h) ------------------------------------ */

static void* thread_pause_count(void* arg) {
  *(unsigned*)arg = ste_listings_paused();
  return NULL;
}

static void test_control_classify(void) {
  /* The exact bytes, as a caller without this header writes them. */
  CHECK(sizeof STE_CONTROL_PAUSE_LISTINGS == 21 &&
            memcmp(STE_CONTROL_PAUSE_LISTINGS, "/\x01" "ste/pause-listings", 21) == 0,
        "STE_CONTROL_PAUSE_LISTINGS is not \"/\\x01ste/pause-listings\"");
  CHECK(sizeof STE_CONTROL_RESUME_LISTINGS == 22 &&
            memcmp(STE_CONTROL_RESUME_LISTINGS, "/\x01" "ste/resume-listings", 22) == 0,
        "STE_CONTROL_RESUME_LISTINGS is not \"/\\x01ste/resume-listings\"");
  CHECK(strlen(STE_CONTROL_PREFIX) == STE_CONTROL_PREFIX_LEN, "STE_CONTROL_PREFIX_LEN");

  static const struct {
    const char* path;
    enum SteControl want;
  } kCases[] = {
      {STE_CONTROL_PAUSE_LISTINGS, STE_CTL_PAUSE_LISTINGS},
      {STE_CONTROL_RESUME_LISTINGS, STE_CTL_RESUME_LISTINGS},
      {"/\001ste/unknown", STE_CTL_UNKNOWN},
      {"/\001ste/", STE_CTL_UNKNOWN},
      {"/\001ste/pause-listings/", STE_CTL_UNKNOWN},
      {"/\001ste//pause-listings", STE_CTL_UNKNOWN},
      {"/\001ste/./pause-listings", STE_CTL_UNKNOWN},
      {"/\001ste/pause-listing", STE_CTL_UNKNOWN},
      {"/\001ste/pause-listingss", STE_CTL_UNKNOWN},
      {"/\001ste/resume-listings\n", STE_CTL_UNKNOWN},
      {"/\001ste", STE_CTL_NONE},
      {"/\001st", STE_CTL_NONE},
      {"/\001", STE_CTL_NONE},
      {"/", STE_CTL_NONE},
      {"", STE_CTL_NONE},
      {"/\001stE/pause-listings", STE_CTL_NONE},
      {"/\001stex/pause-listings", STE_CTL_NONE},
      {"/\002ste/pause-listings", STE_CTL_NONE},
      {"//\001ste/pause-listings", STE_CTL_NONE},
      {"\001ste/pause-listings", STE_CTL_NONE},
      {"/ste/pause-listings", STE_CTL_NONE},
      {"/tmp/pause-listings", STE_CTL_NONE},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    enum SteControl got = ste_control_classify(kCases[i].path);
    CHECK(got == kCases[i].want, "classify(case %zu) = %d, want %d", i, (int)got,
          (int)kCases[i].want);
  }

  /* Nothing at or below "/\001ste" is recorded, whatever the spelling. */
  static const struct {
    const char* path;
    int skipped;
  } kSkipped[] = {
      {"/\001ste", 1}, {"/\001ste/pause-listings", 1}, {"/\001ste/x/y", 1},
      {"/\001stex", 0}, {"/\001", 0}, {"/ste/x", 0},
  };
  for (size_t i = 0; i < sizeof kSkipped / sizeof kSkipped[0]; i++) {
    const char* p = kSkipped[i].path;
    CHECK(ste_path_skipped(p, strlen(p)) == kSkipped[i].skipped, "skipped(case %zu) != %d", i,
          kSkipped[i].skipped);
  }

  /* The count: nests, never below 0, unknown and ordinary paths leave it,
   * per thread. */
  CHECK(ste_listings_paused() == 0, "paused %u at start", ste_listings_paused());
  CHECK(ste_control_apply(STE_CONTROL_RESUME_LISTINGS) == 1 && ste_listings_paused() == 0,
        "a resume without a pause: %u", ste_listings_paused());
  CHECK(ste_control_apply(STE_CONTROL_PAUSE_LISTINGS) == 1 && ste_listings_paused() == 1,
        "pause: %u", ste_listings_paused());
  CHECK(ste_control_apply(STE_CONTROL_PAUSE_LISTINGS) == 1 && ste_listings_paused() == 2,
        "pause, pause: %u", ste_listings_paused());
  CHECK(ste_control_apply("/\001ste/unknown") == 1 && ste_listings_paused() == 2,
        "unknown: %u", ste_listings_paused());
  CHECK(ste_control_apply("/tmp") == 0 && ste_listings_paused() == 2, "ordinary: %u",
        ste_listings_paused());
  unsigned in_thread = 99;
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, thread_pause_count, &in_thread) == 0, "pthread_create");
  pthread_join(thread, NULL);
  CHECK(in_thread == 0, "a new thread starts paused (%u)", in_thread);
  errno = EXDEV;
  CHECK(ste_control_apply(STE_CONTROL_RESUME_LISTINGS) == 1 && errno == EXDEV,
        "errno %d after a control", errno);
  CHECK(ste_control_apply(STE_CONTROL_RESUME_LISTINGS) == 1 && ste_listings_paused() == 0,
        "resume, resume: %u", ste_listings_paused());
  CHECK(ste_control_apply(STE_CONTROL_RESUME_LISTINGS) == 1 && ste_listings_paused() == 0,
        "a resume too many: %u", ste_listings_paused());
}

/* Through ste_note*, recording (after test_process: ste_enabled() is on). */
static void test_listing_pause(void) {
  const char* pause = STE_CONTROL_PAUSE_LISTINGS;
  const char* resume = STE_CONTROL_RESUME_LISTINGS;
  /* The second pause is not swallowed by the raw-path fast path. */
  ste_note_lookup(STE_OP_STAT, AT_FDCWD, pause, 0, ENOENT);
  ste_note_lookup(STE_OP_STAT, AT_FDCWD, pause, 0, ENOENT);
  CHECK(ste_listings_paused() == 2, "paused %u after two pauses", ste_listings_paused());
  ste_note(STE_KIND_LISTING, STE_OP_OPENDIR, AT_FDCWD, "/unit/paused/list");
  ste_note_abs(STE_KIND_LISTING, STE_OP_OPENDIR, "/unit/paused/abs", 16);
  ste_note(STE_KIND_LISTING, STE_OP_OPENDIR, 1000, "unresolvable-paused");
  ste_note(STE_KIND_ABSENT, STE_OP_STAT, AT_FDCWD, "/unit/paused/missing");
  ste_note(STE_KIND_CONTENT, STE_OP_OPEN, AT_FDCWD, "/unit/paused/file");
  ste_note_lookup(STE_OP_OPEN, AT_FDCWD, resume, 0, ENOENT);
  ste_note(STE_KIND_LISTING, STE_OP_OPENDIR, AT_FDCWD, "/unit/paused/list");
  errno = EXDEV;
  ste_note_lookup(STE_OP_ACCESS, AT_FDCWD, resume, 0, ENOENT);
  CHECK(errno == EXDEV, "errno %d after a resume", errno);
  CHECK(ste_listings_paused() == 0, "paused %u after two resumes", ste_listings_paused());
  /* Listed before, paused: not remembered by the dedup set either. */
  ste_note(STE_KIND_LISTING, STE_OP_OPENDIR, AT_FDCWD, "/unit/paused/list");
  ste_note(STE_KIND_CONTENT, STE_OP_STAT, AT_FDCWD, "/\001ste/unknown");
  ste_note_abs(STE_KIND_ABSENT, STE_OP_STAT, "/\001ste/x", 7);
  ste_note(STE_KIND_ABSENT, STE_OP_STAT, AT_FDCWD, "/\001ste//pause-listings");
  CHECK(ste_listings_paused() == 0, "paused %u after unknown controls", ste_listings_paused());

  Log logs[3];
  size_t n = read_logs_in(ste_log_dir, logs, 3);
  Log* parent = NULL;
  for (size_t i = 0; i < n; i++) {
    if (logs[i].header.pid == (uint32_t)getpid()) parent = &logs[i];
  }
  REQUIRE(parent != NULL, "no log of this process in %s", ste_log_dir);
  CHECK(count(parent, STE_KIND_LISTING, kAnyScope, "/unit/paused/list") == 1,
        "the listing after the resume recorded %zu times",
        count(parent, STE_KIND_LISTING, kAnyScope, "/unit/paused/list"));
  CHECK(count(parent, kAnyKind, kAnyScope, "/unit/paused/abs") == 0,
        "a paused ste_note_abs listing recorded");
  CHECK(count(parent, kAnyKind, kAnyScope, "unresolvable-paused") == 0,
        "an unresolvable paused listing recorded");
  CHECK(count(parent, STE_KIND_ABSENT, kAnyScope, "/unit/paused/missing") == 1,
        "an absent file looked up while paused not recorded");
  CHECK(count(parent, STE_KIND_CONTENT, kAnyScope, "/unit/paused/file") == 1,
        "a file opened while paused not recorded");
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < logs[i].n; k++) {
      CHECK(strncmp(logs[i].recs[k].path, "/\001", 2) != 0, "a reserved path recorded (kind %u)",
            logs[i].recs[k].kind);
    }
    free_log(&logs[i]);
  }
}

/* ---- record: STE_SEEN, what the parent wrote ---------------------------------- */

static void hex16(uint64_t v, char* out) {
  for (int i = 0; i < 16; i++) out[i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
  out[16] = '\0';
}

static void test_seen(void) {
  ste_scope_init("//r/tests/a");
  const char* dir = "/logs/run1";
  uint64_t libc = ste_record_key(dir, STE_KIND_CONTENT, "/lib/libc.so.6", 14);
  uint64_t prog = ste_record_key(dir, STE_KIND_CONTENT, "/bin/true", 9);
  CHECK((libc & 1) && (prog & 1) && libc != prog, "keys %llx %llx", (unsigned long long)libc,
        (unsigned long long)prog);
  char value[64];
  hex16(libc, value);
  value[16] = ',';
  hex16(prog, value + 17);
  ste_seen_init(value);
  CHECK(ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/lib/libc.so.6", 14),
        "the parent's libc record is not seen");
  CHECK(ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/bin/true", 9),
        "the parent's program record is not seen");
  /* Only what was loaded at start; never another kind, path, directory or scope. */
  CHECK(!ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_OPEN, "/lib/libc.so.6", 14),
        "an open is skipped");
  CHECK(!ste_record_inherited(dir, STE_KIND_ABSENT, STE_OP_LOADED, "/lib/libc.so.6", 14),
        "another kind is skipped");
  CHECK(!ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/lib/libm.so.6", 14),
        "another path is skipped");
  CHECK(!ste_record_inherited("/logs/run2", STE_KIND_CONTENT, STE_OP_LOADED, "/lib/libc.so.6", 14),
        "another run's directory is skipped");
  ste_scope_init("//r/tests/b");
  CHECK(!ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/lib/libc.so.6", 14),
        "another scope is skipped");
  ste_scope_init("//r/tests/a");
  /* A malformed value is trusted up to its first bad byte; an even key
   * (never made) and an empty value count for nothing. */
  char bad[64];
  hex16(libc, bad);
  memcpy(bad + 16, ",zz", 4);
  ste_seen_init(bad);
  CHECK(ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/lib/libc.so.6", 14),
        "the key before the bad byte is lost");
  hex16(prog, bad);
  bad[3] = 'X';
  ste_seen_init(bad);
  CHECK(!ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/bin/true", 9),
        "a key with a bad digit counts");
  hex16(prog & ~1ull, bad);
  ste_seen_init(bad);
  CHECK(!ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/bin/true", 9),
        "an even key counts");
  ste_seen_init("");
  CHECK(!ste_record_inherited(dir, STE_KIND_CONTENT, STE_OP_LOADED, "/bin/true", 9),
        "an empty value counts");
  ste_seen_init(NULL);
}

int main(void) {
  unit_make_root();
  unsetenv("STE_LOG_DIR");
  unsetenv("STE_SCOPE");
  test_normalise();
  test_skipped();
  test_resolve();
  test_dedup();
  test_dedup_full();
  test_dedup_without_memory();
  test_seen();
  test_control_classify();
  test_ste_syscall();
  test_process(); /* ste_enabled() starts recording for good */
  test_listing_pause();
  test_syscall_recording();
  if (chdir("/") == 0) unit_remove_root();
  printf("%d checks, %d failed\n", unit_checks, unit_failures);
  return unit_failures ? 1 : 0;
}
