#include "seedrl/io/metrics_logger.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/io/tensorboard.hpp"

#include "json.hpp"

namespace seedrl::io {

MetricsLogger::MetricsLogger(std::string logdir, const MetricsOptions& options)
    : logdir_(std::move(logdir)), options_(options) {
  if (logdir_.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(logdir_, error);
  SEEDRL_REQUIRE(!error, logdir_, ": cannot create the log directory: ", error.message());
  if (options_.tensorboard) tensorboard_ = std::make_unique<TensorBoardWriter>(logdir_);
}

MetricsLogger::~MetricsLogger() {
  if (csv_) std::fclose(csv_);
}

void MetricsLogger::write_run_info(const RunInfo& info) {
  if (info.empty() || logdir_.empty()) return;
  const std::string path = run_info_path();
  json::Value merged = json::Value::object();
  if (std::filesystem::exists(path)) {
    // The first of duplicate names is the one readers see; a value that is not a string is kept
    // as an empty string.
    const json::Value old = json::parse(read_file(path), path);
    for (const auto& [key, value] : json::as_object(old, path))
      if (!merged.contains(key)) merged[key] = value.is_string() ? value : json::Value("");
  }
  for (const auto& [key, value] : info) merged[key] = value;
  write_file_atomically(path, json::dump(merged, path, 1) + "\n");
}

void MetricsLogger::log(std::int64_t step, std::span<const Scalar> scalars) {
  if (logdir_.empty()) return;
  if (columns_.empty()) {
    for (const Scalar& s : scalars) columns_.emplace_back(s.first);
    const std::string path = csv_path();
    const bool existed = std::filesystem::exists(path);
    csv_ = std::fopen(path.c_str(), "a");
    SEEDRL_REQUIRE(csv_ != nullptr, path, ": cannot open for appending: ", std::strerror(errno));
    if (!existed || std::filesystem::file_size(path) == 0) {
      std::fprintf(csv_, "step");
      for (const std::string& c : columns_) std::fprintf(csv_, ",%s", c.c_str());
      std::fprintf(csv_, "\n");
    }
  }
  // Check the whole row before writing any of it: a bad row never leaves half a line behind.
  SEEDRL_REQUIRE(scalars.size() == columns_.size(), csv_path(), ": row of ", scalars.size(),
                 " values for ", columns_.size(), " columns");
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    SEEDRL_REQUIRE(scalars[i].first == columns_[i], csv_path(), ": column ", i, " is '",
                   columns_[i], "', got '", scalars[i].first, "'");
  }
  std::fprintf(csv_, "%lld", static_cast<long long>(step));
  for (const Scalar& s : scalars) {
    std::fprintf(csv_, ",%.9g", s.second);
    if (tensorboard_) tensorboard_->scalar(s.first, static_cast<float>(s.second), step);
  }
  std::fprintf(csv_, "\n");
  SEEDRL_REQUIRE(std::fflush(csv_) == 0, csv_path(), ": write failed: ", std::strerror(errno));
  if (tensorboard_) tensorboard_->flush();
}

void MetricsLogger::flush() {
  if (csv_) std::fflush(csv_);
  if (tensorboard_) tensorboard_->flush();
}

}  // namespace seedrl::io
