#include "ste/rpc_common.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace ste {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  // The mode of the file read, not of what the path named a moment before.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    std::string why = std::strerror(errno);
    close(fd);
    return absl::InternalError(absl::StrCat("cannot stat ", path, ": ", why));
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return absl::PermissionDeniedError(absl::StrCat(
        "token file ", path, " is accessible by group or others (mode ", mode,
        "): refusing to use it; chmod 600 ", path));
  }
  std::string text_read;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string why = std::strerror(errno);
      close(fd);
      return absl::InternalError(absl::StrCat("cannot read ", path, ": ", why));
    }
    if (n == 0) break;
    text_read.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  absl::StatusOr<std::string> text = std::move(text_read);
  std::string line = text->substr(0, text->find('\n'));
  absl::string_view token = absl::StripAsciiWhitespace(line);
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
  return std::string(token);
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address, const RpcAuth& auth) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kDefaultMaxMessageBytes);
  args.SetMaxSendMessageSize(kDefaultMaxMessageBytes);
  // A scheduler restarting (or a list of them failing over, "ipv4:A,B") is
  // found again within a second or two, not after gRPC's default backoff
  // of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (auth.tls_ca.empty()) {
    creds = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = auth.tls_ca;
    creds = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(address, creds, args);
}

std::unique_ptr<grpc::ClientContext> NewCallContext(const RpcAuth& auth, double deadline_seconds) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!auth.token.empty()) ctx->AddMetadata("authorization", "Bearer " + auth.token);
  if (deadline_seconds > 0) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(static_cast<int64_t>(deadline_seconds * 1000)));
  }
  return ctx;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of the longer is looked at, whatever matches.
  size_t n = std::max(a.size(), b.size());
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; i++) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool IsLoopbackAddress(std::string_view address) {
  if (absl::StartsWith(absl::string_view(address.data(), address.size()), "unix:")) return true;
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string host(address.substr(0, colon));
  if (host == "localhost" || host == "[::1]") return true;
  // 127.0.0.0/8, as an IPv4 literal only: a host *name* that starts with
  // "127." ("127.example.com") resolves wherever its DNS says.
  in_addr ip;
  return absl::StartsWith(host, "127.") && inet_pton(AF_INET, host.c_str(), &ip) == 1;
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace ste
