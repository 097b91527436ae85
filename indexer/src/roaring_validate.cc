// Copyright: the ste authors. RoaringDefect: the container invariants of
// CRoaring 0.2.66 (roaring_array.h, containers/*.h), checked.
#include "roaring_validate.h"

#include <roaring/containers/array.h>
#include <roaring/containers/bitset.h>
#include <roaring/containers/containers.h>
#include <roaring/containers/convert.h>
#include <roaring/containers/run.h>
#include <roaring/roaring_array.h>

#include "absl/strings/str_cat.h"

namespace ste {
namespace {

std::string ArrayDefect(const array_container_t& a) {
  if (a.cardinality < 1 || a.cardinality > 4096) {
    return absl::StrCat("an array container of ", a.cardinality, " values");
  }
  for (int32_t i = 1; i < a.cardinality; ++i) {
    if (a.array[i] <= a.array[i - 1]) return "an array container out of order";
  }
  return "";
}

std::string RunDefect(const run_container_t& c) {
  if (c.n_runs < 1) return "a run container without runs";
  uint32_t next_free = 0;  // the first value after the previous run
  for (int32_t i = 0; i < c.n_runs; ++i) {
    const uint32_t start = c.runs[i].value;
    const uint32_t end = start + c.runs[i].length;  // inclusive
    if (end > 0xffff) return "a run past the end of its container";
    if (i > 0 && start < next_free) return "runs overlapping or out of order";
    next_free = end + 1;
  }
  return "";
}

std::string BitsetDefect(const bitset_container_t& b) {
  int64_t bits = 0;
  for (int i = 0; i < BITSET_CONTAINER_SIZE_IN_WORDS; ++i) bits += __builtin_popcountll(b.array[i]);
  if (bits == 0) return "an empty bitset container";
  if (bits != b.cardinality) {
    return absl::StrCat("a bitset container of ", bits, " bits that says ", b.cardinality);
  }
  return "";
}

}  // namespace

std::string RoaringDefect(const roaring_bitmap_t& r) {
  const roaring_array_t& ra = r.high_low_container;
  for (int32_t i = 0; i < ra.size; ++i) {
    if (i > 0 && ra.keys[i] <= ra.keys[i - 1]) return "container keys out of order";
    std::string defect;
    switch (ra.typecodes[i]) {
      case ARRAY_CONTAINER_TYPE_CODE:
        defect = ArrayDefect(*static_cast<const array_container_t*>(ra.containers[i]));
        break;
      case RUN_CONTAINER_TYPE_CODE:
        defect = RunDefect(*static_cast<const run_container_t*>(ra.containers[i]));
        break;
      case BITSET_CONTAINER_TYPE_CODE:
        defect = BitsetDefect(*static_cast<const bitset_container_t*>(ra.containers[i]));
        break;
      default:
        defect = absl::StrCat("a container of type ", ra.typecodes[i]);
    }
    if (!defect.empty()) return absl::StrCat("container ", i, ": ", defect);
  }
  return "";
}

int NormalizeForPortable(roaring_bitmap_t* r) {
  roaring_array_t& ra = r->high_low_container;
  int changed = 0;
  for (int32_t i = 0; i < ra.size; ++i) {
    if (ra.typecodes[i] != BITSET_CONTAINER_TYPE_CODE) continue;
    bitset_container_t* bits = static_cast<bitset_container_t*>(ra.containers[i]);
    if (bits->cardinality > DEFAULT_MAX_SIZE) continue;
    array_container_t* array = array_container_from_bitset(bits);
    bitset_container_free(bits);
    ra.containers[i] = array;
    ra.typecodes[i] = ARRAY_CONTAINER_TYPE_CODE;
    ++changed;
  }
  return changed;
}

}  // namespace ste
