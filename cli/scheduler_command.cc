// `ste scheduler --listen ADDR --store URL [--token-file F] [--tls-cert F --tls-key F]`
#include <signal.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "commands.h"
#include "invocation.h"
#include "ste/atomic_file.h"
#include "ste/rpc_common.h"
#include "ste/scheduler_service.h"

namespace ste::cli {
namespace {

const std::vector<FlagSpec> kSchedulerFlags = {
    {"listen", 0, true, "ADDR", "HOST:PORT (port 0: any free port) or unix:PATH"},
    {"store", 0, true, "URL", "sqlite:PATH or postgresql://... (a libpq URI)"},
    {"token-file", 0, true, "FILE",
     "require this token (first line of FILE) on every call; without it the "
     "scheduler listens on loopback or a unix socket only"},
    {"tls-cert", 0, true, "FILE", "serve TLS with this certificate chain (PEM)"},
    {"tls-key", 0, true, "FILE", "and this private key (PEM)"},
    {"lease-timeout", 0, true, "SECONDS",
     "a worker silent this long loses its tests to others (default 30)"},
    {"heartbeat", 0, true, "SECONDS", "how often workers call in (default 5)"},
    {"max-message-bytes", 0, true, "N", "largest message accepted (default 64 MiB)"},
    {"port-file", 0, true, "FILE", "write the address listened on to FILE once ready"},
    {"instance-id", 0, true, "ID",
     "this scheduler's name in the store's build rows: unique among the schedulers "
     "running on one store, the same across restarts (default HOST/ADDR; with port 0 "
     "HOST/ADDR/pidN, new each run)"},
    {"build-lease", 0, true, "SECONDS",
     "a build this scheduler stops renewing for this long is taken over by another "
     "scheduler on the store (default 10)"},
    {"abandon-after", 0, true, "SECONDS",
     "a build no scheduler renewed for this long past its lease is marked failed instead of "
     "resumed; the previous baseline stays in use (default 600)"},
};

constexpr char kSchedulerHelp[] =
    "Usage: ste scheduler --listen ADDR --store URL [--token-file F]\n"
    "                     [--tls-cert F --tls-key F]\n"
    "\n"
    "Runs the scheduler: the service that hands the tests of a record build\n"
    "to workers ('ste worker'), takes their results, inverts them into the\n"
    "selection index and stores the baseline in the store; and answers\n"
    "selection queries ('ste select --scheduler'). Logs a line per build\n"
    "event on stderr. SIGTERM or SIGINT stop it gracefully: a baseline being\n"
    "stored is finished, running builds are marked failed (the previous\n"
    "baseline stays in use).\n"
    "\n"
    "Builds survive a kill: accepted results are kept in the store as they\n"
    "come, and a scheduler restarted with the same --instance-id resumes its\n"
    "builds at once; any scheduler on the store takes over a build whose\n"
    "scheduler stopped renewing it for --build-lease seconds. Workers and\n"
    "clients go on (give them several schedulers, --scheduler ipv4:A,B, to\n"
    "fail over); only tests without an accepted result run again. A build no\n"
    "scheduler came back to within --abandon-after seconds is failed.\n"
    "\n"
    "Exit status: 0 stopped by a signal; 1 could not start; 2 bad usage.\n"
    "\n";

int signal_pipe[2] = {-1, -1};
void OnSignal(int sig) {
  char c = static_cast<char>(sig);
  (void)!write(signal_pipe[1], &c, 1);
}

bool Seconds(const ParsedFlags& flags, const char* name, absl::Duration* out) {
  if (!flags.Has(name)) return true;
  double s;
  if (!absl::SimpleAtod(flags.Get(name), &s) || !(s > 0)) return false;
  *out = absl::Seconds(s);
  return true;
}

}  // namespace

int SchedulerCommand(const std::vector<std::string>& args) {
  Invocation in({"scheduler", kSchedulerHelp, kSchedulerFlags});
  if (std::optional<int> done = in.Parse(args)) return *done;
  const ParsedFlags* flags = &in.flags();
  if (!flags->positional.empty()) return in.UsageError("takes no arguments");
  if (!flags->Has("listen")) return in.UsageError("--listen ADDR is required");
  if (!flags->Has("store")) return in.UsageError("--store URL is required");
  if (flags->Has("tls-cert") != flags->Has("tls-key")) {
    return in.UsageError("--tls-cert and --tls-key go together");
  }
  SchedulerOptions options;
  options.store_url = flags->Get("store");
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return in.UsageError("no current directory");
  options.store_root = cwd;
  if (!Seconds(*flags, "lease-timeout", &options.lease_timeout) ||
      !Seconds(*flags, "heartbeat", &options.heartbeat_interval) ||
      !Seconds(*flags, "build-lease", &options.build_lease) ||
      !Seconds(*flags, "abandon-after", &options.abandon_after)) {
    return in.UsageError("--lease-timeout, --heartbeat, --build-lease and --abandon-after take a "
                      "positive number of seconds");
  }
  SchedulerServer::Listen listen;
  listen.address = flags->Get("listen");
  if (flags->Has("instance-id")) {
    options.instance_id = flags->Get("instance-id");
    if (options.instance_id.empty()) return in.UsageError("--instance-id must not be empty");
  } else {
    // Unique while it runs: no two processes listen on one address of a
    // host. With port 0 the address differs on each run, so the pid too.
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
    options.instance_id = absl::StrCat(host, "/", listen.address);
    if (absl::EndsWith(listen.address, ":0")) absl::StrAppend(&options.instance_id, "/pid", getpid());
  }
  if (flags->Has("max-message-bytes") &&
      (!absl::SimpleAtoi(flags->Get("max-message-bytes"), &listen.max_message_bytes) ||
       listen.max_message_bytes < 1024)) {
    return in.UsageError("--max-message-bytes takes a number >= 1024");
  }
  auto fail = [&in](const std::string& what) { return in.Fail(what); };
  if (flags->Has("token-file")) {
    absl::StatusOr<std::string> token = ReadTokenFile(flags->Get("token-file"));
    if (!token.ok()) return fail(std::string(token.status().message()));
    options.token = *token;
  }
  if (flags->Has("tls-cert")) {
    absl::StatusOr<std::string> cert = ReadWholeFile(flags->Get("tls-cert"));
    absl::StatusOr<std::string> key = ReadWholeFile(flags->Get("tls-key"));
    if (!cert.ok()) return fail(std::string(cert.status().message()));
    if (!key.ok()) return fail(std::string(key.status().message()));
    listen.tls_cert = *cert;
    listen.tls_key = *key;
  }
  // The store must open (and have ste's schema) before anything listens.
  {
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(options.store_url, options.store_root);
    if (!store.ok()) return fail(std::string(store.status().message()));
  }
  options.log = [](const std::string& line) {
    std::fprintf(stderr, "ste scheduler: %s\n", line.c_str());
    std::fflush(stderr);
  };
  const bool has_token = !options.token.empty();
  if (pipe(signal_pipe) != 0) return fail("cannot create a pipe");
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  absl::StatusOr<std::unique_ptr<SchedulerServer>> server =
      SchedulerServer::Start(options, listen);
  if (!server.ok()) return fail(std::string(server.status().message()));
  std::fprintf(stderr, "ste scheduler: listening on %s (store %s, %s%s, instance %s)\n",
               (*server)->address().c_str(), options.store_url.c_str(),
               has_token ? "token required" : "no token: loopback/unix socket only",
               listen.tls_cert.empty() ? "" : ", TLS", options.instance_id.c_str());
  std::fflush(stderr);
  if (flags->Has("port-file")) {
    // Whole or not at all: whoever waits for the file reads it at once.
    absl::Status written =
        WriteFileAtomically(flags->Get("port-file"), absl::StrCat((*server)->address(), "\n"));
    if (!written.ok()) {
      std::fprintf(stderr, "ste scheduler: --port-file: %s\n", std::string(written.message()).c_str());
    }
  }
  char sig = 0;
  while (read(signal_pipe[0], &sig, 1) < 0) {
  }
  std::fprintf(stderr, "ste scheduler: signal %d: stopping\n", sig);
  (*server)->Shutdown(absl::StrCat("the scheduler was stopped (signal ", static_cast<int>(sig), ")"),
                      absl::Seconds(10));
  std::fprintf(stderr, "ste scheduler: stopped\n");
  return ExitCode(Outcome::kSuccess);
}

}  // namespace ste::cli
