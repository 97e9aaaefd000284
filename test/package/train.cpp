// A downstream program that trains, as a new user writes one: the umbrella header, an environment
// of its own and train_locally, nothing else. It is also the consumer translation unit whose
// compile time bench/build_time.sh reports (docs/performance.md).
#include <seedrl/seedrl.hpp>

#include <cstdio>

namespace {

// Say which sign the observation has: action 1 for positive, 0 for negative; 10 guesses an episode.
class GuessTheSign {
 public:
  explicit GuessTheSign(std::uint64_t seed) : rng_(seed) {}
  seedrl::TensorSpec observation_spec() const { return {{1}, seedrl::DType::f32}; }
  seedrl::ActionSpec action_spec() const { return {2}; }
  void reset(const seedrl::Tensor& observation) {
    steps_ = 0;
    draw(observation);
  }
  seedrl::StepResult step(std::int32_t action, const seedrl::Tensor& observation) {
    seedrl::StepResult result;
    result.reward = (action == 1) == (sign_ > 0.0f) ? 1.0f : 0.0f;
    result.truncated = ++steps_ == 10;
    draw(observation);
    return result;
  }

 private:
  void draw(const seedrl::Tensor& observation) {
    sign_ = rng_.uniform() < 0.5 ? -1.0f : 1.0f;
    observation.data<float>()[0] = sign_;
  }
  seedrl::Rng rng_;
  float sign_ = 1.0f;
  int steps_ = 0;
};

}  // namespace

int main() {
  seedrl::VTraceAgentOptions agent;
  agent.network = seedrl::nn::NetworkOptions::mlp(1, 2, {16});
  agent.batch_size = 4;
  seedrl::LocalTrainerOptions run;
  run.total_frames = 20'000;
  run.num_actors = 2;
  run.envs_per_actor = 4;
  run.server.unroll_length = 10;
  const seedrl::TrainingResult result =
      seedrl::train_locally<seedrl::VTraceAgent, seedrl::cpu::Backend>(
          seedrl::VTraceAgent(agent),
          [](std::int32_t actor, std::int32_t env) {
            return GuessTheSign(static_cast<std::uint64_t>(100 * actor + env));
          },
          run);
  std::printf("trained: %lld frames, %lld episodes, %lld learner steps\n",
              static_cast<long long>(result.frames), static_cast<long long>(result.episodes),
              static_cast<long long>(result.learner_steps));
  return result.frames >= run.total_frames && result.episodes > 0 && result.learner_steps > 0 ? 0
                                                                                              : 1;
}
