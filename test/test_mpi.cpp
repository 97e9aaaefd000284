// seedrl::mpi's learner group, run by CTest as two ranks on this machine (mpiexec -n 2 test_mpi;
// every rank runs every case, and a failure on either fails the test): two learners on half
// batches take exactly the steps of one learner on the whole batch, rank 0's parameters reach
// every rank, a step one rank cannot use is skipped by all, counters add up, a diverged group is
// named, a training session stops and resumes on every rank, and SAC's several networks (actor,
// critics, targets, temperature) stay the same on every rank.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "seedrl/env/cartpole.hpp"
#ifdef SEEDRL_TEST_MPI_CUDA
#include "seedrl/backend/cuda/backend.hpp"
#endif
#include "seedrl/agents/sac.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/mpi/learner_group.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/sac_fixtures.hpp"
#include "support/temp_dir.hpp"

// Everything in a namespace of this file, as in the unity-built tests. The unrolls are
// support/runtime_fixtures.hpp's without terminations, so that both halves of a batch have as
// many transitions.
namespace test_mpi {

using namespace seedrl;
using namespace seedrl::test;

namespace {

// MPI for the whole program: initialised at the first use, finalised at exit.
mpi::Session& session() {
  static mpi::Session s;
  return s;
}

VTraceAgent make_agent(std::int64_t batch, std::uint64_t seed = 3) {
  VTraceAgentOptions o;
  o.network = nn::NetworkOptions::mlp(2, 3, {16, 16});
  o.network.seed = seed;
  o.batch_size = batch;
  o.learning_rate = {3e-3, 0, 0.0};
  o.max_grad_norm = 0.5;  // clipped after the reduction: on the group's gradient
  return VTraceAgent(o);
}

UnrollSpec spec_for(const VTraceAgent& agent) {
  InferenceServerOptions o;
  o.unroll_length = 6;
  return make_unroll_spec(agent, {{2}, DType::f32}, {3}, o);
}

}  // namespace

TEST_CASE("LearnerGroup: two ranks on half batches step exactly as one learner on the whole") {
  REQUIRE(session().size() == 2);
  const int rank = session().rank();
  mpi::LearnerGroup group(session());
  const VTraceAgent half = make_agent(2), whole = make_agent(4);
  const UnrollSpec spec = spec_for(half);
  UnrollQueue unused(1);
  Learner<VTraceAgent, Backend> member(half, spec, unused);
  Learner<VTraceAgent, Backend> alone(whole, spec, unused);  // the reference, on every rank
  group.join(member);
  const Tensor initial = member.network().parameters().values().clone();
  for (int step = 0; step < 6; ++step) {
    // The same 4 unrolls on every rank; rank r trains on unrolls 2r and 2r + 1.
    auto batch = random_unrolls(spec, 4, static_cast<std::uint64_t>(100 + step), 0.0);
    std::vector<std::unique_ptr<Unroll>> mine;
    mine.push_back(std::move(batch[static_cast<std::size_t>(2 * rank)]));
    mine.push_back(std::move(batch[static_cast<std::size_t>(2 * rank + 1)]));
    const LearnerStepStats a = member.train_on(mine);
    const LearnerStepStats b =
        alone.train_on(random_unrolls(spec, 4, static_cast<std::uint64_t>(100 + step), 0.0));
    CHECK_FALSE(a.skipped);
    CHECK(a.metrics["grad_norm"] == doctest::Approx(b.metrics["grad_norm"]).epsilon(1e-5));
  }
  const auto& ours = member.network().parameters().values();
  const auto& reference = alone.network().parameters().values();
  const float difference = (ours.flat<float>() - reference.flat<float>()).abs().maxCoeff();
  CAPTURE(rank);
  CHECK(difference <= 1e-5f);
  // The parameters moved, so the comparison means something.
  CHECK((ours.flat<float>() - initial.flat<float>()).abs().maxCoeff() > 1e-4f);
  group.check_identical(ours, "the parameters");
  CHECK(group.reductions() == 6);
  CHECK(group.reduced_bytes() == 4 * ours.numel());
}

TEST_CASE("LearnerGroup: rank 0's parameters reach every rank; a diverged rank is named") {
  mpi::LearnerGroup group(session());
  const int rank = session().rank();
  // Each rank starts from parameters of its own seed.
  const VTraceAgent agent = make_agent(2, static_cast<std::uint64_t>(10 + rank));
  UnrollQueue unused(1);
  Learner<VTraceAgent, Backend> learner(agent, spec_for(agent), unused);
  const VTraceAgent rank0 = make_agent(2, 10);
  Learner<VTraceAgent, Backend> expected(rank0, spec_for(rank0), unused);
  const std::uint64_t version = learner.network().parameters().version();
  group.join(learner);
  CHECK((learner.network().parameters().values().flat<float>() ==
         expected.network().parameters().values().flat<float>())
            .all());
  // Inference reads the same buffer; the version tells cached (packed) weights to refresh.
  CHECK(learner.network().parameters().version() > version);
  group.check_identical(learner.network().parameters().values(), "the parameters");

  // One value changed on rank 1: every rank hears which rank diverged.
  Tensor values = learner.network().parameters().values().clone();
  if (rank == 1) values.data<float>()[7] += 1e-3f;
  CHECK_THROWS_WITH_AS(group.check_identical(values, "the parameters"),
                       doctest::Contains("the parameters on rank(s) 1 differ from rank 0's"),
                       Error);

  // Another number of values on one rank is refused on every rank, not a hang or a crash.
  const Tensor mismatched = Tensor::zeros({rank == 0 ? 5 : 6});
  CHECK_THROWS_WITH_AS(group.broadcast(mismatched), doctest::Contains("the ranks hold 5 to 6"),
                       Error);
}

TEST_CASE("LearnerGroup: a step one rank cannot use is non-finite on all; counters add up") {
  mpi::LearnerGroup group(session());
  const int rank = session().rank();
  Tensor gradients = Tensor::zeros({4});
  gradients.flat<float>().setConstant(static_cast<float>(rank + 1));  // 1 on rank 0, 2 on rank 1
  group.all_reduce(gradients, true);
  for (int i = 0; i < 4; ++i) CHECK(gradients.data<float>()[i] == 1.5f);  // the mean
  gradients.flat<float>().setConstant(1.0f);
  group.all_reduce(gradients, /*finite=*/rank == 0);  // rank 1's step is unusable
  CHECK(std::isnan(gradients.data<float>()[0]));
  CHECK(group.sum(rank == 0 ? 1'000'000'000'000 : 5) == 1'000'000'000'005);
}

TEST_CASE("LearnerGroup: a training session over MPI stops every rank together and resumes") {
  mpi::LearnerGroup group(session());
  const int rank = session().rank();
  // Each rank its own directory, as on machines without a shared file system.
  const test::TempDir dir("mpi_session_rank" + std::to_string(rank));
  auto train = [&](std::int64_t frames) {
    const VTraceAgent agent(test::example_vtrace_options(nn::NetworkOptions::mlp(4, 2), 60000));
    LocalTrainerOptions run = test::example_run_options(frames, dir.path.string());
    run.num_actors = 2;
    run.group = &group;
    run.group_check_steps = 20;
    return train_locally<VTraceAgent, Backend>(
        agent,
        [rank](std::int32_t a, std::int32_t e) {
          return CartPole(static_cast<std::uint64_t>(100000 * rank + 1000 * a + e));
        },
        run);
  };
  const TrainingResult first = train(30000);
  CHECK(first.ranks == 2);
  CHECK(first.rank == rank);
  CHECK(first.frames >= 30000);
  // The same step count and group figures on both ranks.
  CHECK(group.sum(first.learner_steps) == 2 * first.learner_steps);
  CHECK(group.sum(first.frames) == 2 * first.frames);
  CHECK(std::filesystem::exists(dir / "checkpoint.safetensors") == (rank == 0));

  const TrainingResult second = train(60000);
  CHECK(second.resumed);  // rank 1 too: from rank 0's checkpoint
  CHECK(second.frames >= 60000);
  CHECK(second.learner_steps > first.learner_steps);
  CHECK(group.sum(second.learner_steps) == 2 * second.learner_steps);
  CHECK(second.frames_this_run == second.frames - first.frames);
}

TEST_CASE("LearnerGroup: SAC's networks, targets and temperature stay the same on every rank") {
  mpi::LearnerGroup group(session());
  const int rank = session().rank();
  SacAgentOptions o = sac::tiny_options();
  o.network.seed = static_cast<std::uint64_t>(20 + rank);  // join gives every rank rank 0's
  const SacAgent agent(o);
  UnrollQueue queue(64);
  Learner<SacAgent, Backend> learner(agent, sac::spec_for(agent), queue);
  group.join(learner);
  const char* const names[] = {"actor",          "critic1",        "critic2",
                               "critic1_target", "critic2_target", "temperature"};
  std::vector<Tensor> before;
  for (const char* name : names) {
    const Tensor& values = learner.networks().network(name).parameters().values();
    group.check_identical(values, name);
    before.push_back(values.clone());
  }
  // Each rank samples its own replay of its own windows; the group's mean gradients move every
  // network alike (a network left out of the all-reduce would differ after one step).
  for (auto& u :
       sac::random_windows(sac::spec_for(agent), 40, static_cast<std::uint64_t>(50 + rank)))
    queue.push(std::move(u));
  for (int step = 0; step < 4; ++step) {
    const std::optional<LearnerStepStats> stats = learner.step();
    REQUIRE(stats.has_value());
    CHECK_FALSE(stats->skipped);
  }
  for (std::size_t i = 0; i < std::size(names); ++i) {
    const Tensor& values = learner.networks().network(names[i]).parameters().values();
    CAPTURE(names[i]);
    group.check_identical(values, names[i]);
    CHECK((values.flat<float>() - before[i].flat<float>()).abs().maxCoeff() > 1e-6f);
  }
  CHECK(group.sum(learner.steps()) == 2 * 4);
}

#ifdef SEEDRL_TEST_MPI_CUDA
TEST_CASE("LearnerGroup: gradients on the GPUs are averaged there, by NCCL") {
  if (mpi::LearnerGroup::nccl_version() == nullptr) {
    MESSAGE("skipped: seedrl::mpi was built without NCCL");
    return;
  }
  // NCCL wants a GPU of its own for every rank.
  if (cuda::device_count() < session().local_size()) {
    MESSAGE("skipped: ", session().local_size(), " ranks on a machine with ", cuda::device_count(),
            " GPU(s); NCCL needs one per rank");
    return;
  }
  cuda::set_device(session().local_rank());
  mpi::LearnerGroup group(session());
  const int rank = session().rank();
  Tensor host = Tensor::zeros({1000});
  for (int i = 0; i < 1000; ++i) host.data<float>()[i] = static_cast<float>(i * (rank + 1));
  const Tensor gradients = host.clone(Device::cuda);
  group.all_reduce(gradients, true);
  CHECK(group.last_reduction_on_device());
  const Tensor mean = gradients.clone(Device::cpu);
  for (int i = 0; i < 1000; ++i) CHECK(mean.data<float>()[i] == doctest::Approx(1.5 * i));
  group.all_reduce(gradients, /*finite=*/rank == 0);
  CHECK(std::isnan(gradients.clone(Device::cpu).data<float>()[0]));
}
#endif

}  // namespace test_mpi
