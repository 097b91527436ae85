// Copyright: the ste authors. Whether a deserialized roaring bitmap is
// well formed, beyond what CRoaring 0.2.66's
// roaring_bitmap_portable_deserialize_safe checks. That function reads
// bytes safely but takes their containers as they come: an array container
// out of order, runs that overlap or pass 65535, keys out of order or a
// bitset whose cardinality is not its bit count all deserialize, and then
// minimum()/maximum(), contains() and the set operations answer wrongly or
// read and write out of bounds (found by tests/fuzz/selection_index). Newer
// CRoaring has roaring_bitmap_internal_validate for this.
//
// O(size of the bitmap's containers): array values, runs and bitset words
// are each looked at once, as deserializing already did.
#ifndef STE_INDEXER_ROARING_VALIDATE_H_
#define STE_INDEXER_ROARING_VALIDATE_H_

#include <roaring/roaring.h>

#include <string>

namespace ste {

// "" when `r` is well formed: container keys strictly increasing; every
// container an array (1..4096 values, strictly increasing), a run
// container (at least one run, runs in order, not overlapping, none past
// 65535) or a bitset (its cardinality its bit count, not 0). Otherwise
// what is wrong, for a message.
std::string RoaringDefect(const roaring_bitmap_t& r);

// Makes `r` one that the portable format can carry: every bitset container
// of at most 4096 values becomes an array container. The format has no
// type per container but "run or not" (a container of up to 4096 values
// that is not a run is read as an array), so such a bitset is written as
// 8 KiB that every reader takes for an array: a bitmap its own size check
// refuses. CRoaring 0.2.66 makes them: a range added to a run container
// of more than 2048 runs (add_many's lone values on a run a range began)
// turns it into a bitset whatever its cardinality, and run_optimize keeps
// a bitset a bitset. Returns how many containers it changed.
int NormalizeForPortable(roaring_bitmap_t* r);

}  // namespace ste

#endif  // STE_INDEXER_ROARING_VALIDATE_H_
