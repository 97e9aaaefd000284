#include "seedrl/io/logdir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl::io {

namespace {

std::string holder_text() {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return str_cat("process ", ::getpid(), " on ", host, " since ", when, "\n");
}

std::string read_holder(int fd) {
  char text[512] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string holder(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\r')) holder.pop_back();
  return holder.empty() ? std::string("another run") : holder;
}

}  // namespace

LogdirLock::LogdirLock(const std::string& logdir) : path_(logdir + "/seedrl.lock") {
  create_private_directories(logdir);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  SEEDRL_REQUIRE(fd_ >= 0, path_, ": cannot open the logdir's lock file: ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = error == EWOULDBLOCK ? read_holder(fd_) : std::string();
    ::close(fd_);
    fd_ = -1;
    SEEDRL_REQUIRE(error != EWOULDBLOCK, logdir, ": the logdir is in use by ", holder, " (", path_,
                   "); give this run another --logdir, or stop that one first");
    fail(path_, ": cannot lock the logdir: ", std::strerror(error));
  }
  const std::string holder = holder_text();
  if (::ftruncate(fd_, 0) == 0) (void)write_fully(fd_, holder, path_);  // who holds it: a courtesy
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(logdir, error)) {
    if (!is_pending_file_name(entry.path().filename().string())) continue;
    std::error_code removed;
    if (std::filesystem::remove(entry.path(), removed)) ++removed_;
  }
}

LogdirLock::~LogdirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace seedrl::io
