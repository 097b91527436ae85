/* The runner API of libste_preload.so.
 *
 * A test runner running under the interceptor (`ste run`, `ste record`)
 * tells it which test is running by pushing a scope. Every file a process
 * touches is recorded in the scope current at that moment; a forked child
 * starts in its parent's current scope, an exec'd image in the scope that
 * was current when exec was called (passed in STE_SCOPE).
 *
 * Scopes are written "//r/name/name...": "//r" is the root (the default
 * when STE_SCOPE is unset). A test file's scope is "//r/" + its
 * repo-relative path, e.g. "//r/tests/test_a.py"; a runner may push
 * deeper scopes for test cases ("//r/tests/test_a.py/test_one").
 *
 * Resolve these symbols at run time (dlsym(RTLD_DEFAULT, "ste_scope_push"),
 * ctypes.CDLL(None), Fiddle): when the process is not under ste they are
 * absent, and the runner should carry on unscoped.
 *
 * Thread-safety: the scope is per process, not per thread. Push and pop
 * from one thread while other threads are quiet (between tests); records
 * made by other threads meanwhile land in either scope.
 */
#ifndef STE_SCOPE_H_
#define STE_SCOPE_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Maximum length of a whole scope string and maximum nesting depth. */
#define STE_SCOPE_MAX_LEN 4096
#define STE_SCOPE_MAX_DEPTH 64

/* Enters scope current + "/" + name. `name` must be non-empty, must not
 * start or end with '/', and must not contain "//" or a NUL; it may
 * contain '/' inside (a repo-relative path). Returns 0, or -1 with errno
 * EINVAL (bad name), ENAMETOOLONG (scope too long) or EOVERFLOW (too deep);
 * on error the scope is unchanged. */
int ste_scope_push(const char* name);

/* Leaves the innermost pushed scope. Returns 0, or -1 with errno ERANGE
 * when only the starting scope is left (it cannot be popped). */
int ste_scope_pop(void);

/* The current scope, e.g. "//r/tests/test_a.py". The pointer stays valid
 * until the next push or pop in this process. Never NULL. */
const char* ste_scope_current(void);

#ifdef __cplusplus
}
#endif

#endif /* STE_SCOPE_H_ */
