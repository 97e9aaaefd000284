// AppendFile: a file a run appends whole records to (metrics.csv rows, TensorBoard events), which
// survives a failing disk: a record is in the file whole or not at all (a write that fails half
// way is cut back to the last whole record), and the records a full disk refused wait, in order,
// for the next write that succeeds. Past `max_pending_bytes` of them the oldest are dropped (and
// counted), so that a disk that never comes back cannot take the process's memory.
//
// Private to src/io. Not thread-safe: one writer owns it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace seedrl::io {

class AppendFile {
 public:
  static constexpr std::size_t kDefaultMaxPendingBytes = 16u << 20;

  /// Opens `path` for appending when first written (created with mode 0600).
  explicit AppendFile(std::string path, std::size_t max_pending_bytes = kDefaultMaxPendingBytes)
      : path_(std::move(path)), max_pending_bytes_(max_pending_bytes) {}
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  /// Queues `record` (when not empty) and writes every queued record. Returns 0, or the errno of
  /// the failure: then the file ends at its last whole record and the unwritten records stay
  /// queued for the next call.
  int append(std::string_view record);
  /// Writes what is queued (append of nothing).
  int flush() { return append({}); }

  const std::string& path() const { return path_; }
  /// Whether the file existed with some content when it was first opened (a resumed run's).
  bool had_content() const { return had_content_; }
  std::size_t pending_records() const { return pending_.size(); }
  /// Records dropped because max_pending_bytes were queued.
  std::int64_t dropped() const { return dropped_; }

 private:
  int open_file();

  const std::string path_;
  const std::size_t max_pending_bytes_;
  int fd_ = -1;
  bool had_content_ = false;
  std::deque<std::string> pending_;
  std::size_t pending_bytes_ = 0;
  std::int64_t dropped_ = 0;
};

}  // namespace seedrl::io
