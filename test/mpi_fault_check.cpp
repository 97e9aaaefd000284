// Run by CTest as two ranks (mpiexec -n 2) to check how a learner group ends when a rank fails:
//   mpi_fault_check hang   rank 1 stops stepping after one step: rank 0's next all-reduce gives
//                          up after its 1 s timeout and aborts the job, saying why on stderr
//   mpi_fault_check kill   rank 1 dies (SIGKILL) after one step: the launcher ends the job and
//                          names rank 1 (long before rank 0's 20 s timeout)
//   mpi_fault_check error  both ranks train CartPole as a group (train_locally); an environment
//                          of rank 1 throws: rank 1 ends the group with its error on stderr
// Either way the job must end, non-zero, within seconds; "survived" on stdout means it did not.
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/cartpole.hpp"
#include "seedrl/mpi/learner_group.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"

namespace {

// CartPole whose simulator crashes after `crash_after` steps (never when negative).
struct CrashingCartPole {
  seedrl::CartPole env;
  int crash_after;
  int steps = 0;
  seedrl::TensorSpec observation_spec() const { return env.observation_spec(); }
  seedrl::ActionSpec action_spec() const { return env.action_spec(); }
  void reset(const seedrl::Tensor& obs) { env.reset(obs); }
  seedrl::StepResult step(std::int32_t action, const seedrl::Tensor& obs) {
    if (++steps == crash_after) throw std::runtime_error("the simulator crashed");
    return env.step(action, obs);
  }
};

int train_until_rank_1_crashes(seedrl::mpi::LearnerGroup& group) {
  using namespace seedrl;
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(4, 2);
  o.batch_size = 8;
  LocalTrainerOptions run;
  run.total_frames = 10'000'000;
  run.num_actors = 2;
  run.envs_per_actor = 4;
  run.server.unroll_length = 20;
  run.group = &group;
  const int rank = group.rank();
  train_locally<VTraceAgent, cpu::Backend>(
      VTraceAgent(o),
      [rank](std::int32_t a, std::int32_t e) {
        return CrashingCartPole{CartPole(static_cast<std::uint64_t>(100 * rank + 10 * a + e)),
                                rank == 1 && a == 0 && e == 0 ? 5000 : -1};
      },
      run);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::mpi::Session mpi(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "hang" && mode != "kill" && mode != "error") {
    std::fprintf(stderr, "usage: mpi_fault_check hang|kill|error\n");
    return 2;
  }
  // kill: a timeout longer than the launcher needs, so that it is the launcher that ends the job.
  seedrl::mpi::LearnerGroup group(
      mpi, {.timeout = std::chrono::milliseconds(mode == "hang" ? 1000 : 20000)});
  if (mode == "error") {
    train_until_rank_1_crashes(group);
    std::printf("survived: rank %d\n", mpi.rank());
    return 0;
  }
  seedrl::Tensor gradients = seedrl::Tensor::zeros({1024});
  group.all_reduce(gradients, true);  // one step together
  if (mpi.rank() == 1) {
    if (mode == "kill") std::raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(60));  // hangs
  }
  group.all_reduce(gradients, true);
  std::printf("survived: rank %d\n", mpi.rank());
  return 0;
}
