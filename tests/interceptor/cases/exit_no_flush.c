/* exit_no_flush DIR: reads through stdio, leaves buffered output, _exits. */
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2);
  FILE* f = fopen(join(argv[1], "f"), "r");
  CHECK(f != NULL);
  printf("never flushed");
  _exit(3);
}
