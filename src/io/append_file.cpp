#include "append_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "seedrl/core/atomic_file.hpp"

namespace seedrl::io {

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

int AppendFile::open_file() {
  if (fd_ >= 0) return 0;
  if (const int injected = injected_write_fault(path_, "create")) return injected;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) return errno;
  struct stat info {};
  had_content_ = ::fstat(fd_, &info) == 0 && info.st_size > 0;
  return 0;
}

int AppendFile::append(std::string_view record) {
  if (!record.empty()) {
    pending_.emplace_back(record);
    pending_bytes_ += record.size();
    while (pending_bytes_ > max_pending_bytes_ && pending_.size() > 1) {
      pending_bytes_ -= pending_.front().size();
      pending_.pop_front();
      ++dropped_;
    }
  }
  if (pending_.empty()) return 0;
  if (const int error = open_file()) return error;
  while (!pending_.empty()) {
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) return errno;
    if (const int error = write_fully(fd_, pending_.front(), path_)) {
      // Whatever part of the record reached the file is cut off: the record goes again, whole.
      // (Should even that fail, the next write starts after the torn part.)
      (void)::ftruncate(fd_, end);
      return error;
    }
    pending_bytes_ -= pending_.front().size();
    pending_.pop_front();
  }
  return 0;
}

}  // namespace seedrl::io
