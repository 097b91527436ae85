#include "ste/build_session.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "build_journal.h"
#include "ste/baseline_loader.h"
#include "ste/build_id.h"
#include "ste/case_split.h"
#include "ste/hazards.h"
#include "ste/status_macros.h"
#include "ste/test_recorder.h"

namespace ste {
namespace {

std::string Quoted(std::string_view path) {
  return absl::StrCat("'", absl::CHexEscape(std::string(path.substr(0, 200))), path.size() > 200 ? "...'" : "'");
}

// The order dependences the latest complete baseline with mri <= `mri`
// saw (hazards.h), as groups of the build's tests to keep on one worker.
// None when it has no writes blob, or anything cannot be read: a
// preference of the scheduling, never a reason to fail a build.
std::vector<std::vector<std::string>> HazardGroupsOf(Store& store, int64_t mri,
                                                     const std::vector<BuildTest>& tests) {
  absl::StatusOr<std::optional<BaselineInfo>> previous = store.LatestCompleted(mri);
  if (!previous.ok() || !previous->has_value()) return {};
  const int64_t id = (*previous)->id;
  absl::StatusOr<std::optional<std::string>> bytes = ReadOptionalBlob(store, id, kWritesBlob);
  if (!bytes.ok() || !bytes->has_value()) return {};
  absl::StatusOr<std::map<std::string, std::vector<std::string>>> writes = DecodeWrites(**bytes);
  absl::StatusOr<std::string> index_path = store.BlobPath(id, "index");
  if (!writes.ok() || writes->empty() || !index_path.ok()) return {};
  absl::StatusOr<std::unique_ptr<SelectionIndex>> index = SelectionIndex::Open(*index_path);
  if (!index.ok()) return {};
  absl::StatusOr<std::vector<Hazard>> hazards = FindHazards(**index, *writes, 100000);
  if (!hazards.ok()) return {};
  std::vector<std::string> names;
  for (const BuildTest& t : tests) names.push_back(t.test);
  return HazardGroups(*hazards, names);
}

}  // namespace

BuildSession::BuildSession(BuildSpec spec, std::unique_ptr<Store> store, Options options)
    : spec_(std::move(spec)), options_(std::move(options)), store_(std::move(store)) {}

BuildSession::~BuildSession() = default;

absl::StatusOr<std::unique_ptr<BuildSession>> BuildSession::Create(
    BuildSpec spec, std::unique_ptr<Store> store, Options options) {
  if (spec.tests.empty()) return absl::InvalidArgumentError("a build needs at least one test");
  std::set<std::string> seen;
  for (const BuildTest& t : spec.tests) {
    STE_RETURN_IF_ERROR(ValidateTestPath(t.test));
    if (!seen.insert(t.test).second) {
      return absl::InvalidArgumentError(absl::StrCat("test listed twice: ", Quoted(t.test)));
    }
  }
  // Durations the previous baseline measured, for tests the client did not time.
  absl::StatusOr<std::optional<BaselineInfo>> previous = store->LatestCompleted(spec.mri);
  if (previous.ok() && previous->has_value()) {
    absl::StatusOr<std::vector<TestResult>> results = store->Results((*previous)->id);
    if (results.ok()) {
      std::map<std::string, double> seconds;
      for (const TestResult& r : *results) seconds[r.test] = r.seconds;
      for (BuildTest& t : spec.tests) {
        auto it = seconds.find(t.test);
        if (t.historical_seconds <= 0 && it != seconds.end()) t.historical_seconds = it->second;
      }
    }
  }
  // With an owner, the spec as it will be leased (durations filled in) is
  // stored with the baseline, so a resumption leases in the same order.
  STE_ASSIGN_OR_RETURN(int64_t baseline,
                       options.owner.empty()
                           ? store->Begin(spec.commit, spec.mri)
                           : store->BeginBuild(spec.commit, spec.mri, options.owner,
                                               EncodeBuildSpec(spec), options.lease_ms));
  options.coordinator.generation = 1;
  std::unique_ptr<BuildSession> s(new BuildSession(std::move(spec), std::move(store), std::move(options)));
  STE_RETURN_IF_ERROR(s->Start(baseline));
  s->Log(absl::StrCat("build ", s->id_, " created: ", s->spec_.tests.size(), " tests, mri ",
                      s->spec_.mri, s->spec_.commit.empty() ? "" : ", commit ",
                      s->spec_.commit.substr(0, 12)));
  return s;
}

absl::Status BuildSession::Start(int64_t baseline) {
  baseline_id_ = baseline;
  id_ = BuildIdOf(baseline);
  std::vector<std::string> scopes;
  for (const BuildTest& t : spec_.tests) scopes.push_back(ScopeOfTest(t.test));
  absl::Status added = builder_.AddTests(scopes);
  if (!added.ok()) {
    (void)store_->MarkFailed(baseline, std::string(added.message()));
    return added;
  }
  BuildCoordinator::Options co = options_.coordinator;
  if (co.groups.empty()) co.groups = HazardGroupsOf(*store_, spec_.mri, spec_.tests);
  size_t grouped = 0;
  for (const std::vector<std::string>& g : co.groups) grouped += g.size();
  if (!co.on_expired) {
    co.on_expired = [this](const std::string& worker, const std::string& name, size_t requeued) {
      Log(absl::StrCat("build ", id_, ": worker ", worker, " (", name,
                       ") silent past the lease timeout: ", requeued,
                       " of its tests go back to the queue"));
    };
  }
  coordinator_ = std::make_unique<BuildCoordinator>(spec_.tests, co);
  if (grouped > 0) {
    Log(absl::StrCat("build ", id_, ": ", grouped, " tests with an order dependence (ste hazards) kept on one "
                     "worker each, in the order they were recorded, in ", co.groups.size(),
                     co.groups.size() == 1 ? " group" : " groups"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BuildSession>> BuildSession::Resume(
    int64_t baseline, ClaimedBuild claimed, std::unique_ptr<Store> store, Options options) {
  // What the store holds cannot be resumed: the build is failed (this
  // object holds the claim), never left for the next sweep to claim again.
  auto unresumable = [baseline](Store& claimer, const absl::Status& why) {
    (void)claimer.MarkFailed(baseline, absl::StrCat("cannot resume the build: ", why.message()));
    return why;
  };
  absl::StatusOr<BuildSpec> spec = DecodeBuildSpec(claimed.spec);
  if (spec.ok() && spec->tests.empty()) spec = absl::InvalidArgumentError("the stored build spec has no test");
  for (size_t i = 0; spec.ok() && i < spec->tests.size(); i++) {
    absl::Status valid = ValidateTestPath(spec->tests[i].test);
    if (!valid.ok()) spec = valid;
  }
  if (!spec.ok()) return unresumable(*store, spec.status());
  // A store error here is the store's, not the build's: returned, and the
  // claim (renewed by a claim again) is tried once more by the next sweep.
  STE_ASSIGN_OR_RETURN(std::vector<std::string> journal, store->Journal(baseline));
  options.coordinator.generation = static_cast<uint32_t>(std::max<int64_t>(claimed.generation, 2));
  std::unique_ptr<BuildSession> s(new BuildSession(*std::move(spec), std::move(store), std::move(options)));
  // Start() marks the build failed if the builder refuses the tests.
  STE_RETURN_IF_ERROR(s->Start(baseline));
  for (const std::string& record : journal) {
    absl::Status restored = s->Restore(record);
    if (!restored.ok()) return unresumable(*s->store_, restored);
  }
  s->resumed_ = s->fed_;
  s->Log(absl::StrCat("build ", s->id_, " resumed (generation ", s->generation(), ", from ",
                      claimed.previous_owner, "): ", s->fed_, " of ", s->spec_.tests.size(),
                      " results in the store, the rest leased again"));
  std::lock_guard<std::mutex> lock(s->mu_);
  if (s->fed_ == s->spec_.tests.size() && s->state_ == BaselineState::kBuilding) s->Finalize();
  return s;
}

absl::Status BuildSession::Restore(const std::string& bytes) {
  STE_ASSIGN_OR_RETURN(AcceptedRecord record, DecodeAcceptedRecord(bytes));
  const std::string& test = record.finished.test;
  if (!coordinator_->HasTest(test)) {
    return absl::InvalidArgumentError(absl::StrCat("the journal has a result of ", Quoted(test),
                                                   ", which is not a test of build ", id_));
  }
  STE_RETURN_IF_ERROR(AddExternal(Inventory::FromEntries(record.external, 0).value_or(Inventory())));
  const std::string own = ScopeOfTest(test);
  std::vector<ResultScope> scopes;
  for (const JournalScope& js : record.scopes) {
    STE_RETURN_IF_ERROR(ValidateScope(js.scope));
    if (!ScopeContains(js.scope, own) && !ScopeContains(own, js.scope)) {
      return absl::InvalidArgumentError(absl::StrCat("the journal's result of ", Quoted(test),
                                                     " has an unrelated scope ", Quoted(js.scope)));
    }
    ResultScope rs;
    rs.scope = js.scope;
    for (int kind = 1; kind <= kDepKindCount; kind++) {
      for (const std::string& path : js.paths[kind - 1]) {
        STE_ASSIGN_OR_RETURN(uint32_t id, InternPath(path));
        rs.ids[kind].push_back(id);
      }
    }
    scopes.push_back(std::move(rs));
  }
  STE_ASSIGN_OR_RETURN(BuildCoordinator::Acceptance taken, coordinator_->MarkAccepted(test));
  if (taken == BuildCoordinator::Acceptance::kDuplicate) return absl::OkStatus();
  absl::Status fed = FeedIndex(own, scopes, record.finished.opaque, record.case_order);
  std::lock_guard<std::mutex> lock(mu_);
  if (!record.writes.empty()) writes_[test] = std::move(record.writes);
  CountLocked(std::move(record.finished), fed, nullptr);
  return absl::OkStatus();
}

void BuildSession::Log(const std::string& line) {
  if (options_.log) options_.log(line);
}

absl::StatusOr<uint32_t> BuildSession::InternPath(std::string_view path) {
  STE_RETURN_IF_ERROR(ValidateDependencyPath(path));
  std::lock_guard<std::mutex> lock(paths_mu_);
  uint32_t id = builder_.InternPath(path);
  if (id == paths_.size()) paths_.emplace_back(path);
  return id;
}

absl::Status BuildSession::AddExternal(const Inventory& external) {
  for (const InventoryEntry& e : external) {
    STE_RETURN_IF_ERROR(ValidateDependencyPath(e.path));
    if (e.path[0] != '/' && !ParseView(e.path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "an external file must be an absolute path or a view path: ", Quoted(e.path)));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const InventoryEntry& e : external) external_.emplace(e.path, e);
  return absl::OkStatus();
}

absl::StatusOr<BuildCoordinator::Acceptance> BuildSession::Submit(const LeaseResult& r) {
  // 1. Validate everything before anything is taken. A lease of an
  // earlier generation (given out before the build was resumed) names its
  // test itself: one of the build's.
  std::optional<std::string> leased = coordinator_->LeaseTest(r.lease_id);
  const bool earlier = !leased && BuildCoordinator::LeaseGeneration(r.lease_id) <
                                      options_.coordinator.generation;
  if (earlier && coordinator_->HasTest(r.test)) leased = r.test;
  if (!leased) return absl::InvalidArgumentError(absl::StrCat("no lease ", r.lease_id, " in build ", id_));
  if (*leased != r.test) {
    return absl::InvalidArgumentError(absl::StrCat("lease ", r.lease_id, " is for ", Quoted(*leased),
                                                   ", not ", Quoted(r.test)));
  }
  // Wall time; a NaN would also break the longest-first order of the next
  // build and every export of this baseline.
  if (!std::isfinite(r.seconds) || r.seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease ", r.lease_id, ": duration ", r.seconds, " is not a finite number >= 0"));
  }
  const std::string own = ScopeOfTest(r.test);
  for (const std::string& name : r.case_order) {
    if (name.empty() || name.find('/') != std::string::npos || !ValidateScope(own + "/" + name).ok()) {
      return absl::InvalidArgumentError(absl::StrCat("lease ", r.lease_id, ": case order names ",
                                                     Quoted(name), ", not a case scope's name"));
    }
  }
  std::vector<std::string> described;  // paths that need an AddExternal entry
  {
    std::lock_guard<std::mutex> lock(paths_mu_);
    for (const ResultScope& s : r.scopes) {
      STE_RETURN_IF_ERROR(ValidateScope(s.scope));
      if (!ScopeContains(s.scope, own) && !ScopeContains(own, s.scope)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scope ", Quoted(s.scope), " is not the test's, beneath it or above it (", own, ")"));
      }
      if (!s.ids[0].empty()) return absl::InvalidArgumentError("dependencies of kind 0");
      for (int kind = 1; kind <= kDepKindCount; kind++) {
        for (uint32_t id : s.ids[kind]) {
          if (id >= paths_.size()) {
            return absl::InvalidArgumentError(absl::StrCat("unknown path id ", id));
          }
          const std::string& path = paths_[id];
          const bool outside = path[0] == '/';
          // A view has a value only its entry gives: never dropped silently
          // (an environment variable's whatever inventory.external says).
          if ((spec_.external && outside) || (!outside && IsViewPath(path)) || IsEnvViewPath(path)) {
            described.push_back(path);
          }
        }
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Every test of a complete build was accepted: a late result is a
    // duplicate (a revived worker's, a replayed stream's).
    if (state_ == BaselineState::kComplete) return BuildCoordinator::Acceptance::kDuplicate;
    if (lost_) {
      return absl::UnavailableError(absl::StrCat("build ", id_, " is run by another scheduler now"));
    }
    if (state_ != BaselineState::kBuilding) {
      return absl::FailedPreconditionError(absl::StrCat("build ", id_, " is over: ",
                                                        failure_.empty() ? "complete" : failure_));
    }
    for (const std::string& p : described) {
      if (!external_.count(p)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the result depends on ", Quoted(p),
            IsViewPath(p) ? ", a view," : ", outside the repo,",
            " but no ExternalFiles entry for it came first"));
      }
    }
  }
  // 2. Taken once.
  STE_ASSIGN_OR_RETURN(BuildCoordinator::Acceptance acceptance,
                       earlier ? coordinator_->AcceptEarlier(r.lease_id, r.test)
                               : coordinator_->Accept(r.lease_id));
  if (acceptance == BuildCoordinator::Acceptance::kDuplicate) return acceptance;

  // 3. Fed to the index (outside mu_: one test is fed by one thread).
  absl::Status fed = FeedIndex(own, r.scopes, r.opaque, r.case_order);

  // 4. Counted (and journaled); the last one stores the baseline.
  FinishedTest f;
  f.test = r.test;
  f.outcome = r.outcome;
  f.exit_code = r.exit_code;
  f.seconds = r.seconds;
  f.opaque = r.opaque;
  f.detail = !r.error.empty() ? r.error : r.opaque_reasons.empty() ? "" : r.opaque_reasons[0];
  if (r.output_log.size() <= kMaxOutputLogBytes) f.output_log = r.output_log;
  f.output_shared = r.output_shared;
  f.output_tail = r.output_tail.size() <= kMaxOutputTailBytes
                      ? r.output_tail
                      : r.output_tail.substr(r.output_tail.size() - kMaxOutputTailBytes);
  f.output_bytes = r.output_bytes;
  f.flaky = r.flaky;
  std::vector<std::string> writes;
  for (const std::string& w : r.writes) {
    if (!w.empty() && w.find('\0') == std::string::npos) writes.push_back(w);
  }
  f.worker_name = earlier ? "" : coordinator_->LeaseWorkerName(r.lease_id);
  std::string record;
  if (!options_.owner.empty()) {
    AcceptedRecord journaled;
    journaled.finished = f;
    journaled.writes = writes;
    journaled.case_order = r.case_order;
    {
      std::lock_guard<std::mutex> lock(paths_mu_);
      for (const ResultScope& rs : r.scopes) {
        JournalScope js;
        js.scope = rs.scope;
        for (int kind = 1; kind <= kDepKindCount; kind++) {
          for (uint32_t id : rs.ids[kind]) js.paths[kind - 1].push_back(paths_[id]);
        }
        journaled.scopes.push_back(std::move(js));
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::sort(described.begin(), described.end());
      described.erase(std::unique(described.begin(), described.end()), described.end());
      for (const std::string& p : described) journaled.external.push_back(external_.at(p));
    }
    record = EncodeAcceptedRecord(journaled);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!writes.empty()) writes_[f.test] = std::move(writes);
  CountLocked(std::move(f), fed, options_.owner.empty() ? nullptr : &record);
  return acceptance;
}

absl::Status BuildSession::FeedIndex(const std::string& own, const std::vector<ResultScope>& scopes,
                                     bool opaque, const std::vector<std::string>& case_order) {
  absl::Status fed = absl::OkStatus();
  std::optional<uint32_t> test_id = builder_.FindTest(own);
  if (!test_id) fed = absl::InternalError("test vanished: " + own);
  for (const ResultScope& s : scopes) {
    if (!fed.ok()) break;
    if (ScopeContains(own, s.scope)) {
      for (int kind = 1; kind <= kDepKindCount && fed.ok(); kind++) {
        if (!s.ids[kind].empty()) {
          fed = builder_.AddTestDependencies(*test_id, s.ids[kind], static_cast<DepKind>(kind));
        }
      }
    } else {
      std::lock_guard<std::mutex> lock(paths_mu_);
      for (int kind = 1; kind <= kDepKindCount && fed.ok(); kind++) {
        for (uint32_t id : s.ids[kind]) {
          fed = builder_.AddScopeDependency(s.scope, paths_[id], static_cast<DepKind>(kind));
          if (!fed.ok()) break;
        }
      }
    }
  }
  if (fed.ok() && opaque) fed = builder_.SetOpaque(*test_id);
  if (fed.ok() && (options_.cases || spec_.cases)) fed = FeedCases(own, *test_id, scopes, case_order);
  return fed;
}

absl::Status BuildSession::FeedCases(const std::string& own, uint32_t test_id,
                                     const std::vector<ResultScope>& scopes,
                                     const std::vector<std::string>& case_order) {
  // A case sees the state the cases before it left (a cache filled, a
  // global set): a change to what case c owns can make any later case
  // fail, so the index keeps the run order (selection.cc selects c and
  // every case after it), and without it keeps no case at all.
  if (case_order.empty()) return absl::OkStatus();
  std::map<std::string_view, uint32_t> run;  // name -> its place in case_order
  for (uint32_t i = 0; i < case_order.size(); i++) {
    if (!run.emplace(case_order[i], i).second) return absl::OkStatus();
  }
  // The file's shared part: what its own scope and those above it hold.
  std::set<std::pair<uint32_t, int>> shared;
  for (const ResultScope& s : scopes) {
    if (!ScopeContains(own, s.scope) || s.scope == own) {
      for (int kind = 1; kind <= kDepKindCount; kind++) {
        for (uint32_t id : s.ids[kind]) shared.emplace(id, kind);
      }
    }
  }
  std::vector<std::vector<uint32_t>> mine(case_order.size());
  for (const ResultScope& s : scopes) {
    if (s.scope == own || !ScopeContains(own, s.scope)) continue;
    const std::string_view name = std::string_view(s.scope).substr(own.size() + 1);
    auto it = run.find(name);
    if (it == run.end()) return absl::OkStatus();  // deeper (not split), or not in the order
    std::lock_guard<std::mutex> lock(paths_mu_);
    for (uint32_t id : s.ids[static_cast<int>(DepKind::kContent)]) {
      DepKey key{paths_[id], DepKind::kContent};
      if ((spec_.case_reads || IsCaseOwnKind(key)) && !shared.count({id, static_cast<int>(DepKind::kContent)})) {
        mine[it->second].push_back(id);
      }
    }
  }
  for (uint32_t i = 0; i < case_order.size(); i++) {
    STE_RETURN_IF_ERROR(builder_.AddCase(test_id, case_order[i], i, mine[i], DepKind::kContent));
  }
  return absl::OkStatus();
}

void BuildSession::CountLocked(FinishedTest f, const absl::Status& fed, std::string* record) {
  TestResult stored;
  stored.test = f.test;
  stored.outcome = f.outcome;
  stored.exit_code = f.exit_code;
  stored.seconds = f.seconds;
  stored.opaque = f.opaque;
  results_.push_back(stored);
  if (record != nullptr) pending_.push_back(AcceptedEntry{stored, std::move(*record)});
  const std::string test = f.test;
  finished_.push_back(std::move(f));
  fed_++;
  if (!fed.ok()) {
    FailLocked(absl::StrCat("the index builder refused the result of ", test, ": ", fed.message()));
  } else if (fed_ == spec_.tests.size() && state_ == BaselineState::kBuilding && !lost_) {
    Finalize();
  } else if (pending_.size() >= std::max<size_t>(options_.journal_batch, 1)) {
    absl::Status written = FlushLocked();
    if (!written.ok() && !lost_) {
      Log(absl::StrCat("build ", id_, ": cannot journal ", pending_.size(),
                       " accepted results yet (kept, written with the next): ", written.message()));
    }
  }
  changed_.notify_all();
}

absl::Status BuildSession::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  return FlushLocked();
}

absl::Status BuildSession::FlushLocked() {
  if (lost_) return absl::FailedPreconditionError(absl::StrCat("build ", id_, " is run by another scheduler now"));
  if (pending_.empty() || state_ != BaselineState::kBuilding) return absl::OkStatus();
  absl::Status written = store_->PutAccepted(baseline_id_, pending_);
  if (written.ok()) {
    pending_.clear();
  } else if (absl::IsFailedPrecondition(written)) {
    LoseLocked(std::string(written.message()));
  }
  return written;
}

bool BuildSession::Renew() {
  std::lock_guard<std::mutex> lock(mu_);
  if (lost_) return false;
  if (options_.owner.empty() || state_ != BaselineState::kBuilding) return true;
  absl::StatusOr<bool> renewed = store_->RenewBuild(baseline_id_, options_.lease_ms);
  if (!renewed.ok()) {
    Log(absl::StrCat("build ", id_, ": cannot renew its lease: ", renewed.status().message()));
    return true;
  }
  if (!*renewed) LoseLocked("its lease was taken by another scheduler");
  return !lost_;
}

bool BuildSession::lost() {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
}

void BuildSession::LoseLocked(const std::string& why) {
  if (lost_ || state_ != BaselineState::kBuilding) return;
  lost_ = true;
  Log(absl::StrCat("build ", id_, " handed over: ", why, "; this scheduler lets go of it (",
                   pending_.size(), " accepted results not journaled here are run again)"));
  pending_.clear();
  changed_.notify_all();
}

void BuildSession::Finalize() {
  // Requires mu_, every test fed. The index, the inventory (the checkout's
  // plus the files outside it), the results, then Complete(): the baseline
  // becomes visible in one step, or not at all.
  absl::Status status = absl::OkStatus();
  absl::StatusOr<std::string> index;
  {
    // Finish must run alone (selection_index.h), but Report streams intern
    // paths whenever they come: a late or replayed stream's path table
    // would otherwise grow the builder's path table while it is written.
    std::lock_guard<std::mutex> paths_lock(paths_mu_);
    index = builder_.Finish();
  }
  std::string inventory;
  if (!index.ok()) {
    status = index.status();
  } else {
    std::vector<InventoryEntry> entries = spec_.inventory.entries();
    // The tree's scan holds no view, except the environment variables
    // selection.env_run_all names (record_client.cc), which a test may
    // have read too: the scan's entry stands.
    for (const auto& [path, e] : external_) {
      if (spec_.inventory.Find(path) == nullptr) entries.push_back(e);
    }
    absl::StatusOr<Inventory> merged = Inventory::FromEntries(std::move(entries), spec_.inventory.taken_at_ns());
    if (!merged.ok()) {
      status = merged.status();
    } else {
      inventory = merged->Serialize();
      inventory_entries_ = merged->size();
    }
  }
  std::sort(results_.begin(), results_.end(),
            [](const TestResult& a, const TestResult& b) { return a.test < b.test; });
  if (status.ok()) status = store_->PutBlob(baseline_id_, "index", *index);
  if (status.ok()) status = store_->PutBlob(baseline_id_, "inventory", inventory);
  std::vector<std::string> flaky;
  for (const FinishedTest& f : finished_) {
    if (f.flaky) flaky.push_back(f.test);
  }
  if (status.ok() && !flaky.empty()) status = store_->PutBlob(baseline_id_, kFlakyBlob, EncodeTestNames(flaky));
  if (status.ok() && !writes_.empty()) status = store_->PutBlob(baseline_id_, kWritesBlob, EncodeWrites(writes_));
  std::map<std::string, std::vector<std::string>> opaque;
  for (const FinishedTest& f : finished_) {
    if (!f.opaque) continue;
    std::string why = f.detail;
    why.erase(std::remove(why.begin(), why.end(), '\0'), why.end());
    opaque[f.test] = {why.empty() ? std::string("(no reason kept)") : why};
  }
  if (status.ok() && !opaque.empty()) status = store_->PutBlob(baseline_id_, kOpaqueBlob, EncodeWrites(opaque));
  if (status.ok()) status = store_->PutResults(baseline_id_, results_);
  if (status.ok()) status = store_->Complete(baseline_id_);
  if (!status.ok() && !options_.owner.empty() && absl::IsFailedPrecondition(status)) {
    // Refused by the fencing (or finished by the one that took it over):
    // not this scheduler's build any more, and never failed by it.
    LoseLocked(std::string(status.message()));
    return;
  }
  if (!status.ok()) {
    FailLocked(absl::StrCat("cannot store the baseline: ", status.message()));
    return;
  }
  pending_.clear();  // the journal went with the completion
  index_bytes_ = index->size();
  state_ = BaselineState::kComplete;
  size_t failed = 0;
  for (const TestResult& r : results_) failed += r.outcome != TestOutcome::kPassed;
  Log(absl::StrCat("build ", id_, " complete: baseline ", baseline_id_, ", ", results_.size(),
                   " tests (", failed, " failed or in error), index ", index_bytes_, " bytes"));
}

void BuildSession::FailLocked(const std::string& why) {
  if (state_ != BaselineState::kBuilding || lost_) return;
  state_ = BaselineState::kFailed;
  failure_ = why;
  absl::Status marked = store_->MarkFailed(baseline_id_, why);
  Log(absl::StrCat("build ", id_, " failed: ", why,
                   marked.ok() ? "" : absl::StrCat(" (and cannot mark it so: ", marked.message(), ")")));
  changed_.notify_all();
}

void BuildSession::Fail(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  FailLocked(why);
}

bool BuildSession::running() {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == BaselineState::kBuilding && !lost_;
}

BuildSnapshot BuildSession::Snapshot(size_t from, absl::Duration wait) {
  BuildCoordinator::Progress p = coordinator_->progress();
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, absl::ToChronoNanoseconds(wait), [&] {
    return finished_.size() > from || state_ != BaselineState::kBuilding || lost_;
  });
  BuildSnapshot s;
  s.state = state_;
  s.done = finished_.size();
  s.total = spec_.tests.size();
  s.workers = p.workers;
  s.baseline_id = baseline_id_;
  s.failure = failure_;
  s.index_bytes = index_bytes_;
  s.inventory_entries = inventory_entries_;
  s.handed_over = lost_;
  for (size_t i = from; i < finished_.size(); i++) s.finished.push_back(finished_[i]);
  return s;
}

}  // namespace ste
