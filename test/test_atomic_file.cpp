// core/atomic_file.hpp: a file is replaced whole or not at all, its temporary never collides with
// another writer's and never follows a link, it is private to its owner, and a disk that fails
// (injected) leaves the old file and no temporary behind.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/error.hpp"
#include "support/temp_dir.hpp"
#include "support/write_faults.hpp"

namespace test_atomic_file {

using namespace seedrl;
using test::TempDir;
using test::WriteFaults;

namespace {

unsigned mode_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info.st_mode & 07777;
}

int files_in(const TempDir& dir) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
    (void)entry;
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("atomic file: written whole, private to its owner, unless asked otherwise") {
  TempDir dir("atomic_file");
  const std::string path = dir / "state.bin";
  write_file_atomically(path, "first");
  CHECK(read_file(path) == "first");
  CHECK(mode_of(path) == 0600);
  write_file_atomically(path, "second, longer");
  CHECK(read_file(path) == "second, longer");
  CHECK(files_in(dir) == 1);  // no temporary left
  write_file_atomically(dir / "export.onnx", "model", {}, 0644);
  CHECK(mode_of(dir / "export.onnx") == 0644);
}

TEST_CASE("atomic file: a link at the target is replaced, never followed") {
  TempDir dir("atomic_link");
  const std::string victim = dir / "victim";
  write_file_atomically(victim, "do not touch");
  const std::string path = dir / "checkpoint";
  std::filesystem::create_symlink(victim, path);
  write_file_atomically(path, "new");
  CHECK(read_file(victim) == "do not touch");
  CHECK_FALSE(std::filesystem::is_symlink(path));
  CHECK(read_file(path) == "new");
}

TEST_CASE("atomic file: pending files are unique, and only committed ones replace their target") {
  TempDir dir("atomic_pending");
  const std::string a = dir / "a", b = dir / "b";
  write_file_atomically(a, "old a");
  {
    PendingFile first(a, "new a"), second(a, "newer a"), other(b, "new b");
    CHECK(files_in(dir) == 4);  // a and three temporaries, none sharing a name
    for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
      const std::string name = entry.path().filename().string();
      CHECK(is_pending_file_name(name) == (name != "a"));
      if (name != "a") CHECK(mode_of(entry.path().string()) == 0600);
    }
    other.commit();
    CHECK(other.committed());
    CHECK(read_file(a) == "old a");  // nothing committed yet
  }
  CHECK(read_file(a) == "old a");
  CHECK(read_file(b) == "new b");
  CHECK(files_in(dir) == 2);  // the uncommitted temporaries went with their PendingFiles
  CHECK_FALSE(is_pending_file_name("checkpoint.safetensors"));
  CHECK_FALSE(is_pending_file_name("x.tmp.12.0123456789abcdeF"));
  CHECK_FALSE(is_pending_file_name("x.tmp.12.0123456789abcde"));
  CHECK(is_pending_file_name("x.tmp.12.0123456789abcdef"));
}

TEST_CASE("atomic file: a full disk leaves the old file and no temporary, and names the reason") {
  TempDir dir("atomic_full");
  const std::string path = dir / "run_info.json";
  write_file_atomically(path, "{}");
  for (const char* operation : {"create", "write", "sync", "rename"}) {
    CAPTURE(operation);
    WriteFaults disk(dir.path.string(), operation);
    CHECK_THROWS_WITH_AS(write_file_atomically(path, "{\"a\": 1}"),
                         doctest::Contains("No space left on device"), Error);
    CHECK(disk.injected() == 1);
    CHECK(read_file(path) == "{}");
    CHECK(files_in(dir) == 1);
  }
  // And once it has room again, the write goes through.
  write_file_atomically(path, "{\"a\": 1}");
  CHECK(read_file(path) == "{\"a\": 1}");
}

TEST_CASE("atomic file: private directories are created 0700; existing ones keep their mode") {
  TempDir dir("atomic_dirs");
  const std::string deep = dir / "run/a/b";
  create_private_directories(deep);
  CHECK(mode_of(dir / "run") == 0700);
  CHECK(mode_of(deep) == 0700);
  ::chmod(deep.c_str(), 0755);
  create_private_directories(deep);
  CHECK(mode_of(deep) == 0755);
  write_file_atomically(dir / "file", "x");
  CHECK_THROWS_WITH_AS(create_private_directories(dir / "file"),
                       doctest::Contains("is not a directory"), Error);
}

}  // namespace test_atomic_file
