/* The exec family: follow every child, and say so when we cannot.
 *
 * Every exec* and posix_spawn* passes the child an environment that
 * carries LD_PRELOAD (this library appended to whatever was there, never
 * replacing another preload), STE_LOG_DIR and STE_SCOPE (the scope current
 * now), even when the caller passed an empty or cleaned environment, and
 * records what the exec depends on first: both through the child layer
 * (exec_child.h), which execve and execveat through syscall(3) use too
 * (syscall.c). The new environment is built on the stack (an mmap for
 * very large ones), so these hooks are safe in a vfork child. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "exec_child.h"
#include "path.h"
#include "process.h"
#include "ste/log_format.h"
#include "sys.h"

extern char** environ;

/* ---- hooks ----------------------------------------------------------------- */

STE_REAL_SLOT(execve);
STE_REAL_SLOT(execvpe);
STE_REAL_SLOT(fexecve);
STE_REAL_SLOT(execveat);
STE_REAL_SLOT(posix_spawn);
STE_REAL_SLOT(posix_spawnp);
STE_REAL_SLOT(system);
STE_REAL_SLOT(popen);

static int do_execve(const char* path, char* const argv[], char* const envp[]) {
  if (!ste_enabled()) return STE_REAL(execve)(path, argv, envp);
  ste_exec_note_program(path, 0, STE_OP_EXEC);
  STE_WITH_CHILD_ENV(envp, path, STE_OP_EXEC, env, STE_REAL(execve)(path, argv, env));
}

static int do_execvpe(const char* file, char* const argv[], char* const envp[]) {
  if (!ste_enabled()) return STE_REAL(execvpe)(file, argv, envp);
  ste_exec_note_program(file, 1, STE_OP_EXEC);
  STE_WITH_CHILD_ENV(envp, file, STE_OP_EXEC, env, STE_REAL(execvpe)(file, argv, env));
}

int execve(const char* path, char* const argv[], char* const envp[]) {
  return do_execve(path, argv, envp);
}

int execv(const char* path, char* const argv[]) {
  return do_execve(path, argv, environ);
}

int execvp(const char* file, char* const argv[]) {
  return do_execvpe(file, argv, environ);
}

int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return do_execvpe(file, argv, envp);
}

/* execl*: the argument list is copied to the stack, as glibc does. */
#define COLLECT_ARGS(arg0, ap, argv, extra_env)           \
  va_list ap;                                             \
  va_start(ap, arg0);                                     \
  size_t argc_ = 1;                                       \
  while (va_arg(ap, const char*)) argc_++;                \
  va_end(ap);                                             \
  char* argv[argc_ + 1];                                  \
  argv[0] = (char*)(arg0);                                \
  va_start(ap, arg0);                                     \
  for (size_t i_ = 1; i_ <= argc_; i_++) argv[i_] = va_arg(ap, char*); \
  extra_env;                                              \
  va_end(ap)

int execl(const char* path, const char* arg, ...) {
  COLLECT_ARGS(arg, ap, argv, (void)0);
  return do_execve(path, argv, environ);
}

int execlp(const char* file, const char* arg, ...) {
  COLLECT_ARGS(arg, ap, argv, (void)0);
  return do_execvpe(file, argv, environ);
}

int execle(const char* path, const char* arg, ...) {
  char* const* envp;
  COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char* const*));
  return do_execve(path, argv, envp);
}

int fexecve(int fd, char* const argv[], char* const envp[]) {
  if (!ste_enabled()) return STE_REAL(fexecve)(fd, argv, envp);
  char abs[STE_PATH_CAP];
  size_t n = ste_exec_note_at(fd, "", AT_EMPTY_PATH, "<fexecve>", abs, sizeof abs);
  const char* program = n ? abs : "<fexecve>";
  STE_WITH_CHILD_ENV(envp, program, STE_OP_EXEC, env,
                     STE_REAL(fexecve)(fd, argv, env));
}

int execveat(int dirfd, const char* path, char* const argv[],
             char* const envp[], int flags) {
  if (!ste_enabled()) return STE_REAL(execveat)(dirfd, path, argv, envp, flags);
  char abs[STE_PATH_CAP];
  size_t n = ste_exec_note_at(dirfd, path, flags, "<execveat>", abs, sizeof abs);
  const char* program = n ? abs : "<execveat>";
  STE_WITH_CHILD_ENV(envp, program, STE_OP_EXEC, env,
                     STE_REAL(execveat)(dirfd, path, argv, env, flags));
}

int posix_spawn(pid_t* pid, const char* path,
                const posix_spawn_file_actions_t* actions,
                const posix_spawnattr_t* attr, char* const argv[],
                char* const envp[]) {
  if (!ste_enabled()) {
    return STE_REAL(posix_spawn)(pid, path, actions, attr, argv, envp);
  }
  ste_exec_note_program(path, 0, STE_OP_SPAWN);
  STE_WITH_CHILD_ENV(envp, path, STE_OP_SPAWN, env,
                     STE_REAL(posix_spawn)(pid, path, actions, attr, argv, env));
}

int posix_spawnp(pid_t* pid, const char* file,
                 const posix_spawn_file_actions_t* actions,
                 const posix_spawnattr_t* attr, char* const argv[],
                 char* const envp[]) {
  if (!ste_enabled()) {
    return STE_REAL(posix_spawnp)(pid, file, actions, attr, argv, envp);
  }
  ste_exec_note_program(file, 1, STE_OP_SPAWN);
  STE_WITH_CHILD_ENV(envp, file, STE_OP_SPAWN, env,
                     STE_REAL(posix_spawnp)(pid, file, actions, attr, argv, env));
}

/* system() and popen() spawn /bin/sh with environ through glibc-internal
 * calls we never see: environ is made right first. */
int system(const char* command) {
  if (command && ste_enabled()) {
    int saved = errno;
    ste_environ_restore();
    ste_exec_note_program("/bin/sh", 0, STE_OP_SPAWN);
    errno = saved;
  }
  return STE_REAL(system)(command);
}

FILE* popen(const char* command, const char* type) {
  if (ste_enabled()) {
    int saved = errno;
    ste_environ_restore();
    ste_exec_note_program("/bin/sh", 0, STE_OP_SPAWN);
    errno = saved;
  }
  return STE_REAL(popen)(command, type);
}
