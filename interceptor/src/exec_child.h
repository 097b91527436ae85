/* Layer child: what an exec depends on, and the environment that keeps
 * the new image traced. Every way a program can start another — the exec
 * and spawn wrappers (exec.c) and execve/execveat through syscall(3)
 * (syscall.c) — goes through these, so they record the same things and
 * pass the child the same variables. Calls only process, scope, path and
 * sys. The layers are listed in preload.c.
 *
 * Everything here is safe in a vfork child (stack buffers, an anonymous
 * mmap for very large environments, raw syscalls) except
 * ste_environ_restore, which system() and popen() call. Callers check
 * ste_enabled() first; errno is preserved by every function. */
#ifndef STE_INTERCEPTOR_EXEC_CHILD_H_
#define STE_INTERCEPTOR_EXEC_CHILD_H_

#include <stddef.h>

#include "sys.h"

/* ---- what an exec depends on --------------------------------------------- */

/* Records what exec'ing `file` depends on: the program (content), or absent
 * when it is not there; with `search` (execvp semantics) a name without
 * '/' is looked up in the caller's PATH and every directory probed before
 * it was found is recorded (STE_OP_PATH_SEARCH); a script's interpreter
 * (content); and unfollowed when the loader will not honour LD_PRELOAD in
 * the image (ste_exec_check_followable). `op`: STE_OP_EXEC or
 * STE_OP_SPAWN. */
STE_HIDDEN void ste_exec_note_program(const char* file, int search, int op);

/* Records what exec'ing the program named execveat's way depends on:
 * `path` relative to `dirfd`, or, when `path` is "" and `flags` has
 * AT_EMPTY_PATH, the file `dirfd` is open on (fexecve). Writes its
 * absolute path to abs[cap] and returns the length; when it cannot be
 * named, records `unnamed` ("<execveat>") as unfollowed and returns 0. */
STE_HIDDEN size_t ste_exec_note_at(int dirfd, const char* path, int flags,
                                   const char* unnamed, char* abs, size_t cap);

/* Records the absolute program `abs` as unfollowed unless the loader will
 * honour LD_PRELOAD in it: not a static binary (no PT_INTERP), one for
 * another ELF class or machine, setuid/setgid to another id, with file
 * capabilities, unreadable; a "#!" script is judged by its interpreter
 * (recorded as content). Verdicts on ELF files are cached by identity. */
STE_HIDDEN void ste_exec_check_followable(const char* abs, int op);

/* Records `what` (a program, or "<execveat>"-like placeholder) as
 * unfollowed. */
STE_HIDDEN void ste_note_unfollowed(const char* what, int op);

/* ---- the child's environment --------------------------------------------- */

enum { kSteSmallEnv = 256, kSteSmallEnvStrings = 3 * 4096 };

/* Where a child environment lives: on the caller's stack (this struct),
 * or in an mmap when it does not fit. */
typedef struct SteChildEnv {
  char** envp;
  void* map;
  size_t map_len;
  char* small_envp[kSteSmallEnv];
  char small_strings[kSteSmallEnvStrings];
} SteChildEnv;

/* Builds in *ce the environment for a traced child from `in` (NULL:
 * empty): every entry of `in` but LD_PRELOAD, STE_LOG_DIR and STE_SCOPE,
 * then LD_PRELOAD (the caller's value with this library appended, unless
 * it is already there: another preload is never replaced), STE_LOG_DIR and
 * STE_SCOPE (the scope current now). Returns it, or NULL if it cannot be
 * built (no memory for a very large one). Release with
 * ste_child_env_done. Requires ste_enabled(). */
STE_HIDDEN char** ste_child_env(char* const* in, SteChildEnv* ce);
STE_HIDDEN void ste_child_env_done(SteChildEnv* ce);

/* 1 if the space- or colon-separated LD_PRELOAD value `list` holds this
 * library. */
STE_HIDDEN int ste_preload_has_self(const char* list);

/* Makes environ carry LD_PRELOAD (with this library), STE_LOG_DIR and
 * STE_SCOPE, for calls that spawn with environ through libc-internal
 * calls the library never sees (system, popen). Uses setenv: not
 * async-signal-safe. */
STE_HIDDEN void ste_environ_restore(void);

/* Runs `call` (an expression using `envp`) with `envp` the child
 * environment built from `in` — or, if that cannot be built, `in` itself,
 * with `program` recorded as unfollowed — and returns its result from the
 * enclosing function with the call's errno. */
#define STE_WITH_CHILD_ENV(in, program, op, envp, call) \
  do {                                                  \
    SteChildEnv ce_;                                    \
    char* const* envp = ste_child_env((in), &ce_);      \
    if (!envp) {                                        \
      envp = (in);                                      \
      ste_note_unfollowed((program), (op));             \
    }                                                   \
    __typeof__(call) ret_ = (call);                     \
    int err_ = errno;                                   \
    ste_child_env_done(&ce_);                           \
    errno = err_;                                       \
    return ret_;                                        \
  } while (0)

#endif /* STE_INTERCEPTOR_EXEC_CHILD_H_ */
