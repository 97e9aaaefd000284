// Writing a file so that readers never see a torn version: write a temporary file beside it,
// flush it to disk, then rename it over the target (atomic on POSIX file systems).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "seedrl/core/error.hpp"

namespace seedrl {

/// Replaces `path` with `contents` atomically. Throws seedrl::Error naming the path and the OS
/// error; on failure the previous file (if any) is left as it was. `before_replace`, when given,
/// runs once the new contents are on disk, just before they replace `path` (e.g. to move the
/// previous file aside); if it throws, `path` is left as it was.
inline void write_file_atomically(const std::string& path, std::string_view contents,
                                  const std::function<void()>& before_replace = {}) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  SEEDRL_REQUIRE(fd >= 0, temporary, ": cannot create: ", std::strerror(errno));
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      fail(temporary, ": write failed: ", std::strerror(error));
    }
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_error = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) {
    const int error = synced ? errno : sync_error;
    ::unlink(temporary.c_str());
    fail(temporary, ": flush failed: ", std::strerror(error));
  }
  if (before_replace) {
    try {
      before_replace();
    } catch (...) {
      ::unlink(temporary.c_str());
      throw;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(path, ": cannot replace with ", temporary, ": ", std::strerror(error));
  }
}

}  // namespace seedrl
