// A fresh directory under the system's temporary directory for one test, removed with it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace seedrl::test {

struct TempDir {
  std::filesystem::path path;
  /// <tmp>/seedrl_<name>_<pid>, emptied and created.
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("seedrl_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& file) const { return (path / file).string(); }
};

}  // namespace seedrl::test
