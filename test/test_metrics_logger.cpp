#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/io/metrics_logger.hpp"
#include "support/temp_dir.hpp"
#include "support/write_faults.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_metrics_logger {

using namespace seedrl;

TEST_CASE("MetricsLogger: CSV rows flushed as they come, appended when a run resumes") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_metrics";
  std::filesystem::remove_all(dir);
  {
    io::MetricsLogger logger(dir.string());
    const io::Scalar row[] = {{"fps", 100.0}, {"mean_return", 1.5}};
    logger.log(10, row);
    // Readable before the logger closes: nothing is lost if the process dies.
    CHECK(read_file(logger.csv_path()) == "step,fps,mean_return\n10,100,1.5\n");
    const io::Scalar wrong[] = {{"fps", 1.0}, {"other", 2.0}};
    CHECK_THROWS_WITH_AS(logger.log(11, wrong),
                         doctest::Contains("column 1 is 'mean_return', got 'other'"), Error);
  }
  {
    io::MetricsLogger logger(dir.string());
    const io::Scalar row[] = {{"fps", 200.0}, {"mean_return", 2.0}};
    logger.log(20, row);
    logger.flush();
  }
  CHECK(read_file((dir / "metrics.csv").string()) ==
        "step,fps,mean_return\n10,100,1.5\n20,200,2\n");
  int event_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    event_files += entry.path().filename().string().find("tfevents") != std::string::npos;
  CHECK(event_files == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("MetricsLogger: run info as a JSON object, merged when a run resumes") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_run_info";
  std::filesystem::remove_all(dir);
  {
    io::MetricsLogger logger(dir.string());
    logger.write_run_info({{"agent", "r2d2"}, {"atari_profile", "dqn"}, {"note", "say \"hi\""}});
    CHECK(read_file(logger.run_info_path()) ==
          "{\n \"agent\": \"r2d2\",\n \"atari_profile\": \"dqn\",\n \"note\": \"say "
          "\\\"hi\\\"\"\n}\n");
  }
  {
    io::MetricsLogger logger(dir.string());
    logger.write_run_info({{"atari_profile", "machado"}, {"resumed", "true"}});
    CHECK(read_file(logger.run_info_path()) ==
          "{\n \"agent\": \"r2d2\",\n \"atari_profile\": \"machado\",\n \"note\": \"say "
          "\\\"hi\\\"\",\n \"resumed\": \"true\"\n}\n");
  }
  // A damaged file is an error naming it, not a crash.
  write_file_atomically((dir / "run_info.json").string(), "{\"agent\": ");
  io::MetricsLogger logger(dir.string());
  CHECK_THROWS_WITH_AS(logger.write_run_info({{"a", "b"}}), doctest::Contains("run_info.json"),
                       Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "MetricsLogger: a full disk keeps the rows in memory and writes them whole once it has room") {
  test::TempDir dir("metrics_full");
  const std::string logdir = dir / "run";
  std::vector<std::string> said;
  io::MetricsLogger logger(logdir, {}, [&](const std::string& line) { said.push_back(line); });
  auto row = [&](std::int64_t step) {
    const io::Scalar values[] = {{"fps", 10.0 * step}, {"mean_return", 0.5 * step}};
    logger.log(step, values);
  };
  row(1);
  {
    test::WriteFaults disk(logdir);
    for (std::int64_t step = 2; step <= 4; ++step) row(step);
    CHECK(logger.write_run_info({{"agent", "vtrace"}}) == false);
    CHECK_FALSE(logger.flush());
    CHECK(disk.injected() >= 6);
  }
  // Each file's fault was said once, naming it and the reason; nothing torn reached the file.
  REQUIRE(said.size() == 3);
  CHECK(
      said[0].find("metrics.csv: write failed: No space left on device; its rows wait in memory") !=
      std::string::npos);
  CHECK(said[1].find("events.out.tfevents.") != std::string::npos);
  CHECK(said[2].find("run_info.json") != std::string::npos);
  CHECK(read_file(logger.csv_path()) == "step,fps,mean_return\n1,10,0.5\n");
  row(5);
  CHECK(read_file(logger.csv_path()) ==
        "step,fps,mean_return\n1,10,0.5\n2,20,1\n3,30,1.5\n4,40,2\n5,50,2.5\n");
  CHECK(logger.write_run_info({{"agent", "vtrace"}}));
  REQUIRE(said.size() == 6);  // and each recovery once
  CHECK(said[3] == logger.csv_path() + ": written again");
  CHECK(said[5] == logger.run_info_path() + ": written again");
}

TEST_CASE("MetricsLogger: the logdir and its files are readable by their owner only") {
  test::TempDir dir("metrics_modes");
  const std::string logdir = dir / "run";
  io::MetricsLogger logger(logdir);
  const io::Scalar values[] = {{"fps", 1.0}};
  logger.log(1, values);
  logger.write_run_info({{"agent", "vtrace"}});
  auto mode = [](const std::string& path) {
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    return info.st_mode & 0777;
  };
  CHECK(mode(logdir) == 0700);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(logdir)) {
    CAPTURE(entry.path().string());
    CHECK(mode(entry.path().string()) == 0600);
    ++files;
  }
  CHECK(files == 3);  // metrics.csv, the events, run_info.json
}

}  // namespace test_metrics_logger
