// A real PostgreSQL server for tests; see pg_test_server.h.
#include "pg_test_server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ste::testing {
namespace {

constexpr char kDefaultBinDir[] = "/usr/lib/postgresql/15/bin";
constexpr char kSuperuser[] = "ste";

std::string TailOf(const std::string& path, size_t max_bytes = 2000) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  std::string text = out.str();
  if (text.size() > max_bytes)
    text = "..." + text.substr(text.size() - max_bytes);
  return text;
}

struct Identity {
  bool drop = false;  // setgid/setuid to uid/gid before exec
  uid_t uid = 0;
  gid_t gid = 0;
};

// Forks and execs argv (argv[0] an absolute path) in `cwd`, as `who`,
// stdout and stderr appended to `log`, stdin /dev/null. With
// `death_signal`, the child gets it when this thread exits.
absl::StatusOr<pid_t> SpawnAs(const Identity& who,
                              const std::vector<std::string>& args,
                              const std::string& cwd, const std::string& log,
                              int death_signal) {
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out =
        open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
        dup2(out, 2) < 0) {
      _exit(126);
    }
    if (chdir(cwd.c_str()) != 0) _exit(126);
    if (who.drop) {
      if (setgroups(0, nullptr) != 0 || setgid(who.gid) != 0 ||
          setuid(who.uid) != 0) {
        static const char kMsg[] = "pg_test_server: cannot become postgres\n";
        (void)!write(2, kMsg, sizeof kMsg - 1);
        _exit(126);
      }
    }
    // After setuid, which clears it.
    if (death_signal != 0) {
      prctl(PR_SET_PDEATHSIG, death_signal);
      if (getppid() != parent) _exit(0);  // the parent is already gone
    }
    execv(argv[0], argv.data());
    static const char kMsg[] = "pg_test_server: exec failed\n";
    (void)!write(2, kMsg, sizeof kMsg - 1);
    _exit(127);
  }
  return pid;
}

// Runs argv to completion; an error (with the log's tail) unless it exits 0.
absl::Status RunAs(const Identity& who, const std::vector<std::string>& args,
                   const std::string& cwd, const std::string& log) {
  absl::StatusOr<pid_t> pid = SpawnAs(who, args, cwd, log, 0);
  if (!pid.ok()) return pid.status();
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::ErrnoToStatus(errno, "waitpid");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(absl::StrJoin(args, " "),
                                          " failed (wait status ", status,
                                          "):\n", TailOf(log)));
}

absl::Status ChownIfDropping(const Identity& who, const std::string& path) {
  if (who.drop && chown(path.c_str(), who.uid, who.gid) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("chown ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PgTestServer*> PgTestServer::Shared() {
  // Destroyed (server stopped) when the process exits normally.
  static std::mutex mu;
  static std::unique_ptr<PgTestServer> server;
  static absl::Status failure;
  std::lock_guard<std::mutex> lock(mu);
  if (server == nullptr && failure.ok()) {
    absl::StatusOr<std::unique_ptr<PgTestServer>> started = Start();
    if (started.ok()) {
      server = *std::move(started);
    } else {
      failure = started.status();
    }
  }
  if (!failure.ok()) return failure;
  return server.get();
}

absl::StatusOr<std::unique_ptr<PgTestServer>> PgTestServer::Start() {
  std::unique_ptr<PgTestServer> server(new PgTestServer());
  absl::Status started = server->StartServer();
  if (!started.ok()) {
    (void)server->Stop();
    return started;
  }
  return server;
}

absl::Status PgTestServer::StartServer() {
  owner_ = getpid();
  const char* env_bin = getenv("STE_PG_BINDIR");
  bin_dir_ = env_bin && *env_bin ? env_bin : kDefaultBinDir;
  for (const char* tool : {"initdb", "postgres", "pg_ctl"}) {
    const std::string path = absl::StrCat(bin_dir_, "/", tool);
    if (access(path.c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the PostgreSQL tests need a real PostgreSQL 15 server, but ", path,
          " is missing: install the Debian package postgresql-15 (`make deps` "
          "installs postgresql), or set STE_PG_BINDIR to a directory holding "
          "initdb, postgres and pg_ctl"));
    }
  }

  Identity who;
  if (geteuid() == 0) {
    struct passwd* pw = getpwnam("postgres");
    if (pw == nullptr) {
      return absl::FailedPreconditionError(
          "the PostgreSQL tests run as root, and initdb/postgres refuse to: "
          "they run as the 'postgres' system user, which does not exist "
          "(the Debian package postgresql-common creates it)");
    }
    who.drop = true;
    who.uid = pw->pw_uid;
    who.gid = pw->pw_gid;
  }
  drop_to_postgres_ = who.drop;
  uid_ = who.uid;
  gid_ = who.gid;

  // As root, /tmp: the postgres user must be able to enter every parent
  // (a root-only $TMPDIR would stop it), and the socket path stays short.
  const char* tmp = getenv("TMPDIR");
  std::string parent =
      !who.drop && tmp && *tmp && strlen(tmp) < 60 ? tmp : "/tmp";
  std::string tmpl = parent + "/ste_pg.XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("mkdtemp ", tmpl));
  }
  base_dir_ = tmpl;
  data_dir_ = base_dir_ + "/data";
  socket_dir_ = base_dir_ + "/sock";
  log_path_ = base_dir_ + "/server.log";
  if (mkdir(socket_dir_.c_str(), 0700) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("mkdir ", socket_dir_));
  }
  for (const std::string& dir : {base_dir_, socket_dir_}) {
    absl::Status owned = ChownIfDropping(who, dir);
    if (!owned.ok()) return owned;
  }

  absl::Status initdb =
      RunAs(who,
            {bin_dir_ + "/initdb", "-D", data_dir_, "-U", kSuperuser, "-A",
             "trust", "-E", "UTF8", "--locale=C.UTF-8", "--locale-provider=icu",
             "--icu-locale=en-US", "--no-sync"},
            base_dir_, base_dir_ + "/initdb.log");
  if (!initdb.ok()) return initdb;

  port_ = 20000 + static_cast<int>(getpid() % 20000);
  absl::StatusOr<pid_t> postmaster = SpawnAs(
      who,
      {bin_dir_ + "/postgres", "-D", data_dir_, "-c", "listen_addresses=", "-c",
       "unix_socket_directories=" + socket_dir_, "-c",
       absl::StrCat("port=", port_), "-c", "fsync=off", "-c",
       "full_page_writes=off", "-c", "max_wal_size=1GB", "-c",
       "dynamic_shared_memory_type=mmap", "-c", "max_connections=50"},
      base_dir_, log_path_, SIGINT);
  if (!postmaster.ok()) return postmaster.status();
  postmaster_ = *postmaster;

  const std::string ping = absl::StrCat("host=", socket_dir_, " port=", port_,
                                        " dbname=postgres user=", kSuperuser);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (PQping(ping.c_str()) != PQPING_OK) {
    int status = 0;
    if (waitpid(postmaster_, &status, WNOHANG) == postmaster_) {
      postmaster_ = -1;
      return absl::InternalError(
          absl::StrCat("postgres exited while starting (wait status ", status,
                       "):\n", LogTail()));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("postgres did not answer within 60 s:\n", LogTail()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  admin_ = PQconnectdb(ping.c_str());
  if (PQstatus(admin_) != CONNECTION_OK) {
    return absl::InternalError(
        absl::StrCat("connect to the test server: ", PQerrorMessage(admin_)));
  }
  PQsetNoticeProcessor(
      admin_, [](void*, const char*) {}, nullptr);
  return absl::OkStatus();
}

PgTestServer::~PgTestServer() { (void)Stop(); }

std::string PgTestServer::UrlFor(const std::string& database) const {
  return absl::StrCat("postgresql:///", database, "?host=", socket_dir_,
                      "&port=", port_, "&user=", kSuperuser);
}

absl::Status PgTestServer::AdminExec(const std::string& sql) {
  if (admin_ == nullptr) return absl::FailedPreconditionError("not running");
  PGresult* result = PQexec(admin_, sql.c_str());
  absl::Status status;
  if (PQresultStatus(result) != PGRES_COMMAND_OK &&
      PQresultStatus(result) != PGRES_TUPLES_OK) {
    status = absl::InternalError(
        absl::StrCat(sql, ": ", PQresultErrorMessage(result)));
  }
  PQclear(result);
  return status;
}

absl::StatusOr<std::string> PgTestServer::CreateDatabase() {
  const std::string name = absl::StrCat("ste_test_", ++databases_);
  absl::Status created = AdminExec(absl::StrCat("CREATE DATABASE ", name));
  if (!created.ok()) return created;
  return UrlFor(name);
}

std::string PgTestServer::LogTail() const { return TailOf(log_path_); }

absl::Status PgTestServer::Stop() {
  if (owner_ != getpid()) return absl::OkStatus();  // a forked child
  if (admin_ != nullptr) {
    PQfinish(admin_);
    admin_ = nullptr;
  }
  absl::Status status;
  if (postmaster_ > 0) {
    Identity who{drop_to_postgres_, uid_, gid_};
    status = RunAs(who,
                   {bin_dir_ + "/pg_ctl", "stop", "-D", data_dir_, "-m", "fast",
                    "-w", "-t", "60"},
                   base_dir_, base_dir_ + "/pg_ctl.log");
    // pg_ctl could not stop it: it is our child, by its id.
    if (!status.ok()) kill(postmaster_, SIGQUIT);
    int wait_status = 0;
    while (waitpid(postmaster_, &wait_status, 0) < 0 && errno == EINTR) {
    }
    postmaster_ = -1;
  }
  if (!base_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(base_dir_, ec);
    base_dir_.clear();
  }
  owner_ = -1;
  return status;
}

}  // namespace ste::testing
