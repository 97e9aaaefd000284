#include "seedrl/io/tensorboard.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "append_file.hpp"
#include "protobuf.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl::io {

namespace {

using proto::Message;
using proto::put_fixed;

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
  Message summary_value;  // Summary.Value: tag = 1, simple_value = 2
  summary_value.bytes(1, tag).float32(2, value);
  Message summary;  // Summary: repeated Value value = 1
  summary.message(1, summary_value);
  Message event;  // Event: wall_time = 1, step = 2, summary = 5
  event.float64(1, wall_time).integer(2, step).message(5, summary);
  return event.take();
}

std::string encode_file_version_event(double wall_time) {
  Message event;  // Event: wall_time = 1, file_version = 3
  event.float64(1, wall_time).bytes(3, "brain.Event:2");
  return event.take();
}

TensorBoardWriter::TensorBoardWriter(const std::string& logdir) {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  // Unique per writer even within one second and process (TensorBoard reads every such file).
  static std::atomic<int> counter{0};
  const auto seconds = static_cast<long long>(now_seconds());
  path_ =
      str_cat(logdir, "/events.out.tfevents.", seconds, ".", host, ".", ::getpid(), ".", counter++);
  file_ = std::make_unique<AppendFile>(path_);
  append_tfrecord(pending_, encode_file_version_event(now_seconds()));
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  flush();  // what cannot be written now is lost with the writer; the run already said why
}

void TensorBoardWriter::scalar(std::string_view tag, float value, std::int64_t step) {
  append_tfrecord(pending_, encode_scalar_event(now_seconds(), step, tag, value));
}

int TensorBoardWriter::flush() {
  // The records of one flush are one record of the file: whole, or not at all.
  const int error = file_->append(pending_);
  pending_.clear();
  return error;
}

}  // namespace seedrl::io
