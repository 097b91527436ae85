// Copyright: the ste authors. Report stream messages built by hand, for the
// tests of the scheduler's side of a stream: report_decoder_test.cc (the
// decoder alone) and scheduler_service_test.cc (through a real server).
// Each test sends exactly the message it is about, malformed or late.
#ifndef STE_SCHEDULER_RPC_REPORT_TEST_MESSAGES_H_
#define STE_SCHEDULER_RPC_REPORT_TEST_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ste/test_recorder.h"
#include "ste/v1/scheduler.pb.h"

namespace ste::report_test {

// A path table: `paths` get stream ids first_id, first_id + 1, ...
inline v1::ReportMessage Paths(uint32_t first_id,
                               const std::vector<std::string>& paths) {
  v1::ReportMessage m;
  m.mutable_paths()->set_first_id(first_id);
  for (const std::string& p : paths) m.mutable_paths()->add_paths(p);
  return m;
}

// A result (0.25 s) whose content dependencies are `content` (stream path
// ids), in the test's own scope unless `scope` is given.
inline v1::ReportMessage Result(
    uint64_t lease, const std::string& test,
    const std::vector<uint32_t>& content, const std::string& scope = "",
    v1::TestOutcome outcome = v1::TEST_OUTCOME_PASSED, int exit_code = 0) {
  v1::ReportMessage m;
  v1::TestResult* r = m.mutable_result();
  r->set_lease_id(lease);
  r->set_test(test);
  r->set_outcome(outcome);
  r->set_exit_code(exit_code);
  r->set_seconds(0.25);
  if (!content.empty()) {
    v1::ScopeDependencies* s = r->add_scopes();
    s->set_scope(scope.empty() ? ScopeOfTest(test) : scope);
    for (uint32_t id : content) s->add_content(id);
  }
  return m;
}

}  // namespace ste::report_test

#endif  // STE_SCHEDULER_RPC_REPORT_TEST_MESSAGES_H_
