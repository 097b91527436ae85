/* dlopen_case NAME: dlopen(NAME) and call into it. Built with RUNPATH
 * $ORIGIN/plugins, so a bare name only resolves if dlopen sees *this*
 * program as its caller (the interceptor must not become the caller). */
#include <dlfcn.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  void* h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  int (*fn)(void) = (int (*)(void))dlsym(h, "ste_case_plugin_value");
  CHECK(fn != NULL && fn() == 42);
  return 0;
}
