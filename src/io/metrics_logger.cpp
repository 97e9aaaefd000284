#include "seedrl/io/metrics_logger.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "append_file.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/io/tensorboard.hpp"

#include "json.hpp"

namespace seedrl::io {

MetricsLogger::MetricsLogger(std::string logdir, const MetricsOptions& options,
                             FileFaultSink faults)
    : logdir_(std::move(logdir)), options_(options), faults_(std::move(faults)) {
  if (logdir_.empty()) return;
  create_private_directories(logdir_);
  csv_ = std::make_unique<AppendFile>(csv_path());
  if (options_.tensorboard) {
    tensorboard_ = std::make_unique<TensorBoardWriter>(logdir_);
    report(tensorboard_health_, tensorboard_->path(), tensorboard_->flush(), "its events wait");
  }
}

MetricsLogger::~MetricsLogger() = default;

void MetricsLogger::report(Health& health, const std::string& path, int error,
                           std::string_view what_waits) {
  if (error != 0 && !health.failing) {
    health.failing = true;
    if (faults_)
      faults_(str_cat("warning: ", path, ": write failed: ", std::strerror(error),
                      what_waits.empty() ? "" : "; ", what_waits,
                      what_waits.empty() ? "" : " in memory and go out once it works again",
                      "; training goes on"));
  } else if (error == 0 && health.failing) {
    health.failing = false;
    if (faults_) faults_(str_cat(path, ": written again"));
  }
}

bool MetricsLogger::write_run_info(const RunInfo& info) {
  if (info.empty() || logdir_.empty()) return true;
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
  const std::string text = json::dump(merged, path, 1) + "\n";
  try {
    write_file_atomically(path, text);
  } catch (const Error& e) {
    if (!run_info_health_.failing && faults_)
      faults_(str_cat("warning: ", e.what(), "; training goes on without it"));
    run_info_health_.failing = true;
    return false;
  }
  report(run_info_health_, path, 0, "");
  return true;
}

void MetricsLogger::log(std::int64_t step, std::span<const Scalar> scalars) {
  if (logdir_.empty()) return;
  std::string row;
  if (columns_.empty()) {
    for (const Scalar& s : scalars) columns_.emplace_back(s.first);
    // The header, once per file: a resumed run appends its rows under the first run's.
    bool existed = false;
    std::error_code error;
    existed = std::filesystem::file_size(csv_path(), error) > 0 && !error;
    if (!existed) {
      row = "step";
      for (const std::string& c : columns_) row += "," + c;
      row += "\n";
    }
  }
  // Check the whole row before writing any of it: a bad row never leaves half a line behind.
  SEEDRL_REQUIRE(scalars.size() == columns_.size(), csv_path(), ": row of ", scalars.size(),
                 " values for ", columns_.size(), " columns");
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    SEEDRL_REQUIRE(scalars[i].first == columns_[i], csv_path(), ": column ", i, " is '",
                   columns_[i], "', got '", scalars[i].first, "'");
  }
  char value[32];
  row += std::to_string(step);
  for (const Scalar& s : scalars) {
    std::snprintf(value, sizeof value, ",%.9g", s.second);
    row += value;
    if (tensorboard_) tensorboard_->scalar(s.first, static_cast<float>(s.second), step);
  }
  row += "\n";
  report(csv_health_, csv_path(), csv_->append(row), "its rows wait");
  if (tensorboard_)
    report(tensorboard_health_, tensorboard_->path(), tensorboard_->flush(), "its events wait");
}

bool MetricsLogger::flush() {
  if (logdir_.empty()) return true;
  report(csv_health_, csv_path(), csv_->flush(), "its rows wait");
  if (tensorboard_)
    report(tensorboard_health_, tensorboard_->path(), tensorboard_->flush(), "its events wait");
  return !csv_health_.failing && !tensorboard_health_.failing;
}

}  // namespace seedrl::io
