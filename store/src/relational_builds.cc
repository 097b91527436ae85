// Copyright: the ste authors. The relational store's resumable record
// builds (BuildLeaseStore; baseline_store.h "Resumable record builds"):
// leases on the store's clock, claims, the journal.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relational_store.h"
#include "ste/status_macros.h"
#include "store_rules.h"

namespace ste {

absl::StatusOr<int64_t> RelationalStore::BeginBuild(const std::string& commit, int64_t mri,
                                                    const std::string& owner,
                                                    const std::string& spec, int64_t lease_ms) {
  if (mri < 0) {
    return absl::InvalidArgumentError(absl::StrCat("mri must not be negative, got ", mri));
  }
  if (owner.empty() || lease_ms < 0) {
    return absl::InvalidArgumentError("a resumable build needs an owner and a lease >= 0");
  }
  return Insert(commit, mri, &owner, spec, lease_ms);
}

absl::StatusOr<std::optional<ClaimedBuild>> RelationalStore::ClaimBuild(int64_t baseline,
                                                                        const std::string& owner,
                                                                        int64_t lease_ms) {
  if (owner.empty() || lease_ms < 0) {
    return absl::InvalidArgumentError("a claim needs an owner and a lease >= 0");
  }
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
  // FOR UPDATE on the baseline: waits for the owner's writes in progress
  // (FOR SHARE), which then see the new generation when they retry.
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> state,
      db_->Query(absl::StrCat("SELECT state FROM ste.baselines WHERE id = $1", dialect_.for_update),
                 SqlParams().Int(baseline)));
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> row,
      db_->Query(absl::StrCat("SELECT owner, generation, lease_expires_ms <= ", dialect_.now_ms,
                              " FROM ste.builds WHERE baseline = $1", dialect_.for_update),
                 SqlParams().Int(baseline)));
  if (row->size() == 0) {
    return absl::NotFoundError(absl::StrCat("baseline ", baseline, " has no build row"));
  }
  ClaimedBuild claimed;
  claimed.previous_owner = row->Text(0, 0);
  const int64_t generation = row->Int(0, 1);
  const bool expired = row->Bool(0, 2);
  STE_RETURN_IF_ERROR(row->ParseStatus());
  const int64_t stored_state = state->size() == 1 ? state->Int(0, 0) : -1;
  STE_RETURN_IF_ERROR(state->ParseStatus());
  if (stored_state != static_cast<int64_t>(BaselineState::kBuilding) ||
      (!expired && claimed.previous_owner != owner)) {
    return std::optional<ClaimedBuild>();
  }
  claimed.generation = generation + 1;
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> updated,
      db_->Query(absl::StrCat("UPDATE ste.builds SET owner = $2, generation = $3, "
                              "lease_expires_ms = ",
                              dialect_.now_ms, " + $4 WHERE baseline = $1 RETURNING spec"),
                 SqlParams().Int(baseline).Text(owner).Int(claimed.generation).Int(lease_ms),
                 /*binary=*/true));
  if (updated->size() != 1) return absl::InternalError("the build row vanished under its lock");
  claimed.spec = std::string(updated->Bytes(0, 0));
  STE_RETURN_IF_ERROR(updated->ParseStatus());
  // The previous owner's process is gone or has lost the build: the lock
  // is free unless it still runs (then gc sees a writer either way).
  const bool had_lock = writers_->Holds(baseline);
  if (!had_lock) writers_->Acquire(baseline);
  absl::Status committed = txn.Commit();
  if (!committed.ok()) {
    if (!had_lock) writers_->Forget(baseline);
    return committed;
  }
  claims_[baseline] = Claim{owner, claimed.generation};
  return std::optional<ClaimedBuild>(std::move(claimed));
}

absl::StatusOr<bool> RelationalStore::RenewBuild(int64_t baseline, int64_t lease_ms) {
  auto it = claims_.find(baseline);
  if (it == claims_.end()) return false;
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> updated,
      db_->Query(absl::StrCat("UPDATE ste.builds SET lease_expires_ms = ", dialect_.now_ms,
                              " + $4 WHERE baseline = $1 AND owner = $2 AND generation = $3"
                              " AND (SELECT state FROM ste.baselines WHERE id = $1) = 0"
                              " RETURNING baseline"),
                 SqlParams()
                     .Int(baseline)
                     .Text(it->second.owner)
                     .Int(it->second.generation)
                     .Int(std::max<int64_t>(lease_ms, 0))));
  if (updated->size() == 1) return true;
  claims_.erase(it);
  writers_->Forget(baseline);
  return false;
}

absl::Status RelationalStore::PutAccepted(int64_t baseline,
                                          const std::vector<AcceptedEntry>& entries) {
  std::vector<TestResult> results;
  results.reserve(entries.size());
  for (const AcceptedEntry& e : entries) results.push_back(e.result);
  STE_RETURN_IF_ERROR(ValidateResults(results));
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kWrite));
  STE_RETURN_IF_ERROR(LockBuilding(baseline, "journal results", Lock::kShare));
  if (!claims_.count(baseline)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot journal results: baseline ", baseline, " is not a resumable build"));
  }
  // The journal's order: seq numbers after the last one (PutAccepted of
  // one build runs in one session at a time: the claim's).
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> next,
      db_->Query("SELECT coalesce(max(seq), 0) FROM ste.accepted WHERE baseline = $1",
                 SqlParams().Int(baseline)));
  int64_t seq = next->Int(0, 0);
  STE_RETURN_IF_ERROR(next->ParseStatus());
  for (const AcceptedEntry& e : entries) {
    STE_RETURN_IF_ERROR(WriteResults(baseline, {e.result}));
    STE_RETURN_IF_ERROR(
        db_->Exec("INSERT INTO ste.accepted (baseline, test, seq, record) VALUES ($1, $2, $3, $4) "
                  "ON CONFLICT (baseline, test) DO NOTHING",
                  SqlParams().Int(baseline).Text(e.result.test).Int(++seq).Bytes(e.record)));
  }
  Hook("accepted-before-commit");
  return txn.Commit();
}

absl::StatusOr<std::vector<std::string>> RelationalStore::Journal(int64_t baseline) {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(SqlTransaction txn, db_->Begin(TxnKind::kSnapshot));
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> has,
      db_->Query("SELECT 1 FROM ste.builds WHERE baseline = $1", SqlParams().Int(baseline)));
  if (has->size() == 0) {
    return absl::NotFoundError(absl::StrCat("baseline ", baseline, " has no build row"));
  }
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> rows,
      db_->Query("SELECT record FROM ste.accepted WHERE baseline = $1 ORDER BY seq",
                 SqlParams().Int(baseline), /*binary=*/true));
  std::vector<std::string> records;
  records.reserve(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) records.emplace_back(rows->Bytes(i, 0));
  STE_RETURN_IF_ERROR(rows->ParseStatus());
  STE_RETURN_IF_ERROR(txn.Commit());
  return records;
}

absl::StatusOr<std::vector<BuildOwnership>> RelationalStore::ListBuilds() {
  STE_RETURN_IF_ERROR(Ready());
  STE_ASSIGN_OR_RETURN(
      std::unique_ptr<SqlRows> rows,
      db_->Query(absl::StrCat("SELECT b.baseline, b.owner, b.generation, b.lease_expires_ms - ",
                              dialect_.now_ms,
                              " FROM ste.builds b JOIN ste.baselines s ON s.id = b.baseline"
                              " WHERE s.state = 0 ORDER BY b.baseline")));
  std::vector<BuildOwnership> builds;
  for (int i = 0; i < rows->size(); ++i) {
    builds.push_back({rows->Int(i, 0), rows->Text(i, 1), rows->Int(i, 2), rows->Int(i, 3)});
  }
  STE_RETURN_IF_ERROR(rows->ParseStatus());
  return builds;
}

}  // namespace ste
