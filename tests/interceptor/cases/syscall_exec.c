/* syscall_exec HOW PROG FILE: enters scope "child" (runner API), then
 * execs PROG FILE through syscall(3), not the libc wrapper, with an
 * environment that has none of the ste variables:
 *   execve       syscall(SYS_execve, PROG, ...)
 *   execveat     syscall(SYS_execveat, <PROG's directory>, <its name>, ...)
 *   execveat_fd  syscall(SYS_execveat, <fd of PROG>, "", ..., AT_EMPTY_PATH)
 * The child must still be traced, in //<scope>/child. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 4);
  const char* how = argv[1];
  const char* prog = argv[2];
  int (*push)(const char*) = (int (*)(const char*))dlsym(RTLD_DEFAULT, "ste_scope_push");
  CHECK(push != NULL && push("child") == 0);
  char* child_argv[] = {(char*)prog, argv[3], NULL};
  char* clean_env[] = {"FOO=bar", "LD_PRELOAD=", NULL};
  if (strcmp(how, "execve") == 0) {
    syscall(SYS_execve, prog, child_argv, clean_env);
  } else if (strcmp(how, "execveat") == 0) {
    const char* slash = strrchr(prog, '/');
    CHECK(slash != NULL);
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - prog), prog);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    syscall(SYS_execveat, dfd, slash + 1, child_argv, clean_env, 0);
  } else if (strcmp(how, "execveat_fd") == 0) {
    int fd = open(prog, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    syscall(SYS_execveat, fd, "", child_argv, clean_env, AT_EMPTY_PATH);
  } else {
    fprintf(stderr, "unknown way %s\n", how);
    return 2;
  }
  CHECK(0); /* the exec failed */
}
