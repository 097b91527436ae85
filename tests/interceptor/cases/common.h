/* Shared by the interceptor test cases: each case is a tiny program that
 * does one thing and exits non-zero (with a message) if the thing itself
 * failed, so a test never passes on a case that did not run. */
#ifndef STE_TEST_CASES_COMMON_H_
#define STE_TEST_CASES_COMMON_H_

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s (errno %d: %s)\n", __FILE__, \
              __LINE__, #cond, errno, strerror(errno));                    \
      exit(99);                                                            \
    }                                                                      \
  } while (0)

/* dir + "/" + name into a static buffer (cases are single-purpose). */
static inline const char* join(const char* dir, const char* name) {
  static char buf[8][4096];
  static int next;
  char* out = buf[next++ & 7];
  snprintf(out, 4096, "%s/%s", dir, name);
  return out;
}

#endif
