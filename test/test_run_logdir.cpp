// A run's logdir (session/run_logdir.hpp, io/logdir_lock.hpp): it is the run's alone (a second
// run on it is refused by name), and a disk that fails (every writer, injected; or a small tmpfs
// that fills and frees again) neither ends the run nor touches the older checkpoints, until
// max_checkpoint_failures in a row; a resume then takes a checkpoint with its own replay. (Also
// run under ThreadSanitizer in CI.)
#include <doctest/doctest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/agents/sac.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/logdir_lock.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "seedrl/session/run_logdir.hpp"
#include "support/sac_fixtures.hpp"
#include "support/temp_dir.hpp"
#include "support/write_faults.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_run_logdir {

using namespace seedrl;
using Backend = cpu::Backend;
using test::TempDir;

namespace {

// SAC on the bandit (support/sac_fixtures.hpp), its replay checkpointed.
SacAgent bandit_agent() {
  SacAgentOptions o = test::sac::bandit_options();
  o.checkpoint_replay = true;
  return SacAgent(o);
}

LocalTrainerOptions bandit_run(std::int64_t frames, const std::string& logdir,
                               std::vector<std::string>* lines) {
  LocalTrainerOptions run;
  run.total_frames = frames;
  run.num_actors = 1;
  run.envs_per_actor = 4;
  run.server.unroll_length = 1;
  run.server.seed = 7;
  run.logdir = logdir;
  run.checkpoint_seconds = 0.2;
  run.report_seconds = 0.05;
  run.messages = [lines](io::MessageKind, std::string_view line) { lines->emplace_back(line); };
  return run;
}

TrainingResult train(const LocalTrainerOptions& run) {
  return train_locally<SacAgent, Backend>(
      bandit_agent(), [](std::int32_t, std::int32_t) { return test::sac::Bandit(); }, run);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

int lines_with(const std::vector<std::string>& lines, const std::string& part) {
  int n = 0;
  for (const std::string& line : lines) n += line.find(part) != std::string::npos ? 1 : 0;
  return n;
}

// Every generation of the logdir's checkpoint (of at least `count`) loads with the replay it names.
void check_generations(const std::string& logdir, std::size_t count) {
  const std::vector<std::string> generations =
      io::checkpoint_generations(logdir + "/checkpoint.safetensors");
  CHECK(generations.size() >= count);
  for (const std::string& generation : generations) {
    CAPTURE(generation);
    const io::SafetensorsFile file = io::SafetensorsFile::read(generation);
    CHECK(io::checkpoint_counters(file).frames > 0);
    CHECK(io::read_replay_of(file).has_value());
  }
}

}  // namespace

TEST_CASE("logdir lock: a second holder is refused by name until the first lets go") {
  TempDir dir("logdir_lock");
  const std::string logdir = dir / "run";
  // What a crash left behind: a temporary file of an unfinished write.
  std::filesystem::create_directories(logdir);
  std::ofstream(logdir + "/checkpoint.safetensors.tmp.99.0123456789abcdef") << "torn";
  {
    io::LogdirLock first(logdir);
    CHECK(first.removed_temporaries() == 1);
    CHECK(read_file(first.path()).starts_with(str_cat("process ", ::getpid(), " on ")));
    const std::string in_use = str_cat(logdir, ": the logdir is in use by process ", ::getpid());
    CHECK_THROWS_WITH_AS(io::LogdirLock{logdir}, doctest::Contains(in_use.c_str()), Error);
  }
  io::LogdirLock again(logdir);  // the first let go
  CHECK(again.removed_temporaries() == 0);
}

TEST_CASE("RunLogdir: a failed checkpoint is said and tried again; N in a row end the run") {
  TempDir dir("run_logdir");
  RunLogdir logdir(dir / "run", 3);
  std::vector<std::string> said;
  auto say = [&](std::string_view line) { said.emplace_back(line); };
  auto failing = [] { fail("checkpoint.safetensors: write failed: No space left on device"); };
  CHECK_FALSE(logdir.checkpoint(failing, say));
  CHECK_FALSE(logdir.checkpoint(failing, say));
  REQUIRE(said.size() == 2);
  CHECK(said[0].find("warning: the checkpoint was not written (1 of 3 failures in a row allowed): "
                     "checkpoint.safetensors: write failed: No space left on device") == 0);
  CHECK(said[1].find("(2 of 3 failures") != std::string::npos);
  CHECK(logdir.checkpoint([] {}, say));
  CHECK(said.back() == "the checkpoint was written again after 2 failures");
  CHECK(logdir.failures_in_a_row() == 0);
  CHECK_FALSE(logdir.checkpoint(failing, say));
  CHECK_FALSE(logdir.checkpoint(failing, say));
  CHECK_THROWS_WITH_AS(logdir.checkpoint(failing, say),
                       doctest::Contains("the checkpoint failed 3 times in a row"), Error);
  // Without a logdir nothing is written and nothing fails.
  RunLogdir none("", 3);
  CHECK_FALSE(none.active());
  CHECK(none.checkpoint(failing, say));
}

TEST_CASE("TrainingSession: a second run on a logdir in use is refused") {
  TempDir dir("session_lock");
  std::vector<std::string> lines;
  const TrainingSessionOptions run = bandit_run(1'000, dir / "run", &lines).session();
  TrainingSession<SacAgent, Backend> first(
      bandit_agent(), StepSpec{{{1}, DType::f32}, ActionSpec::box(1, -1, 1), {}}, run);
  CHECK_THROWS_WITH_AS(
      (TrainingSession<SacAgent, Backend>(
          bandit_agent(), StepSpec{{{1}, DType::f32}, ActionSpec::box(1, -1, 1), {}}, run)),
      doctest::Contains("the logdir is in use by process"), Error);
}

TEST_CASE(
    "TrainingSession: every writer failing for a while neither ends the run nor its "
    "checkpoints; a resume takes a checkpoint with its own replay") {
  TempDir dir("session_disk_faults");
  const std::string logdir = dir / "run";
  std::vector<std::string> lines;
  LocalTrainerOptions run = bandit_run(3'000, logdir, &lines);
  run.max_checkpoint_failures = 30;  // this test is about the run going on
  test::WriteFaults disk(logdir, {}, ENOSPC, /*on=*/false);
  // The disk fails for 16 reports (most of a second: several checkpoints, rows and events), on the
  // thread that writes, so that every writer meets it. It starts at the 4th report or later, once
  // the first checkpoint is on disk: started at the 4th report alone (0.2 s in, when the first
  // checkpoint is due), it came before that checkpoint in a loaded test run, and the run then had
  // one generation only. (The run's last report, at its frame budget, frees it in any case: the
  // final checkpoint would otherwise wait on it for a thousand tries.)
  int reports = 0, full_reports = 0;
  run.on_report = [&](const RunReport::Row& row) {
    ++reports;
    if (full_reports == 0 && reports >= 4 &&
        std::filesystem::exists(logdir + "/checkpoint.safetensors")) {
      disk.set(true);
      full_reports = 1;
    } else if (full_reports > 0 && ++full_reports == 17) {
      disk.set(false);
    }
    if (row.frames >= run.total_frames) disk.set(false);
  };
  const TrainingResult result = train(run);
  const std::string said = joined(lines);
  CAPTURE(said);
  CHECK(result.frames >= 3'000);
  CHECK(disk.injected() > 0);
  CHECK(lines_with(lines, "warning: the checkpoint was not written") >= 1);
  CHECK(lines_with(lines, "the checkpoint was written again after") == 1);
  CHECK(lines_with(lines, "metrics.csv: write failed: No space left on device") == 1);
  CHECK(lines_with(lines, "metrics.csv: written again") == 1);
  // Every row reached metrics.csv whole, the ones of the full disk too.
  std::ifstream csv(logdir + "/metrics.csv");
  std::string header, line;
  std::getline(csv, header);
  const auto columns = std::count(header.begin(), header.end(), ',');
  int rows = 0;
  while (std::getline(csv, line)) {
    CHECK(std::count(line.begin(), line.end(), ',') == columns);
    ++rows;
  }
  CHECK(rows >= reports);
  check_generations(logdir, 2);

  // The newest checkpoint's replay is damaged: the resume falls back to the pair before it.
  const io::SafetensorsFile newest = io::SafetensorsFile::read(logdir + "/checkpoint.safetensors");
  const std::string replay = logdir + "/" + newest.metadata().at("replay");
  write_file_atomically(replay, read_file(replay) + "x");
  lines.clear();
  const TrainingResult resumed = train(bandit_run(result.frames + 500, logdir, &lines));
  const std::string said_on_resume = joined(lines);
  CAPTURE(said_on_resume);
  CHECK(resumed.resumed);
  // (An older generation may share the replay, when no transition came between the two.)
  CHECK(lines_with(lines, "skipped a newer checkpoint that does not load") >= 1);
  CHECK(lines_with(lines, "its replay " + replay + " fails its checksum") >= 1);  // by name
  CHECK(lines_with(lines, "resumed from " + logdir + "/checkpoint.") == 1);
  CHECK(lines_with(lines, "resumed from " + logdir + "/checkpoint.safetensors") == 0);
}

TEST_CASE("TrainingSession: checkpoints that keep failing end the run, saying why") {
  TempDir dir("session_disk_gone");
  const std::string logdir = dir / "run";
  std::vector<std::string> lines;
  LocalTrainerOptions run = bandit_run(1'000'000, logdir, &lines);
  run.max_checkpoint_failures = 2;
  test::WriteFaults disk(logdir + "/checkpoint", {}, EIO);
  CHECK_THROWS_WITH_AS(train(run),
                       doctest::Contains("the checkpoint failed 2 times in a row (the limit, "
                                         "TrainingSessionOptions::max_checkpoint_failures"),
                       Error);
  const std::string said = joined(lines);
  CAPTURE(said);
  CHECK(lines_with(lines, "(1 of 2 failures in a row allowed)") == 1);
  CHECK(lines_with(lines, "Input/output error") >= 1);
}

TEST_CASE("TrainingSession: a logdir on a small file system that fills and frees again") {
  TempDir dir("session_tmpfs");
  const std::string mount = dir / "disk";
  std::filesystem::create_directories(mount);
  if (::mount("tmpfs", mount.c_str(), "tmpfs", 0, "size=4m") != 0) {
    MESSAGE("cannot mount a tmpfs here (", std::strerror(errno), "): nothing to test");
    return;
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount(path.c_str()); }
  } unmount{mount};
  const std::string logdir = mount + "/run";
  std::vector<std::string> lines;
  LocalTrainerOptions run = bandit_run(3'000, logdir, &lines);
  run.max_checkpoint_failures = 30;
  const std::string filler = mount + "/filler";
  int reports = 0;
  run.on_report = [&](const RunReport::Row& row) {
    if (++reports == 10) {  // fill the disk to its last byte, after a checkpoint or two
      std::ofstream out(filler, std::ios::binary);
      const std::string block(1 << 16, '\0');
      while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) {
      }
    }
    // Freed after 16 reports, or by the run's last (see the test above).
    if (reports == 26 || row.frames >= run.total_frames) std::filesystem::remove(filler);
  };
  const TrainingResult result = train(run);
  const std::string said = joined(lines);
  CAPTURE(said);
  CHECK(result.frames >= 3'000);
  CHECK(lines_with(lines, "No space left on device") >= 1);
  std::ifstream csv(logdir + "/metrics.csv");
  std::string header, line;
  std::getline(csv, header);
  const auto columns = std::count(header.begin(), header.end(), ',');
  while (std::getline(csv, line)) CHECK(std::count(line.begin(), line.end(), ',') == columns);
  check_generations(logdir, 2);
  for (const auto& entry : std::filesystem::directory_iterator(logdir))
    CHECK_FALSE(is_pending_file_name(entry.path().filename().string()));
  lines.clear();
  CHECK(train(bandit_run(result.frames + 500, logdir, &lines)).resumed);
}

}  // namespace test_run_logdir
