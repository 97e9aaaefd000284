// Helpers shared by the benchmarks: timing and JSON result lines.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace seedrl::bench {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// When the program's first progress line was written.
inline double progress_start() {
  static const double start = now_seconds();
  return start;
}

/// A progress line on stderr: "[12.34 s] mode model: what..." (time since the first line).
template <class... Parts>
void progress(const char* mode, const std::string& model, const Parts&... parts) {
  const double start = progress_start();
  std::ostringstream line;
  line << "[" << std::fixed;
  line.precision(2);
  line << now_seconds() - start << " s] " << mode << " " << model << ": ";
  line << std::defaultfloat;
  line.precision(6);
  (line << ... << parts);
  std::fprintf(stderr, "%s\n", line.str().c_str());
}

/// Warm-up calls of the model benchmarks: more than the CUDA backend's default
/// cuda::conv_measure_after() (8), so the timed calls run measured convolution algorithms.
inline constexpr int kModelWarmup = 10;

/// Mean seconds per call of `body`, after `warmup` calls, repeating for at least `min_seconds`
/// and at least `min_calls` times.
template <class F>
double time_per_call(F&& body, double min_seconds, int warmup = 2, int min_calls = 3) {
  for (int i = 0; i < warmup; ++i) body();
  int calls = 0;
  const double start = now_seconds();
  double elapsed = 0.0;
  while (calls < min_calls || elapsed < min_seconds) {
    body();
    ++calls;
    elapsed = now_seconds() - start;
  }
  return elapsed / calls;
}

/// Builds one JSON object from key/value pairs, in order.
class Json {
 public:
  Json& add(const std::string& key, const std::string& value) {
    return raw(key, "\"" + value + "\"");
  }
  Json& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  Json& add(const std::string& key, double value) {
    std::ostringstream out;
    out.precision(6);
    out << value;
    return raw(key, out.str());
  }
  Json& add(const std::string& key, long long value) { return raw(key, std::to_string(value)); }
  Json& add(const std::string& key, int value) { return raw(key, std::to_string(value)); }
  Json& raw(const std::string& key, const std::string& json) {
    fields_.push_back("\"" + key + "\":" + json);
    return *this;
  }
  std::string str() const {
    std::string s = "{";
    for (std::size_t i = 0; i < fields_.size(); ++i) s += (i ? "," : "") + fields_[i];
    return s + "}";
  }
  void print() const {
    std::printf("%s\n", str().c_str());
    std::fflush(stdout);
  }

 private:
  std::vector<std::string> fields_;
};

}  // namespace seedrl::bench
