/* odd_names DIR: opens files whose names hold a space, a newline and
 * bytes that are not UTF-8 (created by the test). */
#include <fcntl.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  CHECK(open(join(argv[1], "with space"), O_RDONLY) >= 0);
  CHECK(open(join(argv[1], "new\nline"), O_RDONLY) >= 0);
  CHECK(open(join(argv[1], "bytes\xff\xfe"), O_RDONLY) >= 0);
  return 0;
}
