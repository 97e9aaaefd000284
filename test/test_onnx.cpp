// ONNX export: every network seedrl builds (MLP, MinAtar net, Nature CNN; with and without the
// LSTM core; policy/value, plain Q, dueling and Gaussian heads) runs in ONNX Runtime, an
// independent implementation, with the outputs of seedrl's own forward pass (recurrent ones over
// several steps, the state fed back as a host would); a legal-action mask input that masks the
// logits and Q-values as Policy acts on them (and a Connect Four agent's moves from its board
// planes); the protobuf writer against protobuf's
// documented encodings; clear errors for what cannot be exported.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/protobuf.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/math/masked_categorical.hpp"
#include "seedrl/session/match.hpp"
#include "support/onnxruntime.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_onnx {

using namespace seedrl;
using Backend = cpu::Backend;
using test::OnnxRuntime;

namespace {

std::string bytes_of(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

// The runtime, or null after printing the line CTest reports as a skip.
OnnxRuntime* runtime_or_skip() {
  std::string why;
  OnnxRuntime* ort = OnnxRuntime::get(why);
  if (ort == nullptr) std::printf("SEEDRL_SKIPPED: %s\n", why.c_str());
  return ort;
}

// Random biases (the initialisers leave them at zero) so that every parameter shows in the output.
void randomise_biases(nn::Network<Backend>& network, Rng& rng) {
  for (nn::Parameter& p : network.parameters().parameters()) {
    if (!p.name.ends_with("bias")) continue;
    for (float& x : std::span(p.value.data<float>(), static_cast<std::size_t>(p.shape.numel())))
      x = static_cast<float>(rng.uniform(-0.5, 0.5));
  }
  network.parameters().bump_version();
}

Tensor random_observations(const nn::NetworkOptions& config, DType dtype, std::int64_t n,
                           Rng& rng) {
  Tensor t = Tensor::empty(config.observation_shape.prepend({n}), dtype);
  const auto count = static_cast<std::size_t>(t.numel());
  if (dtype == DType::f32) {
    for (float& x : std::span(t.data<float>(), count)) x = static_cast<float>(rng.normal());
  } else {
    // MinAtar's channels are 0/1; pixels take every byte value.
    const int top = config.torso == nn::Torso::minatar ? 1 : 255;
    for (std::uint8_t& x : std::span(t.data<std::uint8_t>(), count))
      x = static_cast<std::uint8_t>(rng.next_u64() % static_cast<std::uint64_t>(top + 1));
  }
  return t;
}

Tensor random_state(std::int64_t n, std::int64_t h, Rng& rng) {
  Tensor t = Tensor::empty({n, h});
  for (float& x : std::span(t.data<float>(), static_cast<std::size_t>(t.numel())))
    x = static_cast<float>(rng.uniform(-1, 1));
  return t;
}

// max |a - b| relative to the output's scale (1 at least).
double relative_difference(const Tensor& seedrl_output, const Tensor& ort_output) {
  REQUIRE(seedrl_output.numel() == ort_output.numel());
  const auto a = seedrl_output.flat<float>();
  const auto b = ort_output.flat<float>();
  const double scale = std::max(1.0, static_cast<double>(a.cwiseAbs().maxCoeff()));
  return static_cast<double>((a - b).cwiseAbs().maxCoeff()) / scale;
}

constexpr double kTolerance = 1e-4;

// Runs `steps` steps of `config`'s network in seedrl and in ONNX Runtime on the same random
// observations (and, for an LSTM, the same random initial state, then each side's own state)
// and checks every output. With `moments`, the model normalises the observations itself and
// seedrl's network sees them normalised by RunningMoments::normalize.
void check_against_onnxruntime(OnnxRuntime& ort, nn::NetworkOptions config, DType dtype,
                               std::int64_t batch, int steps,
                               const math::RunningMoments* moments = nullptr, float clip = 10.0f) {
  config.seed = 5;
  nn::Network<Backend> network(config);
  Rng rng(17);
  randomise_biases(network, rng);
  io::OnnxExportOptions options;
  options.observation_dtype = dtype;
  if (moments != nullptr) options.observation_moments = *moments;
  options.observation_clip = clip;
  OnnxRuntime::Session session(ort, io::encode_onnx(config, network.parameters(), options));

  std::vector<std::string> inputs{io::OnnxNames::observations}, outputs;
  if (config.policy_value_heads && config.box_actions()) {
    outputs.push_back(io::OnnxNames::mean);
    outputs.push_back(io::OnnxNames::log_std);
    outputs.push_back(io::OnnxNames::value);
  } else if (config.policy_value_heads) {
    outputs.push_back(io::OnnxNames::logits);
    outputs.push_back(io::OnnxNames::value);
  }
  if (config.q_head) outputs.push_back(io::OnnxNames::q);
  const bool recurrent = config.lstm_size > 0;
  if (recurrent) {
    inputs.push_back(io::OnnxNames::lstm_h);
    inputs.push_back(io::OnnxNames::lstm_c);
    outputs.push_back(io::OnnxNames::lstm_h_out);
    outputs.push_back(io::OnnxNames::lstm_c_out);
  }

  nn::LstmState state;
  Tensor ort_h, ort_c;
  if (recurrent) {
    state = {random_state(batch, config.lstm_size, rng),
             random_state(batch, config.lstm_size, rng)};
    ort_h = state.h.clone();
    ort_c = state.c.clone();
  }
  for (int step = 0; step < steps; ++step) {
    CAPTURE(step);
    const Tensor obs = random_observations(config, dtype, batch, rng);
    Tensor input = obs;
    if (moments != nullptr) {
      input = obs.clone();
      moments->normalize(obs.matrix<float>(), input.matrix<float>(), clip);
    }
    const nn::NetworkOutputs& ours =
        network.forward(input.reshape(input.shape().prepend({1})), state);
    std::vector<Tensor> feed(recurrent ? 3 : 1);
    feed[0] = obs;
    if (recurrent) {
      feed[1] = ort_h;
      feed[2] = ort_c;
    }
    const std::vector<Tensor> theirs = session.run(inputs, feed, outputs);
    std::size_t k = 0;
    if (config.policy_value_heads && config.box_actions()) {
      const Shape rows{batch, config.action_dims};
      CHECK(theirs[k].shape() == rows);
      CHECK(relative_difference(ours.mean, theirs[k++]) <= kTolerance);
      CHECK(theirs[k].shape() == rows);
      CHECK(relative_difference(ours.log_std, theirs[k++]) <= kTolerance);
      CHECK(relative_difference(ours.values, theirs[k++]) <= kTolerance);
    } else if (config.policy_value_heads) {
      CHECK(theirs[k].shape() == Shape{batch, config.num_actions});
      CHECK(relative_difference(ours.logits, theirs[k++]) <= kTolerance);
      CHECK(theirs[k].shape() == Shape{batch});
      CHECK(relative_difference(ours.values, theirs[k++]) <= kTolerance);
    }
    if (config.q_head) {
      CHECK(theirs[k].shape() == Shape{batch, config.num_actions});
      CHECK(relative_difference(ours.q, theirs[k++]) <= kTolerance);
    }
    if (recurrent) {
      CHECK(relative_difference(ours.final_state.h, theirs[k]) <= kTolerance);
      CHECK(relative_difference(ours.final_state.c, theirs[k + 1]) <= kTolerance);
      state = {ours.final_state.h.clone(), ours.final_state.c.clone()};
      ort_h = theirs[k];
      ort_c = theirs[k + 1];
    }
  }
}

nn::NetworkOptions with_lstm(nn::NetworkOptions c, std::int64_t size) {
  c.lstm_size = size;
  return c;
}

nn::NetworkOptions dueling_q(nn::NetworkOptions c) {
  c.policy_value_heads = false;
  c.q_head = true;
  c.dueling = true;
  return c;
}

}  // namespace

TEST_CASE("protobuf writer: the encodings protobuf's documentation gives") {
  using io::proto::Message;
  CHECK(Message().integer(1, 150).encoded() == bytes_of({0x08, 0x96, 0x01}));
  CHECK(Message().bytes(2, "testing").encoded() ==
        bytes_of({0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}));
  // A negative int64 is ten bytes; field numbers past 15 take a two-byte tag.
  CHECK(Message().integer(1, -1).encoded() ==
        bytes_of({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  CHECK(Message().integer(20, 7).encoded() == bytes_of({0xa0, 0x01, 0x07}));
  CHECK(Message().float32(2, 1.0f).encoded() == bytes_of({0x15, 0x00, 0x00, 0x80, 0x3f}));
  Message inner;
  inner.integer(1, 150);
  CHECK(Message().message(3, inner).encoded() == bytes_of({0x1a, 0x03, 0x08, 0x96, 0x01}));
}

TEST_CASE("ONNX export: MLP networks match seedrl's forward pass in ONNX Runtime") {
  OnnxRuntime* ort = runtime_or_skip();
  if (ort == nullptr) return;
  const nn::NetworkOptions mlp = nn::NetworkOptions::mlp(4, 2);
  SUBCASE("policy and value (CartPole)") {
    check_against_onnxruntime(*ort, mlp, DType::f32, 5, 1);
  }
  SUBCASE("three hidden layers, batch 1") {
    check_against_onnxruntime(*ort, nn::NetworkOptions::mlp(50, 3, {32, 16, 8}), DType::f32, 1, 1);
  }
  SUBCASE("LSTM core, state fed back over 4 steps") {
    check_against_onnxruntime(*ort, with_lstm(mlp, 16), DType::f32, 3, 4);
  }
  SUBCASE("a plain Q head beside the policy and value heads") {
    nn::NetworkOptions c = mlp;
    c.q_head = true;
    check_against_onnxruntime(*ort, c, DType::f32, 4, 1);
  }
  SUBCASE("policy, value and a dueling Q head") {
    nn::NetworkOptions c = mlp;
    c.q_head = true;
    c.dueling = true;
    check_against_onnxruntime(*ort, c, DType::f32, 4, 1);
  }
}

TEST_CASE("ONNX export: Gaussian policy heads match seedrl's forward pass in ONNX Runtime") {
  OnnxRuntime* ort = runtime_or_skip();
  if (ort == nullptr) return;
  nn::NetworkOptions pendulum = nn::NetworkOptions::mlp(3, 0).gaussian(1);
  pendulum.initial_log_std = -0.7f;
  SUBCASE("free log std (PPO's head), Pendulum-sized") {
    check_against_onnxruntime(*ort, pendulum, DType::f32, 5, 1);
  }
  SUBCASE("log std head, 6 dimensions, LSTM core over 3 steps") {
    nn::NetworkOptions c = with_lstm(nn::NetworkOptions::mlp(17, 0).gaussian(6), 8);
    c.state_dependent_log_std = true;
    check_against_onnxruntime(*ort, c, DType::f32, 3, 3);
  }
  SUBCASE("tanh MLPs with a separate value torso (the MuJoCo PPO network)") {
    nn::NetworkOptions c = nn::NetworkOptions::mlp(11, 0).gaussian(3);
    c.mlp_activation = nn::Activation::tanh;
    c.separate_value_torso = true;
    check_against_onnxruntime(*ort, c, DType::f32, 6, 1);
  }
  SUBCASE("observation normalisation in the graph (a PPO run's statistics), some clipped") {
    nn::NetworkOptions c = nn::NetworkOptions::mlp(11, 0).gaussian(3);
    c.mlp_activation = nn::Activation::tanh;
    c.separate_value_torso = true;
    math::RunningMoments moments(11);
    Rng rng(23);
    RowMatrixXf seen(50, 11);
    for (Eigen::Index i = 0; i < seen.size(); ++i)
      seen.data()[i] = static_cast<float>(rng.uniform(0.2, 0.5));  // narrow: inputs clip at 3
    moments.update(seen);
    check_against_onnxruntime(*ort, c, DType::f32, 6, 2, &moments, 3.0f);
  }
}

TEST_CASE("ONNX export: MinAtar networks match seedrl's forward pass in ONNX Runtime") {
  OnnxRuntime* ort = runtime_or_skip();
  if (ort == nullptr) return;
  const nn::NetworkOptions minatar = nn::NetworkOptions::minatar(4, 6);
  SUBCASE("policy and value, u8 observations") {
    check_against_onnxruntime(*ort, minatar, DType::u8, 6, 1);
  }
  SUBCASE("policy and value, f32 observations") {
    check_against_onnxruntime(*ort, nn::NetworkOptions::minatar(7, 3), DType::f32, 2, 1);
  }
  SUBCASE("a separate value torso") {
    nn::NetworkOptions c = nn::NetworkOptions::minatar(4, 5);
    c.separate_value_torso = true;
    check_against_onnxruntime(*ort, c, DType::u8, 3, 1);
  }
  SUBCASE("R2D2's dueling LSTM Q-network over 5 steps") {
    check_against_onnxruntime(*ort, dueling_q(with_lstm(minatar, 64)), DType::u8, 4, 5);
  }
  SUBCASE("a plain Q head") {
    nn::NetworkOptions c = minatar;
    c.policy_value_heads = false;
    c.q_head = true;
    check_against_onnxruntime(*ort, c, DType::u8, 3, 1);
  }
}

TEST_CASE("ONNX export: Nature and board CNNs match seedrl's forward pass in ONNX Runtime") {
  OnnxRuntime* ort = runtime_or_skip();
  if (ort == nullptr) return;
  const nn::NetworkOptions nature = nn::NetworkOptions::nature(6);
  SUBCASE("policy and value on u8 84x84 frames") {
    check_against_onnxruntime(*ort, nature, DType::u8, 3, 1);
  }
  SUBCASE("dueling LSTM Q-network over 3 steps") {
    check_against_onnxruntime(*ort, dueling_q(with_lstm(nature, 32)), DType::u8, 2, 3);
  }
  SUBCASE("a non-square 3-frame input") {
    nn::NetworkOptions c = nature;
    c.observation_shape = {3, 60, 44};
    check_against_onnxruntime(*ort, c, DType::u8, 2, 1);
  }
  SUBCASE("the board torso: padded convolutions on Connect Four's planes, an LSTM") {
    check_against_onnxruntime(*ort, with_lstm(nn::NetworkOptions::board({2, 6, 7}, 7), 16),
                              DType::f32, 3, 2);
  }
}

TEST_CASE("ONNX export: a legal-action mask input masks logits and Q as Policy acts on them") {
  OnnxRuntime* ort = runtime_or_skip();
  if (ort == nullptr) return;
  Rng rng(21);
  io::OnnxExportOptions options;
  options.step_fields = {{kActionMaskField, {{8}, DType::u8}}};
  const nn::NetworkOptions policy = nn::NetworkOptions::mlp(16, 8, {32});
  // Branches of 3 and 5 actions: one more output per branch ("logits_0", "q_1", ...).
  const nn::NetworkOptions branched = nn::NetworkOptions::mlp(16, 0, {32}).branches({3, 5});
  for (const nn::NetworkOptions& config :
       {policy, dueling_q(with_lstm(policy, 8)), branched, dueling_q(with_lstm(branched, 8))}) {
    CAPTURE(nn::describe(config));
    nn::Network<Backend> network(config);
    randomise_biases(network, rng);
    OnnxRuntime::Session session(*ort, io::encode_onnx(config, network.parameters(), options));
    const std::int64_t batch = 5;
    const math::Branches branches(config.action_branches.empty() ? std::vector<std::int64_t>{8}
                                                                 : config.action_branches);
    const Tensor obs = random_observations(config, DType::f32, batch, rng);
    Tensor mask = Tensor::zeros({batch, 8}, DType::u8);
    for (std::int64_t i = 0; i < batch; ++i) {
      for (std::int64_t j = 0; j < 8; ++j) mask.data<std::uint8_t>()[i * 8 + j] = rng.below(2);
      for (std::int64_t k = 0; k < branches.count(); ++k)  // a legal action in every branch
        mask.data<std::uint8_t>()[i * 8 + branches.offset(k) + i % branches.size(k)] = 1;
    }
    const bool q = config.q_head;
    const std::string scores_name = q ? io::OnnxNames::q : io::OnnxNames::logits;
    std::vector<std::string> inputs{io::OnnxNames::observations, io::OnnxNames::action_mask};
    std::vector<Tensor> feed;  // not {obs, mask}: GCC 12 -O3 misreads it (-Warray-bounds)
    feed.push_back(obs);
    feed.push_back(mask);
    nn::LstmState state;
    if (config.lstm_size > 0) {
      state = {random_state(batch, 8, rng), random_state(batch, 8, rng)};
      inputs.insert(inputs.end(), {io::OnnxNames::lstm_h, io::OnnxNames::lstm_c});
      for (const Tensor* t : {&state.h, &state.c}) feed.push_back(t->clone());
    }
    std::vector<std::string> outputs{scores_name};
    if (branches.count() > 1)
      for (std::int64_t k = 0; k < branches.count(); ++k)
        outputs.push_back(str_cat(scores_name, "_", k));
    const std::vector<Tensor> theirs = session.run(inputs, feed, outputs);
    const nn::NetworkOutputs& ours = network.forward(obs.reshape({1, batch, 16}), state);
    const RowMatrixXf scores = (q ? ours.q : ours.logits).reshape({batch, 8}).matrix<float>();
    const RowMatrixXf masked = theirs[0].matrix<float>();
    int illegal = 0;
    for (std::int64_t i = 0; i < batch; ++i)
      for (std::int64_t j = 0; j < 8; ++j) {
        if (mask.data<std::uint8_t>()[i * 8 + j]) {
          CHECK(masked(i, j) == doctest::Approx(scores(i, j)).epsilon(1e-4));
        } else {
          CHECK(masked(i, j) == math::kIllegalLogit);
          ++illegal;
        }
      }
    CHECK(illegal > 5);
    // The host's argmax of each branch's masked output is Policy's greedy action of that branch
    // (math::masked_greedy).
    const auto k_count = static_cast<std::size_t>(branches.count());
    std::vector<std::int32_t> greedy(static_cast<std::size_t>(batch) * k_count);
    math::masked_greedy(scores, {mask.data<std::uint8_t>(), 40}, branches, greedy);
    for (std::int64_t k = 0; k < branches.count(); ++k) {
      const RowMatrixXf own = k_count > 1 ? theirs[static_cast<std::size_t>(k) + 1].matrix<float>()
                                          : RowMatrixXf(masked);
      REQUIRE(own.cols() == branches.size(k));
      CHECK((own - masked.middleCols(branches.offset(k), branches.size(k))).cwiseAbs().maxCoeff() ==
            0.0f);
      for (std::int64_t i = 0; i < batch; ++i) {
        Eigen::Index best = 0;
        own.row(i).maxCoeff(&best);
        CHECK(best == greedy[static_cast<std::size_t>(i) * k_count + static_cast<std::size_t>(k)]);
      }
    }
  }
  // A mask that does not fit the actions is refused by name.
  nn::Network<Backend> network(policy);
  options.step_fields = {{kActionMaskField, {{7}, DType::u8}}};
  CHECK_THROWS_WITH_AS(io::encode_onnx(policy, network.parameters(), options),
                       doctest::Contains("a legal-action mask for the 8 actions"), Error);
}

TEST_CASE("ONNX export: a Connect Four agent's planes and mask give its moves in ONNX Runtime") {
  OnnxRuntime* ort = runtime_or_skip();
  if (ort == nullptr) return;
  // The fixed encoding (env/board_game.hpp): observations f32 [2, 6, 7], the mask u8 [7].
  const ConnectFour probe;
  nn::NetworkOptions config = nn::NetworkOptions::mlp(84, 7, {32, 32});
  config.observation_shape = {2, 6, 7};
  nn::Network<Backend> network(config);
  Rng rng(23);
  randomise_biases(network, rng);
  io::OnnxExportOptions options;
  options.step_fields = probe.step_fields();
  OnnxRuntime::Session session(*ort, io::encode_onnx(config, network.parameters(), options));
  // Positions of random games, some with full columns, and the greedy agent's move in each.
  const ScriptedPlayer<ConnectFour> agent =
      network_player(config, network.parameters().values(), probe);
  const ScriptedPlayer<ConnectFour> random = random_legal_player<ConnectFour>();
  PlayerView<ConnectFour> view(probe);
  std::vector<float> planes;
  std::vector<std::uint8_t> masks;
  std::vector<std::int32_t> moves;
  int full_columns = 0;
  ConnectFour game;
  while (moves.size() < 64) {
    const int p = game.to_move();
    view.observe(game, p);
    const float* o = view.observation().data<float>();
    const std::uint8_t* m = view.fields()[0].data<std::uint8_t>();
    planes.insert(planes.end(), o, o + 84);
    masks.insert(masks.end(), m, m + 7);
    for (int c = 0; c < 7; ++c) full_columns += m[c] == 0;
    moves.push_back(agent(game, p, rng));
    std::int32_t actions[2] = {0, 0};
    actions[p] = random(game, p, rng);
    if (game.step(actions).episode_over()) game.reset();
  }
  CHECK(full_columns > 0);
  const auto batch = static_cast<std::int64_t>(moves.size());
  Tensor obs = Tensor::empty({batch, 2, 6, 7});
  std::copy(planes.begin(), planes.end(), obs.data<float>());
  Tensor mask = Tensor::empty({batch, 7}, DType::u8);
  std::copy(masks.begin(), masks.end(), mask.data<std::uint8_t>());
  const std::vector<Tensor> theirs =
      session.run({io::OnnxNames::observations, io::OnnxNames::action_mask}, {obs, mask},
                  {io::OnnxNames::logits});
  REQUIRE(theirs[0].shape() == Shape{batch, 7});
  const nn::NetworkOutputs& ours = network.forward(obs.reshape({1, batch, 2, 6, 7}), {});
  const RowMatrixXf logits = ours.logits.reshape({batch, 7}).matrix<float>();
  const RowMatrixXf masked = theirs[0].matrix<float>();
  for (std::int64_t i = 0; i < batch; ++i) {
    for (std::int64_t c = 0; c < 7; ++c) {
      if (masks[static_cast<std::size_t>(i * 7 + c)] != 0) {
        CHECK(masked(i, c) == doctest::Approx(logits(i, c)).epsilon(1e-4));
      } else {
        CHECK(masked(i, c) == math::kIllegalLogit);
      }
    }
    Eigen::Index best = 0;
    masked.row(i).maxCoeff(&best);
    CHECK(best == moves[static_cast<std::size_t>(i)]);  // a host's argmax plays the agent's move
  }
}

TEST_CASE("ONNX export: the file, its metadata and clear errors") {
  nn::NetworkOptions config = nn::NetworkOptions::mlp(4, 2);
  nn::Network<Backend> network(config);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "seedrl_test_onnx_file";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "policy.onnx").string();

  io::export_onnx(network, path);
  std::ifstream in(path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(written == io::encode_onnx(config, network.parameters()));
  CHECK(written.find(nn::describe(config)) != std::string::npos);  // metadata and graph doc
  CHECK(written.find("seedrl.version") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  // A store of another architecture: the missing or mis-shaped parameter is named.
  const nn::Network<Backend> wider(nn::NetworkOptions::mlp(4, 2, {32, 64}));
  CHECK_THROWS_WITH_AS(io::encode_onnx(config, wider.parameters()),
                       doctest::Contains("parameter 'torso.fc1.weight' is [32, 4]"), Error);
  CHECK_THROWS_WITH_AS(
      io::encode_onnx(with_lstm(nn::NetworkOptions::mlp(4, 2), 8), network.parameters()),
      doctest::Contains("needs parameter 'core.weight_ih'"), Error);
  io::OnnxExportOptions u8;
  u8.observation_dtype = DType::u8;
  CHECK_THROWS_WITH_AS(io::encode_onnx(config, network.parameters(), u8),
                       doctest::Contains("MLP torso takes f32"), Error);
  io::OnnxExportOptions i32;
  i32.observation_dtype = DType::i32;
  CHECK_THROWS_WITH_AS(
      io::encode_onnx(nn::NetworkOptions::minatar(4, 3),
                      nn::Network<Backend>(nn::NetworkOptions::minatar(4, 3)).parameters(), i32),
      doctest::Contains("i32 are not supported"), Error);
  // An unwritable path: the error names it, and the file already there is untouched.
  CHECK_THROWS_WITH_AS(io::export_onnx(network, (dir / "missing" / "x.onnx").string()),
                       doctest::Contains("missing/x.onnx"), Error);
  std::ifstream again(path, std::ios::binary);
  CHECK(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()) ==
        written);
  std::filesystem::remove_all(dir);
}

}  // namespace test_onnx
