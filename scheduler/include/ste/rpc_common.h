// What the scheduler service, the worker and the clients share: channels,
// the token, status conversion, message limits.
//
// Addresses: "HOST:PORT" (TCP) or "unix:/path" (a unix socket), as gRPC
// takes them. Auth: the token travels as `authorization: Bearer <token>`
// metadata on every call; TLS is optional (the client trusts `tls_ca`).
#ifndef STE_RPC_COMMON_H_
#define STE_RPC_COMMON_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ste {

// Received messages are limited to this by default (the server refuses a
// bigger one with RESOURCE_EXHAUSTED); workers split what they send to stay
// well below it.
inline constexpr int kDefaultMaxMessageBytes = 64 << 20;

struct RpcAuth {
  std::string token;   // "" for none
  std::string tls_ca;  // PEM of the CA to trust; "" for plain TCP
};

// Reads a token file: its first line, trimmed. NotFound when it cannot be
// opened; PermissionDenied, naming the file, its mode and `chmod 600`, when
// the file opened is accessible by group or others (mode & 077: a shared
// secret others can read is no secret; OpenSSH refuses such keys);
// InvalidArgument when empty.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// A channel to `address` with the client limits set.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address, const RpcAuth& auth);

// A context for one call: the token, and a deadline when > 0 seconds.
std::unique_ptr<grpc::ClientContext> NewCallContext(const RpcAuth& auth, double deadline_seconds);

// Compares in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// True for "127.x.x.x:P", "[::1]:P", "localhost:P" and "unix:...".
bool IsLoopbackAddress(std::string_view address);

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace ste

#endif  // STE_RPC_COMMON_H_
