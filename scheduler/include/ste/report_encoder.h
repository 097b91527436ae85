// A worker's results on one Report stream, dictionary-coded (the format is
// proto/ste/v1/scheduler.proto's ReportMessage; the scheduler's side is
// report_decoder.h): each path is sent once, in a PathTable, then named by
// its id. The worker (worker.h) encodes with it; the fuzz seeds and the
// ingest benchmark make real streams with it.
#ifndef STE_REPORT_ENCODER_H_
#define STE_REPORT_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ste/test_outcome.h"
#include "ste/test_recorder.h"
#include "ste/v1/scheduler.pb.h"

namespace ste {

// Dictionary coding of results on one Report stream: each path is sent
// once (PathTable), then referred to by id. A result with more ids than
// `max_ids_per_message` is split into several TestResult messages
// (continued), a path table into several PathTables.
class ReportEncoder {
 public:
  explicit ReportEncoder(size_t max_ids_per_message = 1 << 20);
  // Appends the messages for one result (worker_id not set).
  void Encode(uint64_t lease_id, const TestRecord& record, std::vector<v1::ReportMessage>* out);
  // A new stream: every path will be sent again.
  void Reset();
  size_t paths() const { return ids_.size(); }

 private:
  size_t max_ids_;
  absl::flat_hash_map<std::string, uint32_t> ids_;
};

}  // namespace ste

#endif  // STE_REPORT_ENCODER_H_
