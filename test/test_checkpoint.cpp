// Checkpoints: parameters, optimizer state and counters; mismatches are refused before any change.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "support/temp_dir.hpp"
#include "support/write_faults.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_checkpoint {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

struct Model {
  nn::ParameterStore store;
  std::unique_ptr<nn::Optimizer> optimizer;
  Model(std::uint64_t seed, std::int64_t width = 3,
        nn::OptimizerKind kind = nn::OptimizerKind::adam) {
    store.add("layer.weight", {width, 2}, nn::Init::uniform(1.0), 2, width);
    store.add("layer.bias", {width}, nn::Init::uniform(1.0), 2, width);
    store.finalize(seed);
    nn::OptimizerOptions config;
    config.kind = kind;
    optimizer = nn::make_optimizer<Backend>(store, config);
  }
  void train(int steps) {
    for (int i = 0; i < steps; ++i) {
      for (nn::Parameter& p : store.parameters())
        p.grad.flat<float>() = p.value.flat<float>() * 0.5f + 0.1f;
      optimizer->step(0.01f);
    }
  }
  // The parameters one after the other (padding excluded).
  std::vector<float> values() const {
    std::vector<float> out;
    for (const nn::Parameter& p : store.parameters())
      for (std::int64_t i = 0; i < p.shape.numel(); ++i) out.push_back(p.value.data<float>()[i]);
    return out;
  }
};

float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

}  // namespace

TEST_CASE("checkpoint: parameters, optimizer moments and counters round-trip") {
  const std::string path = temp_path("seedrl_test_checkpoint.safetensors");
  Model a(1);
  a.train(5);
  io::save_checkpoint(path, a.store, a.optimizer.get(), {1000, 5, 17, "train 1.5 20\n", {}},
                      {{"network", "tiny"}});
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  // Python tools see plain names.
  const io::SafetensorsFile file = io::SafetensorsFile::read(path);
  CHECK(file.find("layer.weight") != nullptr);
  CHECK(file.find("optimizer/adam.m/layer.bias") != nullptr);
  CHECK(file.metadata().at("frames") == "1000");
  CHECK(file.metadata().at("optimizer") == "adam");

  Model b(2);
  const io::CheckpointCounters c =
      io::load_checkpoint(path, b.store, b.optimizer.get(), {{"network", "tiny"}});
  CHECK(c.frames == 1000);
  CHECK(c.learner_steps == 5);
  CHECK(c.episodes == 17);
  CHECK(c.episode_window == "train 1.5 20\n");  // the runtime's episode window comes back as is
  CHECK(b.optimizer->steps() == 5);
  CHECK(a.values() == b.values());
  a.train(3);
  b.train(3);
  CHECK(max_difference(a.values(), b.values()) < 1e-7f);
  std::filesystem::remove(path);
}

TEST_CASE("checkpoint: mismatches are refused with the file and the reason, and nothing changes") {
  const std::string path = temp_path("seedrl_test_checkpoint_mismatch.safetensors");
  Model a(1);
  a.train(2);
  io::save_checkpoint(path, a.store, a.optimizer.get(), {10, 2, 1, {}, {}}, {{"network", "tiny"}});
  auto unchanged = [](const Model& m, const Tensor& before) {
    CHECK((m.store.values().flat<float>() == before.flat<float>()).all());
  };

  Model wider(3, /*width=*/4);
  const Tensor wider_before = wider.store.values().clone();
  CHECK_THROWS_WITH_AS(
      io::load_checkpoint(path, wider.store, wider.optimizer.get()),
      doctest::Contains(
          "tensor 'layer.weight' is f32[3, 2] in the file but f32[4, 2] in this model"),
      Error);
  unchanged(wider, wider_before);

  Model other_optimizer(3, 3, nn::OptimizerKind::rmsprop);
  const Tensor other_before = other_optimizer.store.values().clone();
  CHECK_THROWS_WITH_AS(
      io::load_checkpoint(path, other_optimizer.store, other_optimizer.optimizer.get()),
      doctest::Contains("optimizer state is for 'adam', this run uses 'rmsprop'"), Error);
  unchanged(other_optimizer, other_before);

  Model same(3);
  CHECK_THROWS_WITH_AS(
      io::load_checkpoint(path, same.store, same.optimizer.get(), {{"network", "big"}}),
      doctest::Contains("was written with network 'tiny', this run has network 'big'"), Error);
  CHECK_THROWS_WITH_AS(
      io::load_checkpoint(temp_path("seedrl_no_such_checkpoint"), same.store, nullptr),
      doctest::Contains("cannot open"), Error);

  const Tensor x = Tensor::zeros({2});
  const io::NamedTensor foreign[] = {{"x", x}};
  io::write_safetensors(path, foreign, {{"format", "something else"}});
  CHECK_THROWS_WITH_AS(io::load_checkpoint(path, same.store, nullptr),
                       doctest::Contains("not a seedrl checkpoint"), Error);
  std::filesystem::remove(path);
}

TEST_CASE("checkpoint: corrupted data, and parameters that are not finite, are refused by name") {
  const std::string path = temp_path("seedrl_test_checkpoint_integrity.safetensors");
  Model a(1);
  a.train(2);
  io::save_checkpoint(path, a.store, a.optimizer.get(), {10, 2, 1, {}, {}});
  CHECK(io::load_checkpoint(path, a.store, a.optimizer.get()).checksummed);

  // 4 bytes of the file's last tensor overwritten, as a bad disk or copy would.
  std::string bytes = read_file(path);
  const io::SafetensorsFile good = io::SafetensorsFile::parse(bytes, path);
  const io::SafetensorsFile::Entry* last = &good.entries().front();
  for (const auto& e : good.entries())
    if (e.end > last->end) last = &e;
  const std::size_t data = bytes.size() - last->end;  // where the data section starts
  const float nan = std::nanf("");
  std::memcpy(bytes.data() + data + last->begin, &nan, 4);
  write_file_atomically(path, bytes);
  Model b(2);
  const Tensor before = b.store.values().clone();
  const std::string expected = path + ": tensor '" + last->name + "' fails its checksum";
  CHECK_THROWS_WITH_AS(io::load_checkpoint(path, b.store, b.optimizer.get()),
                       doctest::Contains(expected.c_str()), Error);
  CHECK((b.store.values().flat<float>() == before.flat<float>()).all());

  // Not finite: refused when saving (nothing written), and when loading a file without checksums.
  b.store.parameters()[1].value.data<float>()[2] = std::numeric_limits<float>::infinity();
  std::filesystem::remove(path);
  CHECK_THROWS_WITH_AS(io::save_checkpoint(path, b.store, nullptr, {}),
                       doctest::Contains("not written: tensor 'layer.bias' holds inf at element 2"),
                       Error);
  CHECK_FALSE(std::filesystem::exists(path));
  const io::NamedTensor poisoned[] = {{"layer.weight", a.store.parameters()[0].value},
                                      {"layer.bias", b.store.parameters()[1].value}};
  const std::string encoded = io::encode_safetensors(poisoned, {{"format", "seedrl.checkpoint"},
                                                                {"format_version", "1"},
                                                                {"frames", "1"},
                                                                {"learner_steps", "1"},
                                                                {"episodes", "1"}});
  write_file_atomically(path, encoded);
  Model c(3);
  CHECK_THROWS_WITH_AS(io::load_checkpoint(path, c.store, nullptr),
                       doctest::Contains("tensor 'layer.bias' holds a value that is not finite "
                                         "(element 2)"),
                       Error);
  std::filesystem::remove(path);
}

TEST_CASE("checkpoint: generations keep the newest K; the newest that loads is taken") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_generations";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "checkpoint.safetensors").string();
  CHECK(io::checkpoint_generation(path, 2) == (dir / "checkpoint.2.safetensors").string());
  Model a(1);
  for (std::int64_t frames = 1; frames <= 5; ++frames)
    io::save_checkpoint(path, a.store, a.optimizer.get(), {frames, 0, 0, {}, {}}, {}, 3);
  auto frames_of = [](const std::string& file) {
    return io::checkpoint_counters(io::SafetensorsFile::read(file)).frames;
  };
  const std::vector<std::string> kept = io::checkpoint_generations(path);
  REQUIRE(kept.size() == 3);  // 5, 4 and 3; 2 and 1 are gone
  CHECK(frames_of(kept[0]) == 5);
  CHECK(frames_of(kept[1]) == 4);
  CHECK(frames_of(kept[2]) == 3);
  CHECK(kept[2] == io::checkpoint_generation(path, 2));
  CHECK_FALSE(std::filesystem::exists(io::checkpoint_generation(path, 3)));

  // A gap (a file removed by hand, a crash between two renames) closes on the next save.
  std::filesystem::remove(kept[1]);
  io::save_checkpoint(path, a.store, a.optimizer.get(), {6, 0, 0, {}, {}}, {}, 3);
  const std::vector<std::string> closed = io::checkpoint_generations(path);
  REQUIRE(closed.size() == 3);
  CHECK(frames_of(closed[0]) == 6);
  CHECK(frames_of(closed[1]) == 5);
  CHECK(frames_of(closed[2]) == 3);

  // The newest is corrupt: the next one loads, and the notes say which was skipped and why.
  std::string bytes = read_file(closed[0]);
  bytes[bytes.size() - 3] ^= 0x10;
  write_file_atomically(closed[0], bytes);
  Model b(2);
  const io::LoadedGeneration loaded = io::load_newest_generation(path, [&](const std::string& f) {
    return io::load_checkpoint(f, b.store, b.optimizer.get());
  });
  CHECK(loaded.path == closed[1]);
  REQUIRE(loaded.counters.has_value());
  CHECK(loaded.counters->frames == 5);
  REQUIRE(loaded.notes.size() == 1);
  CHECK(loaded.notes[0].find("skipped a newer checkpoint that does not load: " + closed[0]) !=
        std::string::npos);
  CHECK(loaded.notes[0].find("fails its checksum") != std::string::npos);

  // None loads: the error lists every file and its fault.
  Model wider(3, /*width=*/4);
  std::string message;
  try {
    io::load_newest_generation(path, [&](const std::string& f) {
      return io::load_checkpoint(f, wider.store, wider.optimizer.get());
    });
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message.find("no checkpoint of " + path + " loads") != std::string::npos);
  for (const std::string& file : closed) CHECK(message.find(file + ": ") != std::string::npos);
  CHECK(message.find("fails its checksum") != std::string::npos);
  CHECK(message.find("in the file but f32[4, 2] in this model") != std::string::npos);

  // Nothing there at all: nothing loaded, no error.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CHECK_FALSE(io::load_newest_generation(path, [&](const std::string& f) {
                return io::load_checkpoint(f, b.store, nullptr);
              }).counters.has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("checkpoint: a file written before checksums loads, with a note saying so") {
  const auto dir = std::filesystem::temp_directory_path() / "seedrl_test_old_checkpoint";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "checkpoint.safetensors").string();
  Model a(1);
  io::save_checkpoint(path, a.store, nullptr, {7, 1, 2, {}, {}});
  // Rewrite it as seedrl wrote files before: the same tensors and metadata, no checksums.
  const io::SafetensorsFile file = io::SafetensorsFile::read(path);
  std::string header = "{";
  for (const auto& e : file.entries()) {
    header += "\"" + e.name + "\":{\"dtype\":\"F32\",\"shape\":[";
    for (int i = 0; i < e.shape.rank(); ++i) {
      if (i > 0) header += ",";
      header += std::to_string(e.shape[i]);
    }
    header +=
        "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]},";
  }
  header += "\"__metadata__\":{";
  for (const auto& [k, v] : file.metadata())
    if (!k.starts_with("crc32c")) header += "\"" + k + "\":\"" + v + "\",";
  header.back() = '}';
  header += "}";
  const std::string bytes = read_file(path);
  std::size_t data_bytes = 0;
  for (const auto& e : file.entries()) data_bytes = std::max(data_bytes, e.end);
  ByteWriter old;
  old.put<std::uint64_t>(header.size());
  old.bytes(header.data(), header.size());
  old.bytes(bytes.data() + bytes.size() - data_bytes, data_bytes);
  write_file_atomically(path, old.data());
  Model b(2);
  const io::LoadedGeneration loaded = io::load_newest_generation(
      path, [&](const std::string& f) { return io::load_checkpoint(f, b.store, nullptr); });
  REQUIRE(loaded.counters.has_value());
  CHECK_FALSE(loaded.counters->checksummed);
  CHECK(loaded.counters->frames == 7);
  CHECK(a.values() == b.values());
  REQUIRE(loaded.notes.size() == 1);
  CHECK(loaded.notes[0] == "warning: " + path +
                               " carries no checksums (written before seedrl recorded them): its "
                               "data could not be verified");
  std::filesystem::remove_all(dir);
}

namespace {

std::vector<std::string> replay_files(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("checkpoint.replay.")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("checkpoint: each generation keeps its own replay; a fallback loads the matching pair") {
  test::TempDir dir("checkpoint_replays");
  const std::string path = dir / "checkpoint.safetensors";
  Model a(1);
  auto save = [&](std::int64_t frames, const std::string& replay) {
    io::write_checkpoint(
        path,
        io::snapshot_checkpoint(std::vector<io::CheckpointPart>{{"", &a.store, a.optimizer.get()}},
                                {frames, 0, 0, {}, {}}),
        3, replay);
  };
  auto replay_of = [](const std::string& file) {
    return io::read_replay_of(io::SafetensorsFile::read(file));
  };
  for (int k = 1; k <= 4; ++k) save(k, "replay of run " + std::to_string(k));
  // Three generations, each with its replay; the oldest's went with it.
  const std::vector<std::string> kept = io::checkpoint_generations(path);
  REQUIRE(kept.size() == 3);
  CHECK(replay_files(dir.path).size() == 3);
  CHECK(replay_of(kept[0]) == "replay of run 4");
  CHECK(replay_of(kept[1]) == "replay of run 3");
  CHECK(replay_of(kept[2]) == "replay of run 2");
  // The same replay again is the same file, and a checkpoint without one has none.
  save(5, "replay of run 4");
  CHECK(replay_files(dir.path).size() == 2);
  save(6, "");
  CHECK_FALSE(replay_of(path).has_value());

  // A replay that does not verify refuses its checkpoint by name; the next generation, with its
  // own replay, is what loads.
  save(7, "replay of run 7");
  std::string seventh;
  for (const std::string& name : replay_files(dir.path))
    if (read_file(dir / name) == "replay of run 7") seventh = dir / name;
  REQUIRE_FALSE(seventh.empty());
  write_file_atomically(seventh, "replay of run 8");  // changed behind the checkpoint's back
  CHECK_THROWS_WITH_AS(replay_of(path), doctest::Contains("fails its checksum"), Error);
  Model b(2);
  const io::LoadedGeneration loaded = io::load_newest_generation(path, [&](const std::string& f) {
    const io::SafetensorsFile file = io::SafetensorsFile::read(f);
    const auto replay = io::read_replay_of(file);
    const io::CheckpointCounters counters = io::load_checkpoint(file, b.store, b.optimizer.get());
    CHECK_FALSE(replay.has_value());  // generation 1, written without a replay
    return counters;
  });
  CHECK(loaded.counters->frames == 6);
  // A missing replay refuses its checkpoint too, naming the file.
  std::filesystem::remove(seventh);
  CHECK_THROWS_WITH_AS(replay_of(path), doctest::Contains("is missing"), Error);
}

TEST_CASE("checkpoint: a full disk leaves every generation and replay as it was") {
  test::TempDir dir("checkpoint_full");
  const std::string path = dir / "checkpoint.safetensors";
  Model a(1);
  const io::CheckpointSnapshot snapshot = io::snapshot_checkpoint(
      std::vector<io::CheckpointPart>{{"", &a.store, a.optimizer.get()}}, {1, 0, 0, {}, {}});
  io::write_checkpoint(path, snapshot, 3, "first replay");
  io::write_checkpoint(path, snapshot, 3, "second replay");
  const std::vector<std::string> before = replay_files(dir.path);
  const std::string newest = read_file(path);
  for (const char* operation : {"create", "write", "sync", "rename"}) {
    CAPTURE(operation);
    {
      // The checkpoint fails; the replay beside it went first and is removed again.
      test::WriteFaults disk("checkpoint.safetensors", operation);
      CHECK_THROWS_WITH_AS(io::write_checkpoint(path, snapshot, 3, "third replay"),
                           doctest::Contains("No space left on device"), Error);
    }
    {
      // The replay fails: nothing else is written.
      test::WriteFaults disk("checkpoint.replay.", operation);
      CHECK_THROWS_WITH_AS(io::write_checkpoint(path, snapshot, 3, "fourth replay"),
                           doctest::Contains("No space left on device"), Error);
    }
    // The newest and its replay are as they were; only a failed rename, after the older
    // generations moved back, leaves the newest twice (and the oldest gone, as a save would).
    CHECK(io::checkpoint_generations(path).size() == (operation == std::string("rename") ? 3 : 2));
    CHECK(read_file(path) == newest);
    CHECK(replay_files(dir.path) == before);
    for (const std::string& generation : io::checkpoint_generations(path))
      CHECK(io::read_replay_of(io::SafetensorsFile::read(generation)).has_value());
    CHECK(io::read_replay_of(io::SafetensorsFile::read(path)) == "second replay");
    for (const auto& entry : std::filesystem::directory_iterator(dir.path))
      CHECK_FALSE(is_pending_file_name(entry.path().filename().string()));
  }
  // The snapshot is the values at the time it was taken, whatever training does afterwards.
  a.train(3);
  io::write_checkpoint(path, snapshot, 3, "second replay");
  Model b(2);
  io::load_checkpoint(path, b.store, b.optimizer.get());
  CHECK(b.values() != a.values());
}

TEST_CASE("checkpoint: a replay name that is not its own is refused before anything is read") {
  test::TempDir dir("checkpoint_replay_name");
  const std::string path = dir / "checkpoint.safetensors";
  Model a(1);
  io::CheckpointSnapshot snapshot = io::snapshot_checkpoint(
      std::vector<io::CheckpointPart>{{"", &a.store, a.optimizer.get()}}, {1, 0, 0, {}, {}});
  snapshot.metadata["replay"] = "../../etc/passwd";
  io::write_checkpoint(path, snapshot);
  CHECK_THROWS_WITH_AS(io::read_replay_of(io::SafetensorsFile::read(path)),
                       doctest::Contains("not the name of a replay file beside it"), Error);
}

}  // namespace test_checkpoint
