/* Layer scope: the scope stack behind the runner API (ste/scope.h, whose
 * exported functions live in runner_api.c, a layer above). Calls only log
 * and sys. The layers are listed in preload.c.
 *
 * Not thread-safe beyond what ste/scope.h promises: push and pop from one
 * thread between tests; ste_scope_id may be read from any thread. */
#ifndef STE_INTERCEPTOR_SCOPE_STACK_H_
#define STE_INTERCEPTOR_SCOPE_STACK_H_

#include <stdint.h>

#include "log_writer.h"
#include "sys.h"

/* Starts the stack at `start_scope` ("//r" or beneath it; anything else,
 * NULL included, starts at "//r"), with id 1. */
STE_HIDDEN void ste_scope_init(const char* start_scope);

/* The id of the current scope (relaxed atomic load: safe from any
 * thread). */
STE_HIDDEN uint32_t ste_scope_id(void);

/* The current scope string; valid until the next push or pop. */
STE_HIDDEN const char* ste_scope_string(void);

/* Writes the definitions of every scope on the stack to the current log. */
STE_HIDDEN void ste_scope_emit_all(void);

/* 0 if `name` can be pushed now; else the errno ste_scope_push fails with
 * (EINVAL: bad name, EOVERFLOW: too deep, ENAMETOOLONG: too long). */
STE_HIDDEN int ste_scope_push_error(const char* name);

/* Enters current + "/" + name with a new id. Requires:
 * ste_scope_push_error(name) == 0. `recording`: also define the new scope
 * in the current log and point environ's STE_SCOPE at it. */
STE_HIDDEN void ste_scope_stack_push(const char* name, int recording);

/* Leaves the innermost pushed scope: 0, or -1 (nothing changed) when only
 * the starting scope is left. environ is not touched: see
 * ste_scope_update_environ. */
STE_HIDDEN int ste_scope_stack_pop(void);

/* Points environ's STE_SCOPE entry at a buffer holding the current scope
 * (binding it first if ste_scope_bind_environ never ran). */
STE_HIDDEN void ste_scope_update_environ(void);

/* Makes sure environ carries STE_SCOPE pointing at our buffer (so that
 * calls we do not hook, like system(), pass the current scope on). */
STE_HIDDEN void ste_scope_bind_environ(void);

#endif /* STE_INTERCEPTOR_SCOPE_STACK_H_ */
