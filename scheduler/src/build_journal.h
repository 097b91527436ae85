// Copyright: the ste authors. The journal of a resumable record build: what
// a scheduler writes to the store while a build runs, so that another run
// of it (a restart after SIGKILL, or another scheduler taking the build
// over, scheduler_service.h) can go on where it stopped.
//
// Internal to scheduler/ (build_session.cc writes and reads it; the stores
// keep the bytes without looking into them, baseline_store.h "Resumable
// record builds").
//
// Two kinds of record, each one self-contained value of a store row:
//
//   the spec      (builds.spec)        what CreateBuild was given: commit,
//                                      MRI, the tests with their durations,
//                                      inventory.external, the checkout's
//                                      inventory
//   an accepted   (accepted.record)    one test's accepted result: what the
//   result                             watchers were told of it
//                                      (FinishedTest), its dependency set by
//                                      scope with the paths spelled out (a
//                                      Report stream's path ids mean nothing
//                                      after the stream), and the inventory
//                                      entries of the files outside the repo
//                                      and the views it depends on, as the
//                                      build held them when it was accepted
//
// Format (version 2; integers little-endian; str = u32 length + bytes):
//
//   offset 0   8 bytes  magic "STEJRNL\0"
//              u32      format version (2; 1 is still read)
//              u32      kind: 1 spec, 2 accepted result
//              ...      the body of that kind
//   end - 8    u64      XXH3-64 of every byte before it
//
//   spec body:    str commit; i64 mri; u8 external (0/1);
//                 u32 n; n x (str test, f64 historical_seconds);
//                 str inventory (inventory.h format v1, its own checksum);
//                 -- version 2 on: u8 cases (tests.unit = "case": 1; 2
//                    when a case also owns the files it read, ctest)
//   result body:  str test; u8 outcome (TestOutcome); i32 exit_code;
//                 f64 seconds; u8 opaque; str detail; str output_log;
//                 u8 output_shared; str output_tail; u64 output_bytes;
//                 str worker_name;
//                 u32 scopes; scopes x (str scope,
//                   3 x (u32 n; n x str path))    -- content, absent, listing
//                 str external (inventory.h format v1; may hold no entry)
//                 -- version 2 on:
//                 u8 flaky (runner.retries: did not pass, then did);
//                 u32 n; n x str write   -- what it left behind (hazards.h)
//                 u32 n; n x str case    -- its cases' run order
//                                           (LeaseResult::case_order)
//   A version-1 record reads as not flaky, with no writes and no case
//   order (its file then keeps no case: selected whole).
//
// A reader refuses (DataLoss, naming what) a record with another magic,
// version or kind, a bad checksum, a length past the end, bytes left over,
// an unknown outcome or a flag that is not 0/1; the build is then not
// resumed but failed, and the previous baseline stays in use.
#ifndef STE_SCHEDULER_BUILD_JOURNAL_H_
#define STE_SCHEDULER_BUILD_JOURNAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ste/build_session.h"
#include "ste/dependency.h"
#include "ste/inventory.h"

namespace ste {

inline constexpr char kJournalMagic[8] = {'S', 'T', 'E', 'J', 'R', 'N', 'L', '\0'};
inline constexpr uint32_t kJournalVersion = 2;
inline constexpr uint32_t kJournalOldestVersion = 1;

// What CreateBuild was given (BuildSpec without the derived fields).
std::string EncodeBuildSpec(const BuildSpec& spec);
absl::StatusOr<BuildSpec> DecodeBuildSpec(absl::string_view bytes);

// One scope of an accepted result, with its paths (not ids).
struct JournalScope {
  std::string scope;
  std::vector<std::string> paths[kDepKindCount];  // content, absent, listing
};

struct AcceptedRecord {
  FinishedTest finished;  // flaky included (version 2)
  std::vector<std::string> writes;  // LeaseResult::writes (version 2)
  std::vector<std::string> case_order;  // LeaseResult::case_order (version 2)
  std::vector<JournalScope> scopes;
  std::vector<InventoryEntry> external;  // sorted by path, unique
};

std::string EncodeAcceptedRecord(const AcceptedRecord& record);
absl::StatusOr<AcceptedRecord> DecodeAcceptedRecord(absl::string_view bytes);

}  // namespace ste

#endif  // STE_SCHEDULER_BUILD_JOURNAL_H_
