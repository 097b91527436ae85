// Copyright: the ste authors. The scheduler's side of a Report stream
// (proto/ste/v1/scheduler.proto): the counterpart of ReportEncoder
// (worker.h). It turns the stream's messages, one at a time and in order,
// into what the build takes: path table entries (interned), external
// files, and complete results (their path ids mapped to the build's, the
// parts of a continued result merged). No gRPC server, no session: the
// service (scheduler_service.cc) finds the worker's build, submits the
// results and counts them; this file is tested alone
// (report_decoder_test.cc).
//
// Every error is InvalidArgument and refuses the rest of the stream; the
// messages are the ones the worker and the scheduler's log show.
//
// Thread-safety: one decoder per stream, used by one thread.
#ifndef STE_SCHEDULER_RPC_REPORT_DECODER_H_
#define STE_SCHEDULER_RPC_REPORT_DECODER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ste/build_session.h"
#include "ste/inventory.h"
#include "ste/v1/scheduler.pb.h"

namespace ste {

// What a stream's path tables and external files go into: the build it
// reports to (a BuildSession in the service, a fake in tests).
class ReportTarget {
 public:
  virtual ~ReportTarget() = default;
  // The build's id for one path of a path table; an error for a bad path.
  virtual absl::StatusOr<uint32_t> InternPath(std::string_view path) = 0;
  // Entries of files outside the repo, parsed from an ExternalFiles
  // message; an error when the build refuses them.
  virtual absl::Status AddExternal(const Inventory& external) = 0;
};

// What stands in for a result that was refused (it could not be decoded,
// or the build refused it): test `test` of lease `lease_id` taken as an
// error, opaque (always selected), its error and opaque reason "its report
// was refused: <why>". Nothing of the refused result reaches the index, and
// the build can still finish.
LeaseResult RefusedResult(uint64_t lease_id, const std::string& test,
                          absl::string_view why);

class ReportStreamDecoder {
 public:
  // The worker the stream reports for: "" until a message named it.
  const std::string& worker_id() const { return worker_id_; }

  // First step for each message. True when `m` is the stream's first
  // message and names its worker: the caller then finds that worker's
  // build (and ends the stream when there is none) before Decode(m). False
  // for a later message that names the same worker or none. Errors: the
  // first message names no worker ("the first message of a report must
  // name its worker"); a later one names another ("one stream, one
  // worker").
  absl::StatusOr<bool> TakeWorker(const v1::ReportMessage& m);

  // Second step: decodes `m` (after TakeWorker(m) succeeded) into `target`.
  // A path table is interned entry by entry (it must start at the next
  // stream id: "path table starts at 3, expected 2"); external files are
  // parsed and added. A result is mapped through the path table and merged
  // with the earlier parts of its lease; returns it when it is complete
  // (not continued), nullopt when `m` completes no result. Errors: an
  // unknown path id, a result with no outcome, an empty message, a path
  // table or external files the target refuses. When `m` is a result that
  // is refused, `*refused` is set to its stand-in (RefusedResult), which the
  // caller submits before it ends the stream; `*refused` is left alone
  // otherwise.
  absl::StatusOr<std::optional<LeaseResult>> Decode(
      const v1::ReportMessage& m, ReportTarget& target,
      std::optional<LeaseResult>* refused);

  // At the end of the stream: an error when a continued result never got
  // its last part ("the stream ended inside the result of lease 7").
  absl::Status Finish() const;

 private:
  std::string worker_id_;
  std::vector<uint32_t> table_;              // stream path id -> build's
  std::map<uint64_t, LeaseResult> partial_;  // continued results, by lease
};

}  // namespace ste

#endif  // STE_SCHEDULER_RPC_REPORT_DECODER_H_
