// ChildProcess: runs a program (an example) as a separate process for multi-process tests, with
// its stdout and stderr in files the test can read while it runs. The destructor kills a child
// still running, so a failing test never leaves processes behind.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace seedrl::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Polls `condition` every 20 ms until it holds (true) or `timeout` passes (false).
inline bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class ChildProcess {
 public:
  /// Starts argv[0] with arguments argv[1..]; stdout and stderr go to the named files.
  ChildProcess(std::vector<std::string> argv, std::string stdout_path, std::string stderr_path)
      : stdout_path_(std::move(stdout_path)), stderr_path_(std::move(stderr_path)) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
      throw std::runtime_error("posix_spawn " + argv[0] + " failed: " + std::to_string(rc));
  }
  ~ChildProcess() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      wait(std::chrono::seconds(10));
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  void send(int signal) const { ::kill(pid_, signal); }

  bool running() {
    if (exit_code_ >= 0) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) record(status);
    return exit_code_ < 0;
  }

  /// Waits for the exit and returns the exit status (128 + signal when killed by one); kills the
  /// child and returns -1 if it has not exited within `timeout`.
  int wait(std::chrono::milliseconds timeout) {
    if (!wait_until([&] { return !running(); }, timeout)) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      record(status);
      return -1;
    }
    return exit_code_;
  }

  std::string out() const { return read_text(stdout_path_); }
  std::string err() const { return read_text(stderr_path_); }

 private:
  void record(int status) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string stdout_path_, stderr_path_;
};

}  // namespace seedrl::testing
