// Copyright: the ste authors.
#include "ste/baseline_retention.h"

#include <dirent.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "ste/build_id.h"
#include "ste/status_macros.h"
#include "ste/test_recorder.h"

namespace ste {

std::string DescribeAge(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 60) return absl::StrCat(seconds, "s");
  if (seconds < 3600) return absl::StrCat(seconds / 60, "m");
  if (seconds < 2 * 86400) return absl::StrCat(seconds / 3600, "h");
  return absl::StrCat(seconds / 86400, "d");
}

std::vector<GcDecision> PlanGc(const std::vector<BaselineSummary>& baselines,
                               const GcOptions& options, int64_t now_unix) {
  const size_t keep = std::max<size_t>(options.keep, 1);
  // The complete ones, newest first as LatestCompleted orders them.
  std::vector<const BaselineSummary*> complete;
  for (const BaselineSummary& b : baselines) {
    if (b.info.state == BaselineState::kComplete) complete.push_back(&b);
  }
  std::sort(complete.begin(), complete.end(), [](const BaselineSummary* a, const BaselineSummary* b) {
    return a->info.mri != b->info.mri ? a->info.mri > b->info.mri : a->info.id > b->info.id;
  });
  std::vector<GcDecision> plan;
  plan.reserve(baselines.size());
  for (const BaselineSummary& b : baselines) {
    GcDecision d;
    d.baseline = b;
    switch (b.info.state) {
      case BaselineState::kComplete: {
        const size_t rank =
            static_cast<size_t>(std::find(complete.begin(), complete.end(), &b) - complete.begin());
        if (rank == 0) {
          d.why = "the newest complete baseline";
        } else if (rank < keep) {
          d.why = absl::StrCat("complete, one of the newest ", keep);
        } else {
          d.remove = true;
          d.why = absl::StrCat("complete, older than the newest ", keep);
        }
        break;
      }
      case BaselineState::kFailed:
        d.remove = true;
        d.why = b.info.failure.empty() ? "failed" : absl::StrCat("failed: ", b.info.failure);
        break;
      case BaselineState::kBuilding: {
        const int64_t age = now_unix - b.info.created_unix;
        if (b.writer_alive) {
          d.why = "building: its writer is alive";
        } else if (age >= options.abandoned_after_seconds) {
          d.remove = true;
          d.why = absl::StrCat("abandoned: building for ", DescribeAge(age),
                               ", and nothing holds its writer lock");
        } else {
          d.why = absl::StrCat("building, nothing holds its writer lock, but only ",
                               DescribeAge(age), " old (abandoned after ",
                               DescribeAge(options.abandoned_after_seconds), ")");
        }
        break;
      }
    }
    plan.push_back(std::move(d));
  }
  return plan;
}

absl::StatusOr<GcReport> CollectGarbage(RetentionStore& store, const GcOptions& options,
                                        int64_t now_unix) {
  STE_ASSIGN_OR_RETURN(std::vector<BaselineSummary> summaries, store.ListSummaries());
  GcReport report;
  report.decisions = PlanGc(summaries, options, now_unix);
  if (options.dry_run) return report;
  auto note = [&](const absl::Status& s) {
    if (report.status.ok()) report.status = s;
  };
  for (const GcDecision& d : report.decisions) {
    if (!d.remove) continue;
    absl::StatusOr<bool> removed = store.Remove(d.baseline.info.id, d.baseline.info.state);
    if (!removed.ok()) {
      note(removed.status());
      report.kept_after_all.push_back(
          absl::StrCat(d.baseline.info.id, ": ", removed.status().message()));
    } else if (!*removed) {
      report.kept_after_all.push_back(absl::StrCat(
          d.baseline.info.id, ": it changed since it was listed (completed, failed, taken by a "
                              "writer, or removed by another gc)"));
    } else {
      report.removed.push_back(d.baseline.info.id);
      report.removed_bytes += d.baseline.blob_bytes;
    }
  }
  absl::StatusOr<std::vector<std::string>> swept = store.RemoveStaleFiles();
  if (swept.ok()) {
    report.stale_files = *std::move(swept);
  } else {
    note(swept.status());
  }
  if (!options.output_dir.empty()) {
    // The test logs of record builds whose baseline is gone: listed after
    // the rows, so a build begun meanwhile (a new row) is never touched;
    // one that began after the listing has an id above every listed one.
    absl::StatusOr<std::vector<BaselineSummary>> left = store.ListSummaries();
    if (!left.ok()) {
      note(left.status());
      return report;
    }
    std::set<int64_t> present;
    int64_t highest = 0;
    for (const BaselineSummary& b : *left) {
      present.insert(b.info.id);
      highest = std::max(highest, b.info.id);
    }
    for (const GcDecision& d : report.decisions) highest = std::max(highest, d.baseline.info.id);
    if (DIR* dir = opendir(options.output_dir.c_str())) {
      std::vector<std::string> names;
      while (struct dirent* e = readdir(dir)) names.push_back(e->d_name);
      closedir(dir);
      for (const std::string& name : names) {
        std::optional<int64_t> built = BaselineOfBuildId(name);  // <output dir>/<build id>
        if (!built) continue;
        const int64_t id = *built;
        if (id > highest || present.count(id)) continue;
        std::string path = options.output_dir + "/" + name;
        RemoveTree(path);
        report.output_dirs.push_back(path);
      }
    }
  }
  return report;
}

}  // namespace ste
