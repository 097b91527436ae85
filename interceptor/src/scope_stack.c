/* The scope stack behind the runner API (layer scope: scope_stack.h; the
 * exported ste/scope.h functions are in runner_api.c).
 *
 * The current scope is one string ("//r/a/b") with a stack of prefix
 * lengths and ids. Records carry the id of the scope current when they
 * were made; a log defines each id with a STE_KIND_SCOPE record before
 * using it. Push/pop are for runners between tests, not hot paths.
 *
 * environ carries "STE_SCOPE=<current>" in a buffer of ours, swapped on
 * every push/pop, so that calls we do not hook (system(), popen(), glibc's
 * internal spawns) still pass the right scope to the child. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "log_writer.h"
#include "scope_stack.h"
#include "ste/log_format.h"
#include "ste/scope.h"
#include "sys.h"

extern char** environ;

static char scope_str[STE_SCOPE_MAX_LEN + 1] = "//r";
static uint32_t scope_len[STE_SCOPE_MAX_DEPTH + 1] = {3};
static uint32_t scope_ids[STE_SCOPE_MAX_DEPTH + 1];
static int scope_depth; /* index of the innermost entry */
static uint32_t next_scope_id;
static _Atomic uint32_t current_id;

#define ENV_PREFIX "STE_SCOPE="
static char env_buf[2][sizeof ENV_PREFIX + STE_SCOPE_MAX_LEN];
static int env_current;

static void emit_definition(int depth) {
  ste_log_append(STE_KIND_SCOPE, STE_OP_SCOPE, scope_ids[depth], scope_str,
                 scope_len[depth]);
}

void ste_scope_emit_all(void) {
  for (int d = 0; d <= scope_depth; d++) emit_definition(d);
}

uint32_t ste_scope_id(void) {
  return atomic_load_explicit(&current_id, memory_order_relaxed);
}

const char* ste_scope_string(void) { return scope_str; }

static int env_bound; /* environ's STE_SCOPE entry is one of ours */

/* Bound on the first push: until then the inherited entry is right. */
void ste_scope_update_environ(void) {
  if (!env_bound) {
    ste_scope_bind_environ();
    return;
  }
  int next = env_current ^ 1;
  memcpy(env_buf[next], ENV_PREFIX, sizeof ENV_PREFIX - 1);
  memcpy(env_buf[next] + sizeof ENV_PREFIX - 1, scope_str,
         scope_len[scope_depth] + 1);
  for (char** e = environ; e && *e; e++) {
    if (*e == env_buf[env_current] || *e == env_buf[next]) {
      *e = env_buf[next];
      env_current = next;
      return;
    }
  }
}

void ste_scope_bind_environ(void) {
  env_bound = 1;
  for (char** e = environ; e && *e; e++) {
    if (*e == env_buf[0] || *e == env_buf[1]) return;
    if (ste_starts_with(*e, ENV_PREFIX)) {
      memcpy(env_buf[env_current], ENV_PREFIX, sizeof ENV_PREFIX - 1);
      memcpy(env_buf[env_current] + sizeof ENV_PREFIX - 1, scope_str,
             scope_len[scope_depth] + 1);
      *e = env_buf[env_current];
      return;
    }
  }
  memcpy(env_buf[env_current], ENV_PREFIX, sizeof ENV_PREFIX - 1);
  memcpy(env_buf[env_current] + sizeof ENV_PREFIX - 1, scope_str,
         scope_len[scope_depth] + 1);
  putenv(env_buf[env_current]); /* stores the pointer, copies nothing */
}

void ste_scope_init(const char* start) {
  size_t n = start ? ste_strlen(start) : 0;
  /* A start scope must be "//r" or lie beneath it; anything else (unset,
   * malformed, too long) starts at the root. */
  if (n >= 3 && n <= STE_SCOPE_MAX_LEN && ste_starts_with(start, "//r") &&
      (n == 3 || start[3] == '/') && start[n - 1] != '/') {
    memcpy(scope_str, start, n + 1);
  } else {
    memcpy(scope_str, "//r", 4);
    n = 3;
  }
  scope_depth = 0;
  scope_len[0] = (uint32_t)n;
  scope_ids[0] = next_scope_id = 1;
  atomic_store(&current_id, 1u);
}

int ste_scope_push_error(const char* name) {
  size_t n = name ? ste_strlen(name) : 0;
  if (n == 0 || name[0] == '/' || name[n - 1] == '/' || strstr(name, "//")) {
    return EINVAL;
  }
  if (scope_depth + 1 > STE_SCOPE_MAX_DEPTH) return EOVERFLOW;
  if (scope_len[scope_depth] + 1 + n > STE_SCOPE_MAX_LEN) return ENAMETOOLONG;
  return 0;
}

void ste_scope_stack_push(const char* name, int recording) {
  size_t n = ste_strlen(name);
  uint32_t at = scope_len[scope_depth];
  scope_str[at] = '/';
  memcpy(scope_str + at + 1, name, n + 1);
  scope_depth++;
  scope_len[scope_depth] = at + 1 + (uint32_t)n;
  scope_ids[scope_depth] = ++next_scope_id;
  if (recording) emit_definition(scope_depth);
  atomic_store(&current_id, scope_ids[scope_depth]);
  if (recording) ste_scope_update_environ();
}

int ste_scope_stack_pop(void) {
  if (scope_depth == 0) return -1;
  scope_depth--;
  scope_str[scope_len[scope_depth]] = '\0';
  atomic_store(&current_id, scope_ids[scope_depth]);
  return 0;
}
