// TensorBoardWriter: scalar summaries in TensorBoard's event-file format, written without
// TensorFlow: TFRecord framing (u64 length, masked CRC-32C of the length, data, masked CRC-32C of
// the data) around Event protocol buffers (wall_time, step, file_version or Summary{Value{tag,
// simple_value}}). `tensorboard --logdir <dir>` shows the run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace seedrl::io {

class AppendFile;

/// TFRecord's masked CRC-32C: rotate right by 15 and add a constant.
std::uint32_t masked_crc32c(const void* data, std::size_t size);

/// Appends one TFRecord to `out`.
void append_tfrecord(std::string& out, std::string_view record);

/// Protocol-buffer encoding of an Event holding one scalar Summary value.
std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag,
                                float value);
/// The first Event of a file: its format version ("brain.Event:2").
std::string encode_file_version_event(double wall_time);

/// Writes events.out.tfevents.<seconds>.<host>.<pid>.<n> in `logdir` (mode 0600). Each call to
/// scalar() appends to an in-memory buffer; flush() writes it to the file as whole records (the
/// destructor flushes). A write that fails leaves the file at its last whole record and keeps the
/// records for the next flush (io/append_file: up to 16 MiB of them). Not thread-safe.
class TensorBoardWriter {
 public:
  explicit TensorBoardWriter(const std::string& logdir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void scalar(std::string_view tag, float value, std::int64_t step);
  /// Returns 0, or the errno of a write that failed (the records wait for the next flush).
  int flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<AppendFile> file_;
  std::string pending_;
};

}  // namespace seedrl::io
