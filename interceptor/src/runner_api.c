/* The runner API (ste/scope.h): exported entry points, in the hooks layer
 * like the hooks, over the scope stack (scope_stack.c). Push and pop are
 * for runners between tests, not hot paths. */
#define _GNU_SOURCE
#include <errno.h>

#include "process.h"
#include "scope_stack.h"
#include "ste/scope.h"

int ste_scope_push(const char* name) {
  int err = ste_scope_push_error(name);
  if (err) {
    errno = err;
    return -1;
  }
  int recording = ste_enabled();
  /* New ids must not collide with a parent's in a log we still share. */
  if (recording) ste_ensure_own_log();
  ste_scope_stack_push(name, recording);
  return 0;
}

int ste_scope_pop(void) {
  if (ste_scope_stack_pop() != 0) {
    errno = ERANGE;
    return -1;
  }
  if (ste_enabled()) ste_scope_update_environ();
  return 0;
}

const char* ste_scope_current(void) {
  ste_enabled(); /* makes sure STE_SCOPE was read */
  return ste_scope_string();
}
