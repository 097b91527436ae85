/* getenv_case NAME...: reads each NAME with getenv, then with
 * secure_getenv, and prints "NAME=<value>" or "NAME unset" for each; exits
 * non-zero if the two disagree, if either disagrees with a walk of environ
 * (the hook's answer must be libc's), or if errno changed. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "common.h"

extern char** environ;

static const char* walk(const char* name) {
  size_t len = strlen(name);
  for (char** e = environ; *e; e++) {
    if (strncmp(*e, name, len) == 0 && (*e)[len] == '=') return *e + len + 1;
  }
  return NULL;
}

int main(int argc, char** argv) {
  CHECK(argc >= 2);
  for (int i = 1; i < argc; i++) {
    errno = 4242;
    const char* value = getenv(argv[i]);
    CHECK(errno == 4242);
    const char* secure = secure_getenv(argv[i]);
    CHECK(errno == 4242);
    const char* expected = walk(argv[i]);
    CHECK(value == expected);
    CHECK(secure == expected);
    if (value) {
      printf("%s=%s\n", argv[i], value);
    } else {
      printf("%s unset\n", argv[i]);
    }
  }
  CHECK(getenv("") == NULL);
  return 0;
}
