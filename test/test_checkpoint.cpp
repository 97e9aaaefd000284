// Checkpoints: parameters, optimizer state and counters; mismatches are refused before any change.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/io/checkpoint.hpp"

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
    nn::OptimizerConfig config;
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

}  // namespace test_checkpoint
