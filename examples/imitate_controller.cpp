// imitate_controller: train a seedrl network with the nn API alone (no runtime).
//
// A CartPole-sized MLP learns, by supervised learning, to copy a hand-written balancing
// controller (push right when the pole leans or falls right) and to predict a value target. It
// shows the pieces a learner uses: Network forward/backward, the softmax loss helpers, global
// gradient-norm clipping, Adam and a linearly decaying learning rate.
//
//   imitate_controller [--steps 2000] [--batch 256] [--seed 1] [--threads 2]
//
// Prints progress, then one JSON object on the last line.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "seedrl/cli/command_line.hpp"
#include "seedrl/seedrl.hpp"

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

// The "expert": action 1 (push right) when the pole angle plus a share of its angular velocity
// is positive. Value target: how upright the pole is.
int expert_action(const float* s) {
  return s[2] + 0.5f * s[3] > 0.0f ? 1 : 0;
}
float value_target(const float* s) {
  return 1.0f - std::abs(s[2]) - 0.25f * std::abs(s[3]);
}

void sample_states(Tensor& states, Rng& rng) {
  for (std::int64_t i = 0; i < states.numel(); ++i)
    states.data<float>()[i] = static_cast<float>(rng.uniform(-1, 1));
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app("Train a seedrl network to imitate a CartPole controller");
  int steps = 2000;
  std::int64_t batch = 256;
  std::uint64_t seed = 1;
  int threads = 2;
  app.option("--steps", steps, "optimizer steps").positive();
  app.option("--batch", batch, "states per step").positive();
  app.option("--seed", seed, "seed for parameters and data");
  app.option("--threads", threads, "CPU threads").positive();
  std::string export_onnx;
  app.option("--export-onnx", export_onnx, "write the trained network here as an ONNX model");
  if (const auto exit = app.parse(argc, argv)) return *exit;
  cpu::set_num_threads(threads);

  auto config = nn::NetworkOptions::mlp(/*observation_size=*/4, /*num_actions=*/2, {64, 64});
  config.seed = seed;
  nn::Network<Backend> net(config);
  nn::Adam<Backend> adam(net.parameters());
  const nn::LinearDecay learning_rate{3e-3, steps, 0.0};
  Rng rng(seed + 1);

  // Batches are time-major [T, B, ...]; a supervised batch is one time step of B columns.
  Tensor states = Tensor::empty({1, batch, 4});
  Tensor grad_logits = Tensor::empty({1, batch, 2});
  Tensor grad_values = Tensor::empty({1, batch});
  RowMatrixXf log_probs(batch, 2);
  double loss = 0.0, accuracy = 0.0;
  const double start =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  for (int step = 0; step < steps; ++step) {
    sample_states(states, rng);
    const nn::NetworkOutputs& out = net.forward(states);

    // Cross-entropy on the expert's action plus 0.5 * squared value error, averaged over the batch.
    math::log_softmax(out.logits.reshape({batch, 2}).matrix<float>(), log_probs);
    auto dlogits = grad_logits.reshape({batch, 2}).matrix<float>();
    loss = 0.0;
    int correct = 0;
    const auto n = static_cast<float>(batch);
    for (std::int64_t i = 0; i < batch; ++i) {
      const float* s = states.data<float>() + 4 * i;
      const int label = expert_action(s);
      loss -= log_probs(i, label) / n;
      dlogits.row(i) = log_probs.row(i).array().exp().matrix() / n;  // softmax - one_hot
      dlogits(i, label) -= 1.0f / n;
      correct += (log_probs(i, 1) > log_probs(i, 0)) == (label == 1);
      const float error = out.values.data<float>()[i] - value_target(s);
      loss += 0.5 * error * error / n;
      grad_values.data<float>()[i] = error / n;
    }
    accuracy = correct / static_cast<double>(batch);

    net.backward({.logits = grad_logits, .values = grad_values});
    const double grad_norm = nn::clip_by_global_norm<Backend>(net.parameters(), 40.0);
    adam.step(static_cast<float>(learning_rate.at(step)));
    if (step % 200 == 0 || step == steps - 1) {
      std::printf("step %5d  loss %.4f  accuracy %.3f  grad norm %.3f  lr %.2e\n", step, loss,
                  accuracy, grad_norm, learning_rate.at(step));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() -
      start;
  if (!export_onnx.empty()) {
    try {
      io::export_onnx(net, export_onnx);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "imitate_controller: error: %s\n", e.what());
      return 1;
    }
    std::fprintf(stderr, "exported the network as ONNX: %s\n", export_onnx.c_str());
  }
  std::printf("{\"steps\":%d,\"batch\":%lld,\"seconds\":%.3f,\"loss\":%.5f,\"accuracy\":%.4f}\n",
              steps, static_cast<long long>(batch), seconds, loss, accuracy);
  return 0;
}
