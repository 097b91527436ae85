/* Support for interceptor_unit_test.c: see unit_test_support.h. */
#define _GNU_SOURCE
#include "unit_test_support.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int unit_checks, unit_failures;

int unit_check(int ok, const char* file, int line, const char* expr) {
  unit_checks++;
  if (!ok) {
    unit_failures++;
    fprintf(stderr, "%s:%d: CHECK(%s) failed: ", file, line, expr);
  }
  return ok;
}

/* ---- temporary directories ------------------------------------------------- */

static char root[PATH_MAX];

void unit_make_root(void) {
  const char* tmp = getenv("TMPDIR");
  /* The library never records what lies under /dev, /proc or /sys (a
   * TMPDIR of /dev/shm, say): the files the tests record must not. */
  if (!tmp || !tmp[0] || strncmp(tmp, "/dev/", 5) == 0 || strncmp(tmp, "/proc/", 6) == 0 ||
      strncmp(tmp, "/sys/", 5) == 0) {
    tmp = "/tmp";
  }
  char made[PATH_MAX];
  snprintf(made, sizeof made, "%s/ste_interceptor_unit_XXXXXX", tmp);
  REQUIRE(mkdtemp(made) != NULL, "mkdtemp %s: %s", made, strerror(errno));
  REQUIRE(realpath(made, root) != NULL, "realpath %s", made);
}

char* fresh_dir(const char* name) {
  char* dir = malloc(strlen(root) + strlen(name) + 2);
  sprintf(dir, "%s/%s", root, name);
  REQUIRE(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
  return dir;
}

static void remove_tree(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
      remove_tree(path);
    } else {
      unlink(path);
    }
  }
  closedir(d);
  rmdir(dir);
}

void unit_remove_root(void) { remove_tree(root); }

char* join(const char* a, const char* b) {
  char* s = malloc(strlen(a) + strlen(b) + 2);
  sprintf(s, "%s/%s", a, b);
  return s;
}

/* ---- reading logs back ----------------------------------------------------- */

void read_log(const char* file, Log* log) {
  memset(log, 0, sizeof *log);
  FILE* f = fopen(file, "rb");
  REQUIRE(f, "open %s: %s", file, strerror(errno));
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  log->bytes = malloc((size_t)size + 1);
  REQUIRE(fread(log->bytes, 1, (size_t)size, f) == (size_t)size, "read %s", file);
  fclose(f);
  REQUIRE(size >= (long)STE_LOG_HEADER_SIZE, "%s: %ld bytes", file, size);
  memcpy(&log->header, log->bytes, sizeof log->header);
  REQUIRE(memcmp(log->header.magic, STE_LOG_MAGIC, 8) == 0, "%s: no magic", file);
  uint64_t end = log->header.cursor < (uint64_t)size ? log->header.cursor : (uint64_t)size;
  size_t cap = 1024, bad_checks = 0;
  uint64_t torn_at = 0;
  log->recs = malloc(cap * sizeof *log->recs);
  for (uint64_t off = STE_LOG_HEADER_SIZE; off + STE_LOG_RECORD_HEADER_SIZE <= end;) {
    SteRecordHeader r;
    memcpy(&r, log->bytes + off, sizeof r);
    if (r.size != ste_log_record_size(r.path_len)) {
      torn_at = off; /* the writer is done: nothing may be torn */
      break;
    }
    const char* path = log->bytes + off + sizeof r;
    bad_checks += r.check != ste_log_check(r.kind, r.op, r.scope_id, path, r.path_len);
    if (log->n == cap) log->recs = realloc(log->recs, (cap *= 2) * sizeof *log->recs);
    log->recs[log->n++] = (Rec){r.kind, r.op, r.scope_id, path};
    off += r.size;
  }
  CHECK(torn_at == 0, "%s: torn record at %llu", file, (unsigned long long)torn_at);
  CHECK(bad_checks == 0, "%s: %zu records with a bad check", file, bad_checks);
}

void free_log(Log* log) {
  free(log->bytes);
  free(log->recs);
}

size_t read_logs_in(const char* dir, Log* logs, size_t max) {
  DIR* d = opendir(dir);
  REQUIRE(d, "opendir %s", dir);
  size_t n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < sizeof STE_LOG_SUFFIX || strcmp(e->d_name + len - 7, STE_LOG_SUFFIX) != 0) continue;
    REQUIRE(n < max, "more than %zu logs in %s", max, dir);
    char file[8192];
    snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
    read_log(file, &logs[n++]);
  }
  closedir(d);
  return n;
}

void read_only_log_in(const char* dir, Log* log) {
  REQUIRE(read_logs_in(dir, log, 1) == 1, "no log in %s", dir);
}

size_t count(const Log* log, int kind, long scope, const char* path) {
  size_t n = 0;
  for (size_t i = 0; i < log->n; i++) {
    const Rec* r = &log->recs[i];
    if ((kind == kAnyKind || r->kind == kind) && (scope == kAnyScope || r->scope == scope) &&
        strcmp(r->path, path) == 0) {
      n++;
    }
  }
  return n;
}
