#include "seedrl/io/messages.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

namespace seedrl::io {

namespace {

class Console {
 public:
  explicit Console(double plain_progress_seconds)
      : plain_progress_seconds_(plain_progress_seconds), terminal_(::isatty(STDERR_FILENO) != 0) {}

  void write(MessageKind kind, std::string_view line) {
    if (kind == MessageKind::info) {
      end_live_line();
      print(line);
      return;
    }
    if (terminal_) {
      std::fprintf(stderr, "\r%.*s\033[K", static_cast<int>(line.size()), line.data());
      live_line_open_ = true;
      if (kind == MessageKind::done) end_live_line();
      std::fflush(stderr);
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    const bool due =
        last_plain_ == std::chrono::steady_clock::time_point{} ||
        std::chrono::duration<double>(now - last_plain_).count() >= plain_progress_seconds_;
    if (kind == MessageKind::progress && !due) return;
    last_plain_ = now;
    print(line);
  }

 private:
  static void print(std::string_view line) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
    std::fflush(stderr);
  }
  void end_live_line() {
    if (!live_line_open_) return;
    std::fprintf(stderr, "\n");
    live_line_open_ = false;
  }

  const double plain_progress_seconds_;
  const bool terminal_;
  bool live_line_open_ = false;
  std::chrono::steady_clock::time_point last_plain_{};
};

}  // namespace

MessageSink console_sink(double plain_progress_seconds) {
  auto console = std::make_shared<Console>(plain_progress_seconds);
  return [console](MessageKind kind, std::string_view line) { console->write(kind, line); };
}

}  // namespace seedrl::io
