#include "seedrl/io/tensorboard.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl::io {

namespace {

// Protocol-buffer wire format pieces.
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<std::uint64_t>(field << 3 | wire_type));
}
void put_bytes_field(std::string& out, int field, std::string_view bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}
template <class T>
void put_fixed(std::string& out, T value) {
  value = detail::to_little_endian(value);
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::uint32_t masked_crc32c(const void* data, std::size_t size) {
  const std::uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void append_tfrecord(std::string& out, std::string_view record) {
  std::string length;
  put_fixed<std::uint64_t>(length, record.size());
  out += length;
  put_fixed<std::uint32_t>(out, masked_crc32c(length.data(), length.size()));
  out.append(record);
  put_fixed<std::uint32_t>(out, masked_crc32c(record.data(), record.size()));
}

std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag,
                                float value) {
  std::string summary_value;  // Summary.Value: tag = 1, simple_value = 2
  put_bytes_field(summary_value, 1, tag);
  put_tag(summary_value, 2, 5);
  put_fixed<float>(summary_value, value);
  std::string summary;  // Summary: repeated Value value = 1
  put_bytes_field(summary, 1, summary_value);
  std::string event;  // Event: wall_time = 1, step = 2, summary = 5
  put_tag(event, 1, 1);
  put_fixed<double>(event, wall_time);
  put_tag(event, 2, 0);
  put_varint(event, static_cast<std::uint64_t>(step));
  put_bytes_field(event, 5, summary);
  return event;
}

std::string encode_file_version_event(double wall_time) {
  std::string event;  // Event: wall_time = 1, file_version = 3
  put_tag(event, 1, 1);
  put_fixed<double>(event, wall_time);
  put_bytes_field(event, 3, "brain.Event:2");
  return event;
}

TensorBoardWriter::TensorBoardWriter(const std::string& logdir) {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  // Unique per writer even within one second and process (TensorBoard reads every such file).
  static std::atomic<int> counter{0};
  const auto seconds = static_cast<long long>(now_seconds());
  path_ =
      str_cat(logdir, "/events.out.tfevents.", seconds, ".", host, ".", ::getpid(), ".", counter++);
  file_ = std::fopen(path_.c_str(), "wb");
  SEEDRL_REQUIRE(file_ != nullptr, path_,
                 ": cannot create TensorBoard event file: ", std::strerror(errno));
  append_tfrecord(pending_, encode_file_version_event(now_seconds()));
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    flush();
  } catch (
      ...) {  // a destructor must not throw; the error was already reported by an earlier flush()
  }
  if (file_) std::fclose(file_);
}

void TensorBoardWriter::scalar(std::string_view tag, float value, std::int64_t step) {
  append_tfrecord(pending_, encode_scalar_event(now_seconds(), step, tag, value));
}

void TensorBoardWriter::flush() {
  if (!file_ || pending_.empty()) return;
  const bool ok = std::fwrite(pending_.data(), 1, pending_.size(), file_) == pending_.size() &&
                  std::fflush(file_) == 0;
  pending_.clear();
  SEEDRL_REQUIRE(ok, path_, ": write failed: ", std::strerror(errno));
}

}  // namespace seedrl::io
