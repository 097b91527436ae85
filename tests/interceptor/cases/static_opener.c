/* static_opener FILE: the same as opener, linked statically: the
 * interceptor cannot enter it and must say so. */
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) CHECK(open(argv[i], O_RDONLY) >= 0);
  return 0;
}
