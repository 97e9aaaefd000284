#include "seedrl/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "seedrl/core/error.hpp"

namespace seedrl {

namespace {

std::atomic<WriteFaultHook> write_fault_hook{nullptr};

// 16 hex digits no other writer of this directory picks.
std::string random_suffix() {
  thread_local std::mt19937_64 engine{std::random_device{}() ^
                                      (static_cast<std::uint64_t>(::getpid()) << 32)};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(engine()));
  return text;
}

constexpr std::string_view kPendingMarker = ".tmp.";

}  // namespace

void set_write_fault_hook(WriteFaultHook hook) {
  write_fault_hook.store(hook);
}

int injected_write_fault(const std::string& path, std::string_view operation) {
  const WriteFaultHook hook = write_fault_hook.load();
  return hook ? hook(path, operation) : 0;
}

int write_fully(int fd, std::string_view data, const std::string& path) {
  if (const int injected = injected_write_fault(path, "write")) return injected;
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

void create_private_directories(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path built;
  for (const fs::path& part : fs::path(path)) {
    built /= part;
    if (built.empty() || fs::is_directory(built, error)) continue;
    if (::mkdir(built.c_str(), 0700) != 0 && errno != EEXIST)
      fail(path, ": cannot create the directory ", built.string(), ": ", std::strerror(errno));
  }
  SEEDRL_REQUIRE(fs::is_directory(path, error), path, ": is not a directory");
}

int sync_parent_directory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string directory = parent.empty() ? std::string(".") : parent.string();
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int result = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return result;
}

PendingFile::PendingFile(std::string path, std::string_view contents, mode_t mode)
    : path_(std::move(path)) {
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    temporary_ = str_cat(path_, kPendingMarker, ::getpid(), ".", random_suffix());
    if (const int injected = injected_write_fault(path_, "create")) {
      errno = injected;
      break;
    }
    fd = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  SEEDRL_REQUIRE(fd >= 0, temporary_, ": cannot create: ", std::strerror(errno));
  int error = write_fully(fd, contents, path_);
  const char* what = "write";
  if (error == 0) {
    what = "flush";
    error = injected_write_fault(path_, "sync");
    if (error == 0 && ::fsync(fd) != 0) error = errno;
  }
  if (::close(fd) != 0 && error == 0) {
    what = "flush";
    error = errno;
  }
  if (error != 0) {
    ::unlink(temporary_.c_str());
    fail(temporary_, ": ", what, " failed: ", std::strerror(error));
  }
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : path_(std::move(other.path_)),
      temporary_(std::move(other.temporary_)),
      committed_(std::exchange(other.committed_, true)) {}

PendingFile::~PendingFile() {
  if (!committed_) ::unlink(temporary_.c_str());
}

void PendingFile::commit() {
  SEEDRL_REQUIRE(!committed_, path_, ": PendingFile committed twice");
  int error = injected_write_fault(path_, "rename");
  if (error == 0 && std::rename(temporary_.c_str(), path_.c_str()) != 0) error = errno;
  if (error != 0) fail(path_, ": cannot replace with ", temporary_, ": ", std::strerror(error));
  committed_ = true;
  if (const int sync_error = sync_parent_directory(path_))
    fail(path_,
         ": written, but its directory could not be flushed to disk: ", std::strerror(sync_error));
}

bool is_pending_file_name(std::string_view name) {
  const std::size_t marker = name.rfind(kPendingMarker);
  if (marker == std::string_view::npos || marker == 0) return false;
  const std::string_view rest = name.substr(marker + kPendingMarker.size());
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || rest.size() - dot - 1 != 16) return false;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    const bool ok = i < dot   ? (c >= '0' && c <= '9')
                    : i > dot ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
                              : true;
    if (!ok) return false;
  }
  return true;
}

void write_file_atomically(const std::string& path, std::string_view contents,
                           const std::function<void()>& before_replace, mode_t mode) {
  PendingFile file(path, contents, mode);
  if (before_replace) before_replace();  // if it throws, the temporary goes with `file`
  file.commit();
}

}  // namespace seedrl
