/* What interceptor_unit_test.c needs besides the objects it tests: checks
 * that count and print, temporary directories, and a reader of the logs
 * the log layer writes (ste/log_format.h). Plain C, heap allowed: this is
 * the test program, not the library. */
#ifndef STE_TESTS_INTERCEPTOR_UNIT_TEST_SUPPORT_H_
#define STE_TESTS_INTERCEPTOR_UNIT_TEST_SUPPORT_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ste/log_format.h"

/* ---- checks ------------------------------------------------------------------ */

extern int unit_checks, unit_failures;

/* Counts a check; prints where it failed and returns 0 if it did. */
int unit_check(int ok, const char* file, int line, const char* expr);

/* Checks `cond` (evaluated once); on failure prints the printf-style
 * message after the location. */
#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!unit_check((cond) != 0, __FILE__, __LINE__, #cond)) { \
      fprintf(stderr, __VA_ARGS__);                           \
      fputc('\n', stderr);                                    \
    }                                                         \
  } while (0)

/* A CHECK the rest cannot go on without: exits 1 on failure. */
#define REQUIRE(cond, ...)                                    \
  do {                                                        \
    if (!unit_check((cond) != 0, __FILE__, __LINE__, #cond)) { \
      fprintf(stderr, __VA_ARGS__);                           \
      fputc('\n', stderr);                                    \
      exit(1);                                                \
    }                                                         \
  } while (0)

/* ---- temporary directories ------------------------------------------------- */

/* Creates the test's root directory under $TMPDIR (/tmp when unset or
 * under /dev, /proc, /sys), as getcwd will name it (realpath: no symlinks,
 * no "//"). */
void unit_make_root(void);
/* Removes the root and all below it. */
void unit_remove_root(void);

/* root/name, created; the string lives to the end (a log dir must). */
char* fresh_dir(const char* name);

/* a + "/" + b, on the heap. */
char* join(const char* a, const char* b);

/* ---- reading logs back ----------------------------------------------------- */

typedef struct Rec {
  uint8_t kind, op;
  uint32_t scope;
  const char* path; /* into Log.bytes, NUL-terminated */
} Rec;

typedef struct Log {
  SteLogHeader header;
  char* bytes;
  Rec* recs;
  size_t n;
} Log;

/* Reads a whole log; CHECKs that no record is torn or has a bad check. */
void read_log(const char* file, Log* log);
void free_log(Log* log);

/* Reads every log in `dir` into logs[max]; returns how many there were. */
size_t read_logs_in(const char* dir, Log* logs, size_t max);
/* REQUIREs exactly one log in `dir`. */
void read_only_log_in(const char* dir, Log* log);

enum { kAnyScope = -1, kAnyKind = -1 };

/* Records of `kind` in `scope` for `path` (kAny*: any). */
size_t count(const Log* log, int kind, long scope, const char* path);

/* ---- tests in other files ----------------------------------------------------- */

/* syscall_unit_test.c: ste_syscall; then, with recording on (after
 * test_process), what the syscall(3) hook records through. */
void test_ste_syscall(void);
void test_syscall_recording(void);

#endif /* STE_TESTS_INTERCEPTOR_UNIT_TEST_SUPPORT_H_ */
