// SocketAddress: where a SocketServer listens and a RemoteClient connects.
//
//   "127.0.0.1:8686"      TCP, IPv4 (the learner's default: reachable from this machine only)
//   "0.0.0.0:8686"        TCP on every interface (actors on other machines)
//   "[::1]:8686"          TCP, IPv6
//   "learner.lan:8686"    TCP, a host name (clients only; servers bind numeric addresses)
//   "unix:/tmp/seed.sock" a Unix-domain socket (same machine, lowest latency)
//
// Port 0 asks a server for any free port; SocketServer::address() then says which.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace seedrl {

struct SocketAddress {
  enum class Kind { tcp, unix_socket };
  Kind kind = Kind::tcp;
  std::string host;        ///< tcp: a numeric address or a host name, without brackets
  std::uint16_t port = 0;  ///< tcp
  std::string path;        ///< unix_socket

  /// Parses one of the forms above; throws seedrl::Error naming the text and what is wrong.
  static SocketAddress parse(std::string_view text);
  /// The form parse() reads.
  std::string to_string() const;
  bool is_unix() const { return kind == Kind::unix_socket; }
};

}  // namespace seedrl
