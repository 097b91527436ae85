/* The scope stack and the runner API (ste/scope.h).
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
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ste/scope.h"

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

static int env_bound; /* environ's STE_SCOPE entry is one of ours */

/* Points environ's STE_SCOPE entry at a buffer holding the current scope.
 * Bound on the first push: until then the inherited entry is right. */
static void update_environ(void) {
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

int ste_scope_push(const char* name) {
  size_t n = name ? ste_strlen(name) : 0;
  if (n == 0 || name[0] == '/' || name[n - 1] == '/' || strstr(name, "//")) {
    errno = EINVAL;
    return -1;
  }
  if (scope_depth + 1 > STE_SCOPE_MAX_DEPTH) {
    errno = EOVERFLOW;
    return -1;
  }
  uint32_t at = scope_len[scope_depth];
  if (at + 1 + n > STE_SCOPE_MAX_LEN) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int recording = ste_enabled();
  /* New ids must not collide with a parent's in a log we still share. */
  if (recording) ste_log_ensure_own();
  scope_str[at] = '/';
  memcpy(scope_str + at + 1, name, n + 1);
  scope_depth++;
  scope_len[scope_depth] = at + 1 + (uint32_t)n;
  scope_ids[scope_depth] = ++next_scope_id;
  if (recording) emit_definition(scope_depth);
  atomic_store(&current_id, scope_ids[scope_depth]);
  if (recording) update_environ();
  return 0;
}

int ste_scope_pop(void) {
  if (scope_depth == 0) {
    errno = ERANGE;
    return -1;
  }
  scope_depth--;
  scope_str[scope_len[scope_depth]] = '\0';
  atomic_store(&current_id, scope_ids[scope_depth]);
  if (ste_enabled()) update_environ();
  return 0;
}

const char* ste_scope_current(void) {
  ste_enabled(); /* makes sure STE_SCOPE was read */
  return scope_str;
}
