// The record builds one scheduler runs, and whose each build is: the heart
// of scheduler failover. OwnedBuilds holds this scheduler's BuildSessions
// by build id, renews their build leases, sweeps the store's build rows,
// and claims one build on demand. The gRPC service (scheduler_service.h)
// only converts messages and streams; every decision of who runs a build
// (resume it, take it over, fail it as abandoned, leave it alone) is here.
//
// Design.
//   - This unit holds the sessions (shared_ptr: a call that found one
//     keeps using it after it is dropped here, and sees lost() then).
//     Create() begins a build and keeps it; Find() returns the session of
//     a build id, claiming and resuming it from the store when it is not
//     in memory and is this instance's to take; LatestRunning() is the
//     build a worker without a build id joins. No callbacks.
//   - The store: opened through Options::open_store, one object per claim
//     or lookup (a claimed build's object goes to its resumed session: the
//     claim is that object's), one object kept for the sweeps (a
//     PostgreSQL connection is not made anew every pass). Of the store's
//     methods this unit calls only Get, ListBuilds, ClaimBuild and
//     MarkFailed; the sessions call the rest (BeginBuild, RenewBuild,
//     PutAccepted, Journal, ...: build_session.h).
//   - Time. A build lease is measured on the *store's* clock
//     (baseline_store.h "Resumable record builds"), which nothing here can
//     move: a lease of 0 ms is expired at once, and an abandon_after of 0
//     makes every expired lease abandoned, so tests make a lease lapse
//     without sleeping (or age a row behind the store's back). The pace of
//     the ownership thread is an OwnershipClock, which a test replaces to
//     run the thread pass by pass, or as fast as it goes.
//
// Resumable builds (Options::instance_id set: `ste scheduler`; the
// embedded `ste record` has none, and its builds end with its process).
// Each build is begun with an owner, this instance, and a build lease in
// the store; accepted results are journaled in batches (build_session.h).
// The ownership thread (Start) makes a pass every build_lease / 4 (50 ms to
// 2 s): RenewAndSweep renews the lease of every build this instance runs,
// drops those it lost, and sweeps the store's build rows:
//   - a build whose row names this instance (this scheduler restarted) or
//     whose owner's lease has expired (its scheduler was killed, or is
//     stuck) is claimed and resumed (BuildSession::Resume): workers that
//     call in are told to register again, their results of leases given
//     out before are taken once, only tests without an accepted result
//     are leased again, and watchers get the build's progress again;
//   - one whose lease expired more than abandon_after ago (no scheduler
//     came back to it in time) is claimed and marked failed instead ("no
//     scheduler ran it for D past its lease (last run by X); the previous
//     baseline stays in use"): the previous complete baseline stays in use;
//   - one another instance holds a live lease on is not touched. Find()
//     naming it is Unavailable ("run by scheduler X"), which workers and
//     clients retry (with several scheduler addresses, on another one).
// Find() of a build not in memory claims and resumes it the same way at
// once (no need to wait for the sweep). A build that lost its claim (the
// store refuses its writes: another took it over) is dropped here; Find()
// looks in the store again. A building baseline without a build row (an
// embedded `ste record` running, or one begun by a ste before resumable
// builds) is never touched: NotFound.
// Shutdown() (SIGTERM) fails the running builds, after any baseline being
// stored has been stored: a stop asked for is the end of the build.
//
// Thread-safety: every method may be called from any thread, at once
// (claims are serialised per object; two objects, or two schedulers,
// racing for one build are decided by the store: one gets it).
#ifndef STE_BUILD_OWNERSHIP_H_
#define STE_BUILD_OWNERSHIP_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ste/baseline_store.h"
#include "ste/build_session.h"

namespace ste {

// What the ownership thread waits on between two passes.
class OwnershipClock {
 public:
  virtual ~OwnershipClock() = default;
  // Returns true once `period` has passed (on this clock), or false as
  // soon as Stop() is called (at once if it was).
  virtual bool WaitFor(absl::Duration period) = 0;
  // Ends every WaitFor, now and later.
  virtual void Stop() = 0;
};

// Real time; with `every`, each WaitFor waits that long whatever it is
// asked (a test's passes as fast as they go).
std::shared_ptr<OwnershipClock> RealOwnershipClock(std::optional<absl::Duration> every = std::nullopt);

class OwnedBuilds {
 public:
  struct Options {
    // This scheduler's instance id (scheduler_service.h); "" for none:
    // then nothing is journaled, claimed, renewed or swept.
    std::string instance_id;
    // How long a build stays this instance's without a renewal (on the
    // store's clock).
    absl::Duration build_lease = absl::Seconds(10);
    // A build nobody renewed for longer than this past its lease is
    // failed, not resumed.
    absl::Duration abandon_after = absl::Minutes(10);
    // The options of every session begun or resumed here (coordinator,
    // log, journal_batch); owner and lease_ms are set from the above.
    BuildSession::Options session;
    // Opens the store (a new object on every call).
    std::function<absl::StatusOr<std::unique_ptr<Store>>()> open_store;
    // One line per event (claims, take-overs, failures); may be empty.
    // Called from any thread; the caller serialises it if it needs to.
    std::function<void(const std::string&)> log;
    // The ownership thread's pace; null for real time.
    std::shared_ptr<OwnershipClock> clock;
  };

  // Requires options.open_store.
  explicit OwnedBuilds(Options options);
  // Stops the ownership thread; fails nothing (a destroyed scheduler's
  // builds are resumed by the next one to claim them).
  ~OwnedBuilds();
  OwnedBuilds(const OwnedBuilds&) = delete;
  OwnedBuilds& operator=(const OwnedBuilds&) = delete;

  // Begins a build (BuildSession::Create on a store of its own) and keeps
  // it, with the last 64 builds (older ones that are over are let go:
  // their state is in the store). Unavailable once stopping; otherwise the
  // errors of opening the store and of BuildSession::Create.
  absl::StatusOr<std::shared_ptr<BuildSession>> Create(BuildSpec spec);

  // The session of build `build_id` ("b<baseline>"). Not in memory (or
  // lost), it is looked up in the store and, with an instance id, claimed
  // and resumed when it is this instance's to take (see above), or failed
  // as abandoned. Errors, with the message the service sends:
  //   NotFound     no such build ("no build 'x'"); complete or failed ("is
  //                not running in this scheduler (it is complete)"); any
  //                building one without an instance id; one without a
  //                build row ("is not run by a scheduler (...)");
  //   Unavailable  another instance's live lease ("is not run by this
  //                scheduler: it is run by scheduler X (its lease runs N ms
  //                more)"), abandoned and failed now, not resumable, or
  //                this object stopping;
  //   the store's errors otherwise.
  absl::StatusOr<std::shared_ptr<BuildSession>> Find(const std::string& build_id);

  // The running build of the highest baseline id whose commit is `commit`
  // (an empty commit on either side matches any); null when none.
  std::shared_ptr<BuildSession> LatestRunning(const std::string& commit);

  // Shutdown() was called.
  bool stopping();

  // Starts the ownership thread (with an instance id; once): a pass of
  // RenewAndSweep now, then one every build_lease / 4 of the clock.
  void Start();

  // One pass of the ownership thread (see "Resumable builds"). Public for
  // tests; may run at the same time as the thread's (passes take turns).
  void RenewAndSweep();

  // Stops the ownership thread, then fails every running build with `why`
  // (waiting for one being stored, and for a claim under way). Create and
  // Find are Unavailable from now on.
  void Shutdown(const std::string& why);

 private:
  void Log(const std::string& line);
  BuildSession::Options SessionOptions() const;
  // Claims build `baseline` for this instance and resumes it (or fails
  // it, abandoned, when `abandoned`). *out is the session, or null when
  // the build is not this instance's to take (`why` says whose it is, or
  // what became of it). NotFound for a baseline without a build row.
  absl::Status ClaimAndResume(int64_t baseline, bool abandoned, std::shared_ptr<BuildSession>* out,
                              std::string* why);
  void StopThread();

  const Options options_;
  std::shared_ptr<OwnershipClock> clock_;
  std::mutex sweep_mu_;   // one pass at a time; guards sweep_store_
  std::unique_ptr<Store> sweep_store_;
  std::mutex resume_mu_;  // one claim and resumption at a time
  std::mutex mu_;         // guards builds_, stopping_, thread_
  std::map<std::string, std::shared_ptr<BuildSession>> builds_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ste

#endif  // STE_BUILD_OWNERSHIP_H_
