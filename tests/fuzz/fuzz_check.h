// Copyright: the ste authors. What a fuzz target asserts beyond "no crash,
// no sanitizer report": a property of the reader (a round trip, an
// invariant of what it returns). A broken one aborts, so libFuzzer keeps
// the input as a crash like any other.
#ifndef STE_TESTS_FUZZ_FUZZ_CHECK_H_
#define STE_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define STE_FUZZ_CHECK(cond)                                                   \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__,      \
                   __LINE__, #cond);                                           \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

#endif  // STE_TESTS_FUZZ_FUZZ_CHECK_H_
