#include "ste/checkout.h"

#include <algorithm>
#include <fstream>
#include <future>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ste/definitions.h"
#include "ste/git.h"
#include "ste/runner_kind.h"
#include "ste/selection.h"
#include "ste/status_macros.h"
#include "ste/timings.h"
#include "ste/traced_run.h"

namespace ste {

namespace {

// The state git's error message tells: not a repository, no commit yet, or
// a history that cannot be read.
CommitFacts FromGitError(const absl::Status& status) {
  CommitFacts f;
  const std::string why(status.message());
  if (absl::StrContains(why, "not a git repository")) {
    f.state = CommitFacts::State::kNotGit;
  } else if (absl::StrContains(why, "ambiguous argument 'HEAD'") ||
             absl::StrContains(why, "unknown revision")) {
    f.state = CommitFacts::State::kNoCommits;  // a repository without commits yet
  } else if (absl::IsNotFound(status)) {
    f.state = CommitFacts::State::kNotGit;  // no git installed: not a git checkout to ste
  } else {
    f.state = CommitFacts::State::kUnreadable;
    f.error = why;
  }
  return f;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipWhitespace());
}

// A commit object's content: appends the parents its headers name to
// *parents and returns its message (what follows the first empty line, as
// `git log --format=%B` prints it).
absl::string_view ParseCommitObject(absl::string_view content, std::vector<std::string>* parents) {
  for (;;) {
    const size_t eol = content.find('\n');
    absl::string_view line = content.substr(0, eol);
    content = eol == absl::string_view::npos ? absl::string_view() : content.substr(eol + 1);
    if (line.empty()) return content;  // the headers end at the first empty line
    if (absl::ConsumePrefix(&line, "parent ")) parents->emplace_back(line);
  }
}

// The parents commit `sha` names in its object (even when they were not
// fetched); NotFound when this checkout does not have the commit.
absl::StatusOr<std::vector<std::string>> RawParents(const std::string& root, const std::string& sha) {
  absl::StatusOr<std::string> object = RunGit(root, {"cat-file", "commit", sha});
  if (!object.ok()) {
    return absl::NotFoundError(absl::StrCat("commit ", sha.substr(0, 12), " is not in this checkout"));
  }
  std::vector<std::string> parents;
  ParseCommitObject(*object, &parents);
  return parents;
}

// The commits at the edge of a shallow clone (git's "shallow" file).
std::vector<std::string> ShallowEdge(const std::string& root) {
  absl::StatusOr<std::string> path = RunGit(root, {"rev-parse", "--git-path", "shallow"});
  if (!path.ok()) return {};
  std::string file(absl::StripAsciiWhitespace(*path));
  if (!file.empty() && file[0] != '/') file = root + "/" + file;
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

}  // namespace

absl::StatusOr<BaselineQuery> BaselineQuery::FromFlag(const std::string& base) {
  BaselineQuery q;
  if (base.empty() || base == "auto") return q;
  if (!absl::SimpleAtoi(base, &q.id) || q.id <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--base: '", base, "' is not auto or an id"));
  }
  return q;
}

CommitFacts ReadCommitFacts(const std::string& root) {
  // The count runs beside rev-parse (two git processes at once, not one
  // after the other); a shallow clone's count is waited for and dropped.
  std::future<absl::StatusOr<std::string>> count_of_head = std::async(
      std::launch::async, [&root] { return RunGit(root, {"rev-list", "--count", "HEAD"}); });
  absl::StatusOr<std::string> head = RunGit(root, {"rev-parse", "--is-shallow-repository", "HEAD"});
  absl::StatusOr<std::string> count = count_of_head.get();
  if (!head.ok()) return FromGitError(head.status());
  std::vector<std::string> lines = Lines(*head);
  CommitFacts f;
  if (lines.size() != 2 || (lines[0] != "true" && lines[0] != "false")) {
    f.state = CommitFacts::State::kUnreadable;
    f.error = absl::StrCat("git rev-parse --is-shallow-repository HEAD printed '", *head, "'");
    return f;
  }
  f.shallow = lines[0] == "true";
  f.head = lines[1];
  f.state = CommitFacts::State::kReadable;
  if (f.shallow) return f;  // its commit count is not an MRI
  if (!count.ok()) {
    CommitFacts e = FromGitError(count.status());
    if (e.state == CommitFacts::State::kReadable) e.state = CommitFacts::State::kUnreadable;
    return e;
  }
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*count), &f.mri)) {
    f.state = CommitFacts::State::kUnreadable;
    f.error = absl::StrCat("git rev-list --count HEAD printed '", *count, "'");
    f.mri = INT64_MAX;
  }
  return f;
}

absl::StatusOr<std::vector<std::string>> VisibleCommits(const std::string& root, size_t limit) {
  absl::StatusOr<std::string> log =
      RunGit(root, {"rev-list", absl::StrCat("--max-count=", limit), "HEAD"});
  if (!log.ok()) return log.status();
  std::vector<std::string> out = Lines(*log);
  std::set<std::string> seen(out.begin(), out.end());
  for (const std::string& edge : ShallowEdge(root)) {
    absl::StatusOr<std::vector<std::string>> parents = RawParents(root, edge);
    if (!parents.ok()) continue;
    for (const std::string& p : *parents) {
      if (out.size() < limit && seen.insert(p).second) out.push_back(p);
    }
  }
  return out;
}

absl::StatusOr<std::string> MessagesSince(const std::string& root, const std::string& base,
                                          const std::string& head, bool shallow) {
  if (base.empty()) return RunGit(root, {"log", "-1", "--format=%B", "HEAD"});
  if (!shallow) {
    absl::StatusOr<std::string> log = RunGit(root, {"log", "--format=%B", base + "..HEAD"});
    if (log.ok()) return log;
    return absl::NotFoundError(absl::StrCat("the baseline's commit ", base.substr(0, 12),
                                            " is not in this checkout"));
  }
  // A shallow clone: walk the parents the commit objects name, from HEAD
  // back to `base`; every commit on the way must be here. One `git
  // cat-file --batch` hands out every commit object: its parents and its
  // message.
  absl::StatusOr<std::unique_ptr<GitObjectReader>> reader = GitObjectReader::Start(root);
  if (!reader.ok()) return reader.status();
  std::string messages;
  std::set<std::string> visited;
  std::vector<std::string> todo = {head};
  while (!todo.empty()) {
    std::string sha = todo.back();
    todo.pop_back();
    if (sha == base || !visited.insert(sha).second) continue;
    if (visited.size() > 100000) return absl::ResourceExhaustedError("too many commits since the baseline");
    absl::StatusOr<GitObject> object = (*reader)->Read(sha);
    if (absl::IsNotFound(object.status()) || (object.ok() && object->type != "commit")) {
      return absl::NotFoundError(absl::StrCat("commit ", sha.substr(0, 12), " is not in this checkout"));
    }
    if (!object.ok()) return object.status();
    absl::StrAppend(&messages, ParseCommitObject(object->content, &todo), "\n");
  }
  return messages;
}

namespace {

// Both absent, or both there with the same type and content.
bool SameEntry(const InventoryEntry* a, const InventoryEntry* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->type == b->type && a->size == b->size && a->hash.low64 == b->hash.low64 &&
         a->hash.high64 == b->hash.high64;
}

}  // namespace

LocalCheckout::LocalCheckout(Config config, bool force_all)
    : config_(std::move(config)), force_all_(force_all) {}

const CommitFacts& LocalCheckout::facts() {
  if (!facts_) facts_ = ReadCommitFacts(config_.root);
  return *facts_;
}

BaselineLookup LocalCheckout::Lookup(const BaselineQuery& query) {
  BaselineLookup which;
  which.id = query.id;
  which.commit = query.base_commit;
  if (query.id > 0) return which;
  if (!query.base_commit.empty()) {
    // Its history, when this checkout has it (a shallow merge commit of a
    // pull request names the base commit without having it: none).
    which.fallback = true;
    absl::StatusOr<std::string> log = RunGit(
        config_.root, {"rev-list", absl::StrCat("--max-count=", kMaxVisibleCommits), query.base_commit, "--"});
    if (log.ok()) which.fallback_commits = Lines(*log);
    return which;
  }
  if (query.mri >= 0) {
    which.mri = query.mri;
    return which;
  }
  const CommitFacts& f = facts();
  if (f.state == CommitFacts::State::kReadable && f.shallow) {
    const std::string what_to_pass =
        "pass --base-commit SHA (the commit the change is based on, e.g. "
        "github.event.pull_request.base.sha) or --mri N ($STE_MRI), or fetch the history "
        "down to a recorded commit (actions/checkout fetch-depth: 0)";
    absl::StatusOr<std::vector<std::string>> commits = VisibleCommits(config_.root, kMaxVisibleCommits);
    if (commits.ok() && !commits->empty()) {
      which.commits = *std::move(commits);
      which.hint = absl::StrCat("this is a shallow clone, whose commit count is no MRI; it can see ",
                                which.commits.size(), " commits from HEAD ", f.head.substr(0, 12),
                                ": ", what_to_pass);
    } else {
      which.hint = absl::StrCat("this is a shallow clone: ", what_to_pass);
    }
    return which;
  }
  which.mri = f.mri;
  return which;
}

absl::StatusOr<TreeNow> LocalCheckout::ReadTree(const Inventory* stat_cache,
                                                const std::vector<std::string>& external) {
  if (assumed_ && stat_cache != nullptr) {  // without a baseline: all of the tree's tests
    TreeNow now;
    auto assume = [&](const std::string& path) {
      now.changed_paths.emplace_back(path, "modified");
      if (!TestsAreCTestNames(config_.runner_kind) && config_.test_include.Matches(path) &&
          !config_.test_exclude.Matches(path)) {
        now.tests.push_back(path);
      }
    };
    for (const std::string& path : *assumed_) {
      assume(path);
      // A directory the baseline saw: everything it saw beneath it too.
      const InventoryEntry* dir = stat_cache->Find(path);
      if (dir == nullptr || dir->type != FileType::kDirectory) continue;
      const std::string prefix = path == "." ? "" : path + "/";
      const std::vector<InventoryEntry>& entries = stat_cache->entries();
      auto it = std::lower_bound(entries.begin(), entries.end(), prefix,
                                 [](const InventoryEntry& e, const std::string& p) { return e.path < p; });
      for (; it != entries.end() && it->path.compare(0, prefix.size(), prefix) == 0; ++it) {
        if (it->type != FileType::kMissing && !IsViewPath(it->path)) assume(it->path);
      }
    }
    now.tests_from_baseline = true;
    return now;
  }
  ScanOptions scan;
  scan.root = config_.root;
  scan.ignore = config_.inventory_ignore;
  // The views the baseline holds (inventory.h, "Views"), as well as those
  // its index names: a view is never found by the walk.
  std::vector<std::string> requested = external;
  if (stat_cache != nullptr) {
    for (const InventoryEntry& e : *stat_cache) {
      if (IsViewPath(e.path)) requested.push_back(e.path);
    }
  }
  // The variables selection.env_run_all names that are set now: one the
  // baseline did not have set is a change too (environment.h).
  if (!environment_) environment_ = Environment::OfProcess();
  scan.environment = &*environment_;
  for (std::string& path : EnvRunAllViews(config_.selection.env_run_all, *environment_)) {
    requested.push_back(std::move(path));
  }
  std::vector<std::string> definitions;  // fingerprinted, not scanned
  for (std::string& path : requested) {
    if (path[0] == '/' && !config_.inventory_external && !IsEnvViewPath(path)) continue;
    if (!IsViewPath(path)) {
      scan.external_paths.push_back(std::move(path));
      continue;
    }
    std::optional<View> view = ParseView(path);
    (view && view->kind == ViewKind::kDefinition ? definitions : scan.view_paths)
        .push_back(std::move(path));
  }
  absl::StatusOr<Inventory> inventory;
  {
    ScopedPhase phase("tree read: walk and stat (hash what changed)");
    inventory = Inventory::Scan(scan, stat_cache);
  }
  if (!inventory.ok()) return inventory.status();
  if (!definitions.empty()) {
    ScopedPhase phase("tree read: definitions of changed files");
    // Only the files that changed are fingerprinted (definitions.h); with
    // no integrations folder every changed one counts as not parsed (its
    // module-level code changed: file level).
    std::sort(definitions.begin(), definitions.end());
    definitions.erase(std::unique(definitions.begin(), definitions.end()), definitions.end());
    absl::StatusOr<std::string> integrations = FindIntegrationsDir();
    Fingerprinter fingerprinter = Fingerprinter::ForIntegrations(
        integrations.ok() ? *integrations : std::string("/nonexistent"));
    absl::StatusOr<std::vector<InventoryEntry>> now =
        DefinitionViewsNow(config_.root, definitions,
                           stat_cache != nullptr     ? stat_cache
                           : definition_base_ ? &*definition_base_
                                              : nullptr,
                           *inventory, fingerprinter);
    if (!now.ok()) return now.status();
    STE_RETURN_IF_ERROR(inventory->AddEntries(*std::move(now)));
  }
  TreeNow now;
  if (TestsAreCTestNames(config_.runner_kind) && stat_cache != nullptr &&
      !SameEntry(stat_cache->Find(config_.selection.config_file),
                 inventory->Find(config_.selection.config_file))) {
    // `ctest -N` evaluates CMake scripts of the build tree this ste.toml
    // names: a changed ste.toml is not trusted to name it (the selection is
    // all for the change anyway; the baseline's tests are its list).
    now.inventory = *std::move(inventory);
    now.tests_from_baseline = true;
    return now;
  }
  ScopedPhase phase("tree read: tests listed");
  absl::StatusOr<std::vector<std::string>> tests = DiscoverTests(config_, *inventory);
  if (!tests.ok()) return tests.status();
  now.inventory = *std::move(inventory);
  now.tests = *std::move(tests);
  return now;
}

namespace {

// The reason naming the last of kForceTags found in `text`, or "".
std::string ForceTagIn(const std::string& text, absl::string_view where) {
  std::string force;
  for (const char* tag : kForceTags) {
    if (absl::StrContains(text, tag)) force = absl::StrCat("force tag ", tag, " in ", where);
  }
  return force;
}

}  // namespace

std::string LocalCheckout::ForceReason(const std::string& base_commit) {
  if (force_all_) return "--all given";
  if (assumed_) return "";  // a change not made yet: no message
  if (change_text_) {
    if (!config_.selection.force_tags) return "";
    return ForceTagIn(*change_text_, "the change's text (--change-text: its commits, title, body or labels)");
  }
  const CommitFacts& f = facts();
  switch (f.state) {
    case CommitFacts::State::kNotGit:
    case CommitFacts::State::kNoCommits:
      return "";  // no commit message to carry a tag
    case CommitFacts::State::kUnreadable:
      return absl::StrCat("cannot read the git history (a force tag could be missed): ", f.error);
    case CommitFacts::State::kReadable:
      break;
  }
  if (!config_.selection.force_tags) return "";
  // The messages of the change: the commits HEAD has and the baseline's
  // commit has not; HEAD's own when the baseline has no commit.
  absl::StatusOr<std::string> messages = MessagesSince(config_.root, base_commit, f.head, f.shallow);
  if (!messages.ok()) {
    return absl::StrCat("cannot read the commit messages since the baseline's commit ",
                        base_commit.substr(0, 12), " (a force tag there could be missed): ",
                        absl::StripAsciiWhitespace(messages.status().message()),
                        f.shallow ? "; fetch the commits of the change (a deeper clone), or set "
                                    "selection.force_tags = false if this project does not use them"
                                  : "");
  }
  return ForceTagIn(*messages, "a commit message");
}

}  // namespace ste
