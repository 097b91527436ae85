// A real PostgreSQL 15 server for tests: the Debian binaries, a data
// directory in a temp dir, a unix socket only.
//
// Start() runs initdb (as the "postgres" system user when we are root:
// initdb and postgres refuse to run as root; as ourselves otherwise) into
// <tmp>/ste_pg.XXXXXX/data, then postgres as our child process with
//   listen_addresses=''                  no TCP at all
//   unix_socket_directories=<tmp>/.../sock
//   fsync=off, full_page_writes=off      a throwaway cluster: the tests
//                                        kill clients, never the server
// and waits until it answers (PQping). The cluster's default collation is
// ICU "en-US" (linguistic, like most production databases), so a query
// that forgot COLLATE "C" sorts differently and shows. The superuser is
// "ste"; local connections are trusted (the socket lives in a directory
// only its owner and root can enter).
//
// Stop() (and the destructor) runs `pg_ctl stop -D <data> -m fast`, which
// signals that data directory's postmaster only, reaps it, and removes the
// temp directory. If the test process dies first, the kernel sends the
// postmaster SIGINT (PR_SET_PDEATHSIG: a fast shutdown), so no server
// outlives its test binary; its temp directory is then left behind.
//
// Shared() is the server of the whole test binary: started by the first
// call (initdb + start take about a second here), stopped when the process
// exits. Each test takes a fresh database from it (CreateDatabase, ~0.1 s).
// ctest runs the PostgreSQL tests of a binary as one process for that
// reason (see scheduler/CMakeLists.txt).
//
// Missing binaries are an error naming the Debian package, never a skip:
// the binaries are looked up in $STE_PG_BINDIR, else
// /usr/lib/postgresql/15/bin.
//
// Requires: Shared()/Start() called from the main thread (the death signal
// is tied to the thread that forked the server).
#ifndef STE_TESTS_SUPPORT_PG_TEST_SERVER_H_
#define STE_TESTS_SUPPORT_PG_TEST_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct pg_conn;

namespace ste::testing {

class PgTestServer {
 public:
  // The server shared by every test of this process (see above). The
  // same error is returned to every caller if it could not start.
  static absl::StatusOr<PgTestServer*> Shared();
  // A server of one's own.
  static absl::StatusOr<std::unique_ptr<PgTestServer>> Start();
  ~PgTestServer();
  PgTestServer(const PgTestServer&) = delete;
  PgTestServer& operator=(const PgTestServer&) = delete;

  // Creates a new, empty database ("ste_test_<n>") and returns its URL.
  absl::StatusOr<std::string> CreateDatabase();
  // "postgresql:///<database>?host=<socket dir>&port=<port>&user=ste"
  std::string UrlFor(const std::string& database) const;
  // Runs `sql` (statements without result rows) as the superuser in the
  // maintenance database "postgres".
  absl::Status AdminExec(const std::string& sql);

  const std::string& socket_dir() const { return socket_dir_; }
  int port() const { return port_; }
  // The server's log (for messages when something went wrong).
  std::string LogTail() const;

  // Stops the server and removes its directories; idempotent. Does
  // nothing in a forked child of the process that started it.
  absl::Status Stop();

 private:
  PgTestServer() = default;
  absl::Status StartServer();

  std::string bin_dir_;
  std::string base_dir_;  // <tmp>/ste_pg.XXXXXX
  std::string data_dir_;
  std::string socket_dir_;
  std::string log_path_;
  int port_ = 0;
  bool drop_to_postgres_ = false;  // we are root: run as "postgres"
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  pid_t postmaster_ = -1;
  pid_t owner_ = -1;  // the process that started it
  pg_conn* admin_ = nullptr;
  int databases_ = 0;
};

}  // namespace ste::testing

#endif  // STE_TESTS_SUPPORT_PG_TEST_SERVER_H_
