#include "seedrl/transport/socket_address.hpp"

#include <charconv>

#include "seedrl/core/error.hpp"

namespace seedrl {

namespace {
// sockaddr_un::sun_path holds 108 bytes on Linux, including the terminating zero.
constexpr std::size_t kMaxUnixPath = 107;
}  // namespace

SocketAddress SocketAddress::parse(std::string_view text) {
  SocketAddress a;
  if (text.starts_with("unix:")) {
    a.kind = Kind::unix_socket;
    a.path = std::string(text.substr(5));
    SEEDRL_REQUIRE(!a.path.empty(), "address '", text,
                   "': a Unix socket needs a path, as in unix:/tmp/seedrl.sock");
    SEEDRL_REQUIRE(a.path.size() <= kMaxUnixPath, "address '", text,
                   "': a Unix socket path may have at most ", kMaxUnixPath, " bytes, this one has ",
                   a.path.size());
    SEEDRL_REQUIRE(a.path.find('\0') == std::string::npos, "address '", text,
                   "': the path contains a zero byte");
    return a;
  }
  const std::size_t colon = text.rfind(':');
  SEEDRL_REQUIRE(colon != std::string_view::npos && colon > 0 && colon + 1 < text.size(),
                 "address '", text, "': expected host:port (e.g. 127.0.0.1:8686) or unix:/path");
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.front() == '[') {
    SEEDRL_REQUIRE(host.size() > 2 && host.back() == ']', "address '", text,
                   "': an IPv6 address goes in brackets, as in [::1]:8686");
    host = host.substr(1, host.size() - 2);
  } else {
    SEEDRL_REQUIRE(host.find(':') == std::string_view::npos, "address '", text,
                   "': put an IPv6 address in brackets, as in [::1]:8686");
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  SEEDRL_REQUIRE(ec == std::errc() && end == port.data() + port.size() && value <= 65535,
                 "address '", text, "': port '", port, "' is not a number from 0 to 65535");
  a.host = std::string(host);
  a.port = static_cast<std::uint16_t>(value);
  return a;
}

std::string SocketAddress::to_string() const {
  if (kind == Kind::unix_socket) return str_cat("unix:", path);
  if (host.find(':') != std::string::npos) return str_cat("[", host, "]:", port);
  return str_cat(host, ":", port);
}

}  // namespace seedrl
