/* Unit tests of what the syscall(3) hook (interceptor/src/syscall.c)
 * stands on, below the hooks: ste_syscall (sys), ste_note_open,
 * ste_note_fd_listing and the io_uring verdict (process), and the child
 * layer (exec_child.h) that the exec hooks share with it. Part of
 * ste_interceptor_unit_test (interceptor_unit_test.c runs these after
 * test_process, with recording on); a separate file to keep each under
 * ~600 lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec_child.h"
#include "path.h"
#include "process.h"
#include "ste/control.h"
#include "ste/log_format.h"
#include "sys.h"
#include "unit_test_support.h"

/* ---- sys: ste_syscall ------------------------------------------------------------ */

void test_ste_syscall(void) {
  static int word;
  errno = EXDEV;
  CHECK(ste_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0) == getppid() && errno == EXDEV,
        "getppid: errno %d", errno);
  CHECK(ste_syscall(SYS_close, -1, 0, 0, 0, 0, 0) == -1 && errno == EBADF, "close(-1): errno %d",
        errno);
  CHECK(ste_syscall(-1, 0, 0, 0, 0, 0, 0) == -1 && errno == ENOSYS, "nr -1: errno %d", errno);
  /* All six arguments reach the kernel: FUTEX_WAKE_BITSET reads the sixth
   * as its bitset, and 0 is EINVAL. */
  CHECK(ste_syscall(SYS_futex, (long)&word, FUTEX_WAKE_BITSET_PRIVATE, 1, 0, 0, 0) == -1 &&
            errno == EINVAL,
        "futex bitset 0: errno %d", errno);
  errno = EXDEV;
  CHECK(ste_syscall(SYS_futex, (long)&word, FUTEX_WAKE_BITSET_PRIVATE, 1, 0, 0, -1) == 0 &&
            errno == EXDEV,
        "futex bitset ~0: errno %d", errno);
}

/* ---- process: opens, fd listings, io_uring; child: exec and environment ----------- */

static const char* find_env(char** envp, const char* prefix) {
  const char* found = NULL;
  int times = 0;
  for (size_t i = 0; envp[i]; i++) {
    if (strncmp(envp[i], prefix, strlen(prefix)) == 0) {
      found = envp[i] + strlen(prefix);
      times++;
    }
  }
  return times == 1 ? found : (times ? "<more than once>" : NULL);
}

static void check_child_env(void) {
  char self_only[4200];
  snprintf(self_only, sizeof self_only, "%s", ste_self_path);
  REQUIRE(ste_self_path[0] == '/', "ste_self_path \"%s\"", ste_self_path);
  char other_then_self[4200];
  snprintf(other_then_self, sizeof other_then_self, "LD_PRELOAD=/x/other.so:%s", ste_self_path);

  static const struct {
    const char* in[6];
    const char* want_preload; /* NULL: self only */
  } kCases[] = {
      {{NULL}, NULL},
      {{"A=1", "B=2", NULL}, NULL},
      {{"LD_PRELOAD=", NULL}, NULL},
      {{"A=1", "LD_PRELOAD=/x/other.so", "STE_SCOPE=//r/stale", "STE_LOG_DIR=/stale", "B=2", NULL},
       "/x/other.so "},
      {{"LD_PRELOAD=/x/other.so:SELF", NULL}, "keep"},
  };
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
    char* in[6] = {0};
    size_t n = 0;
    for (; kCases[i].in[n]; n++) {
      in[n] = strcmp(kCases[i].in[n], "LD_PRELOAD=/x/other.so:SELF") == 0 ? other_then_self
                                                                          : (char*)kCases[i].in[n];
    }
    SteChildEnv ce;
    char** env = ste_child_env(i == 0 ? NULL : in, &ce);
    REQUIRE(env != NULL, "case %zu: no environment", i);
    CHECK(ce.map == NULL, "case %zu: a small environment was mmap'ed", i);
    char want[8400];
    const char* w = kCases[i].want_preload;
    if (!w) {
      snprintf(want, sizeof want, "%s", self_only);
    } else if (strcmp(w, "keep") == 0) {
      snprintf(want, sizeof want, "%s", other_then_self + strlen("LD_PRELOAD="));
    } else {
      snprintf(want, sizeof want, "%s%s", w, self_only);
    }
    const char* preload = find_env(env, "LD_PRELOAD=");
    CHECK(preload && strcmp(preload, want) == 0, "case %zu: LD_PRELOAD=%s, want %s", i,
          preload ? preload : "(none)", want);
    const char* dir = find_env(env, "STE_LOG_DIR=");
    CHECK(dir && strcmp(dir, ste_log_dir) == 0, "case %zu: STE_LOG_DIR=%s", i, dir ? dir : "(none)");
    const char* scope = find_env(env, "STE_SCOPE=");
    CHECK(scope && strcmp(scope, "//r/unit/case") == 0, "case %zu: STE_SCOPE=%s", i,
          scope ? scope : "(none)");
    size_t count = 0;
    for (; env[count]; count++) {
    }
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
      if (strncmp(in[k], "LD_PRELOAD=", 11) && strncmp(in[k], "STE_", 4)) {
        kept++;
        CHECK(find_env(env, in[k]) != NULL, "case %zu: %s dropped", i, in[k]);
      }
    }
    CHECK(count == kept + 3, "case %zu: %zu entries, want %zu", i, count, kept + 3);
    ste_child_env_done(&ce);
  }

  /* Too large for the stack: mmap'ed, nothing lost. */
  enum { kBig = 1000 };
  static char names[kBig][16];
  static char* big[kBig + 1];
  for (int i = 0; i < kBig; i++) {
    snprintf(names[i], sizeof names[i], "V%d=x", i);
    big[i] = names[i];
  }
  SteChildEnv ce;
  char** env = ste_child_env(big, &ce);
  REQUIRE(env != NULL, "no environment for %d variables", kBig);
  CHECK(ce.map != NULL, "%d variables built on the stack", kBig);
  size_t count = 0;
  for (; env[count]; count++) {
  }
  CHECK(count == kBig + 3 && strcmp(env[0], "V0=x") == 0 && strcmp(env[kBig - 1], "V999=x") == 0,
        "%zu entries", count);
  ste_child_env_done(&ce);

  CHECK(ste_preload_has_self(self_only), "self alone not found");
  CHECK(ste_preload_has_self(other_then_self + 11), "self after a colon not found");
  CHECK(!ste_preload_has_self("/x/other.so"), "another library taken for self");
  CHECK(!ste_preload_has_self(""), "self found in an empty list");
}

void test_syscall_recording(void) {
  char* listed = fresh_dir("syscall_listed");

  /* What an open records, by flags. */
  static const struct {
    int flags, ok, err;
    int content, write, absent;
  } kOpens[] = {
      {O_RDONLY, 1, 0, 1, 0, 0},
      {O_WRONLY | O_CREAT | O_TRUNC, 1, 0, 0, 1, 0},
      {O_RDWR | O_CREAT, 1, 0, 1, 1, 0},
      {O_RDWR, 1, 0, 1, 0, 0},
      {O_WRONLY, 0, ENOENT, 0, 0, 1},
      {O_RDONLY, 0, EACCES, 1, 0, 0},
      {O_RDONLY, 0, EMFILE, 0, 0, 0},
      {O_RDWR | O_TMPFILE, 1, 0, 0, 0, 0},
  };
  enum { kOpenCount = sizeof kOpens / sizeof kOpens[0] };
  char open_path[kOpenCount][40];
  for (int i = 0; i < kOpenCount; i++) {
    snprintf(open_path[i], sizeof open_path[i], "/unit/syscall/open/%d", i);
    errno = EXDEV;
    ste_note_open(AT_FDCWD, open_path[i], kOpens[i].flags, kOpens[i].ok, kOpens[i].err);
    CHECK(errno == EXDEV, "open case %d: errno %d", i, errno);
  }

  /* A listing by fd; an fd without a path; paused. */
  int fd = open(listed, O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0, "open %s", listed);
  errno = EXDEV;
  ste_note_fd_listing(fd, "<unit-fd>");
  CHECK(errno == EXDEV, "fd listing: errno %d", errno);
  close(fd);
  ste_note_fd_listing(fd, "<unit-closed-fd>");
  ste_control_apply(STE_CONTROL_PAUSE_LISTINGS);
  ste_note_fd_listing(-1, "<unit-paused>");
  ste_control_apply(STE_CONTROL_RESUME_LISTINGS);

  /* io_uring: refused (STE_ALLOW_IO_URING was not set at start). */
  CHECK(ste_io_uring_refused() == 1, "io_uring not refused");
  errno = EXDEV;
  ste_note_io_uring();
  CHECK(errno == EXDEV, "io_uring note: errno %d", errno);

  /* The program an execveat names (the dirfd's path is the real one: /bin
   * may be a link to usr/bin); one it cannot name. */
  char abs[STE_PATH_CAP];
  char sh_path[4200];
  REQUIRE(realpath("/bin", sh_path) != NULL, "realpath /bin");
  strcat(sh_path, "/sh");
  int bin = open("/bin", O_RDONLY | O_DIRECTORY);
  REQUIRE(bin >= 0, "open /bin");
  errno = EXDEV;
  size_t n = ste_exec_note_at(bin, "sh", 0, "<unit-execveat>", abs, sizeof abs);
  CHECK(errno == EXDEV, "execveat note: errno %d", errno);
  CHECK(n == strlen(sh_path) && strcmp(abs, sh_path) == 0, "execveat named \"%.*s\", want %s",
        (int)n, abs, sh_path);
  int sh = open("/bin/sh", O_RDONLY);
  n = ste_exec_note_at(sh, "", AT_EMPTY_PATH, "<unit-fexecve>", abs, sizeof abs);
  CHECK(n > 0 && abs[0] == '/', "AT_EMPTY_PATH named nothing");
  close(sh);
  close(bin);
  CHECK(ste_exec_note_at(-1, "", AT_EMPTY_PATH, "<unit-unnamed>", abs, sizeof abs) == 0,
        "a bad fd named something");
  CHECK(ste_exec_note_at(AT_FDCWD, "", 0, "<unit-empty>", abs, sizeof abs) == 0,
        "an empty path named something");

  check_child_env();

  Log logs[4];
  size_t nlogs = read_logs_in(ste_log_dir, logs, 4);
  Log* mine = NULL;
  for (size_t i = 0; i < nlogs; i++) {
    if (logs[i].header.pid == (uint32_t)getpid()) mine = &logs[i];
  }
  REQUIRE(mine != NULL, "no log of this process in %s", ste_log_dir);
  for (int i = 0; i < kOpenCount; i++) {
    size_t c = count(mine, STE_KIND_CONTENT, kAnyScope, open_path[i]);
    size_t w = count(mine, STE_KIND_WRITE, kAnyScope, open_path[i]);
    size_t a = count(mine, STE_KIND_ABSENT, kAnyScope, open_path[i]);
    size_t all = count(mine, kAnyKind, kAnyScope, open_path[i]);
    CHECK(c == (size_t)kOpens[i].content && w == (size_t)kOpens[i].write &&
              a == (size_t)kOpens[i].absent && all == c + w + a,
          "open case %d (flags %#x, ok %d, err %d): content %zu write %zu absent %zu, all %zu", i,
          kOpens[i].flags, kOpens[i].ok, kOpens[i].err, c, w, a, all);
  }
  CHECK(count(mine, STE_KIND_LISTING, kAnyScope, listed) == 1, "%s not listed once", listed);
  CHECK(count(mine, STE_KIND_UNFOLLOWED, kAnyScope, "<unit-closed-fd>") == 1,
        "a listing of a closed fd not unfollowed");
  CHECK(count(mine, kAnyKind, kAnyScope, "<unit-paused>") == 0, "a paused fd listing recorded");
  CHECK(count(mine, STE_KIND_UNFOLLOWED, 2, "<io_uring>") == 1, "<io_uring> not recorded once");
  CHECK(count(mine, STE_KIND_CONTENT, kAnyScope, sh_path) == 1, "%s not recorded once", sh_path);
  CHECK(count(mine, STE_KIND_UNFOLLOWED, kAnyScope, sh_path) == 0,
        "a dynamically linked %s unfollowed", sh_path);
  CHECK(count(mine, STE_KIND_UNFOLLOWED, kAnyScope, "<unit-execveat>") == 0 &&
            count(mine, STE_KIND_UNFOLLOWED, kAnyScope, "<unit-fexecve>") == 0,
        "a named program recorded as unnamed");
  CHECK(count(mine, STE_KIND_UNFOLLOWED, kAnyScope, "<unit-unnamed>") == 1 &&
            count(mine, STE_KIND_UNFOLLOWED, kAnyScope, "<unit-empty>") == 1,
        "an unnamed program not unfollowed");
  for (size_t i = 0; i < nlogs; i++) free_log(&logs[i]);
}
