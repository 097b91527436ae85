/* execve_clean_env PROG FILE: execve with an environment that has none of
 * the ste variables (what `env -i` or a careful launcher does). */
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 3);
  char* child_argv[] = {argv[1], argv[2], NULL};
  char* clean_env[] = {"FOO=bar", "LD_PRELOAD=", NULL};
  execve(argv[1], child_argv, clean_env);
  CHECK(0);
}
