#include <doctest/doctest.h>

#include <filesystem>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/io/metrics_logger.hpp"

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

}  // namespace test_metrics_logger
