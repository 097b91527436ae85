#include "invocation.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "repo_context.h"

namespace ste::cli {

int ExitCode(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSuccess: return 0;
    case Outcome::kFailure: return 1;
    case Outcome::kUsage: return 2;
    case Outcome::kNoResult: return 3;
    case Outcome::kNotStarted: return 127;
  }
  return 1;
}

int UsageError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "ste %s: %s (see 'ste %s --help')\n", command.c_str(), message.c_str(),
               command.c_str());
  return ExitCode(Outcome::kUsage);
}

Outcome OutcomeOf(const absl::Status& status) {
  if (status.ok()) return Outcome::kSuccess;
  if (absl::IsInvalidArgument(status)) return Outcome::kUsage;
  return Outcome::kFailure;
}

namespace {

bool Allows(const std::vector<OutputFormat>& formats, OutputFormat format) {
  for (OutputFormat f : formats) {
    if (f == format) return true;
  }
  return false;
}

std::string FormatNames(const std::vector<OutputFormat>& formats) {
  std::string out;
  for (size_t i = 0; i < formats.size(); i++) {
    absl::StrAppend(&out, i == 0 ? "" : "|", std::string(OutputFormatName(formats[i])));
  }
  return out;
}

}  // namespace

Invocation::Invocation(CommandSpec spec) : spec_(std::move(spec)) {
  if (spec_.formats.empty()) return;
  // --format first among the flags of --help, --json right after it.
  std::vector<FlagSpec> flags = {
      {"format", 0, true, FormatNames(spec_.formats),
       absl::StrCat("output format (default ", std::string(OutputFormatName(spec_.formats[0])),
                    ")")}};
  if (Allows(spec_.formats, OutputFormat::kJson)) {
    flags.push_back({"json", 0, false, "", "the same as --format json"});
  }
  for (FlagSpec& f : spec_.flags) {
    if (f.name != "format" && f.name != "json") flags.push_back(std::move(f));
  }
  spec_.flags = std::move(flags);
}

std::optional<int> Invocation::Parse(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedFlags> parsed = ParseFlags(args, spec_.flags, spec_.stop_at_positional);
  if (!parsed.ok()) return UsageError(std::string(parsed.status().message()));
  flags_ = *std::move(parsed);
  if (flags_.Has("help")) {
    std::printf("%s%s", spec_.help.c_str(), FlagsHelp(spec_.flags).c_str());
    return ExitCode(Outcome::kSuccess);
  }
  if (spec_.formats.empty()) return std::nullopt;
  format_ = spec_.formats[0];
  if (flags_.Has("format")) {
    absl::StatusOr<OutputFormat> format = ParseOutputFormat(flags_.Get("format"), spec_.formats);
    if (!format.ok()) return UsageError(std::string(format.status().message()));
    format_ = *format;
  }
  if (flags_.Has("json")) {
    if (flags_.Has("format") && format_ != OutputFormat::kJson) {
      return UsageError("--json is --format json: give one format");
    }
    format_ = OutputFormat::kJson;
  }
  return std::nullopt;
}

int Invocation::UsageError(const std::string& message) {
  return exit_code_ = ::ste::cli::UsageError(spec_.name, message);
}

int Invocation::Fail(const std::string& message, Outcome outcome) {
  std::fprintf(stderr, "ste %s: %s\n", spec_.name.c_str(), message.c_str());
  return exit_code_ = ExitCode(outcome);
}

int Invocation::Fail(const absl::Status& status, Outcome outcome) {
  return Fail(std::string(status.message()), outcome);
}

Config* Invocation::config() {
  if (!config_loaded_) {
    config_loaded_ = true;
    int code = 0;
    config_ = LoadRepoConfig(spec_.name, flags_.Get("config"), &code);
    if (!config_) {
      exit_code_ = code;
    } else if (flags_.Has("store")) {
      config_->store_url = flags_.Get("store");
    }
  }
  return config_ ? &*config_ : nullptr;
}

absl::StatusOr<Store*> Invocation::store(StoreAccess access) {
  if (!store_) {
    Config* c = config();
    if (c == nullptr) {
      store_ = absl::FailedPreconditionError("no configuration");
    } else {
      store_ = access == StoreAccess::kRead ? Store::OpenForReading(c->store_url, c->root)
                                            : Store::Open(c->store_url, c->root);
    }
  }
  if (!store_->ok()) return store_->status();
  return store_->value().get();
}

absl::StatusOr<std::unique_ptr<Store>> Invocation::TakeStore(StoreAccess access) {
  absl::StatusOr<Store*> opened = store(access);
  absl::StatusOr<std::unique_ptr<Store>> taken = std::move(*store_);
  store_ = absl::FailedPreconditionError("the store was handed over");
  return taken;
}

LoadedBaseline* Invocation::Baseline() {
  if (!baseline_loaded_) {
    baseline_loaded_ = true;
    Config* c = config();
    if (c == nullptr) return nullptr;  // printed, exit_code_ set
    absl::StatusOr<Store*> opened = store(StoreAccess::kReadWrite);
    absl::StatusOr<LoadedBaseline> loaded =
        opened.ok() ? LoadBaseline(**opened, *c, flags_.Get("base")) : opened.status();
    if (!loaded.ok()) {
      Fail(loaded.status());
      return nullptr;
    }
    baseline_ = *std::move(loaded);
  }
  return baseline_ ? &*baseline_ : nullptr;
}

}  // namespace ste::cli
