#include "seedrl/transport/token.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "seedrl/core/error.hpp"
#include "seedrl/transport/protocol.hpp"

namespace seedrl {

std::string read_token_file(const std::string& path, std::string_view setting) {
  SEEDRL_REQUIRE(!path.empty(), setting, ": the token file's path is empty");
  // O_NOFOLLOW is not used: a secret mounted by an orchestrator is often a symbolic link. The
  // mode checked is the target's, which is the file that is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  SEEDRL_REQUIRE(fd >= 0, setting, ": cannot open '", path, "': ", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  SEEDRL_REQUIRE(::fstat(fd, &info) == 0, setting, ": cannot read '", path,
                 "': ", std::strerror(errno));
  SEEDRL_REQUIRE(S_ISREG(info.st_mode), setting, ": '", path, "' is not a regular file");
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  SEEDRL_REQUIRE((info.st_mode & (S_IRWXG | S_IRWXO)) == 0, setting, ": '", path,
                 "' may be read or written by other users (mode ", mode,
                 "); a token file must be private to its owner: chmod 600 ", path);
  // The first line is the token; anything longer than a token (plus its line end) is refused.
  constexpr std::size_t kLimit = protocol::kMaxTokenBytes + 2;
  std::string text(kLimit + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    SEEDRL_REQUIRE(n >= 0, setting, ": cannot read '", path, "': ", std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  const std::size_t end = text.find_first_of("\r\n");
  std::string token = text.substr(0, end);
  SEEDRL_REQUIRE(end != std::string::npos || got <= protocol::kMaxTokenBytes, setting, ": '", path,
                 "' holds more than ", protocol::kMaxTokenBytes,
                 " bytes on its first line; a token is at most that long");
  SEEDRL_REQUIRE(token.size() <= protocol::kMaxTokenBytes, setting, ": the token in '", path,
                 "' has ", token.size(), " bytes; at most ", protocol::kMaxTokenBytes,
                 " are allowed");
  SEEDRL_REQUIRE(!token.empty(), setting, ": '", path,
                 "' holds no token (its first line is empty)");
  return token;
}

std::string resolve_token(const TokenSources& sources) {
  SEEDRL_REQUIRE(sources.given.empty() || sources.file.empty(), sources.given_setting, " and ",
                 sources.file_setting, " both give a token: give one of them");
  if (!sources.given.empty()) return sources.given;
  if (!sources.file.empty()) return read_token_file(sources.file, sources.file_setting);
  if (sources.environment)
    if (const char* value = std::getenv(kTokenEnvironmentVariable)) return value;
  return {};
}

}  // namespace seedrl
