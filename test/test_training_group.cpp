// TrainingSession and LearnerCore as members of a learner group, without MPI: the members are
// threads of this process and the group's collectives a rendezvous between them (ThreadGroup), so
// that the session's group logic also runs under ThreadSanitizer in CI. Two members stop after
// the same step with the group's totals, keep identical parameters, rank 0 alone writes files
// and a resumed group starts from rank 0's checkpoint; join_group makes parameters, optimizer
// state, step count and R2D2's target network the root's. (test_mpi runs the same over MPI.)
#include <doctest/doctest.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/env/cartpole.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/learner/training_group.hpp"
#include "seedrl/session/builtin_agents.hpp"
#include "seedrl/session/local_trainer.hpp"
#include "support/example_defaults.hpp"
#include "support/runtime_fixtures.hpp"
#include "support/temp_dir.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_training_group {

using namespace seedrl;
using Backend = cpu::Backend;

namespace {

using Values = std::vector<double>;

// Where the members of a ThreadGroup meet: each collective waits for every member's values,
// the last to arrive combines them once, and every member leaves with the combination.
class Rendezvous {
 public:
  explicit Rendezvous(int size) : inputs_(static_cast<std::size_t>(size)) {}
  int size() const { return static_cast<int>(inputs_.size()); }

  Values meet(int rank, Values mine, const std::function<Values(const std::vector<Values>&)>& op) {
    std::unique_lock lock(mutex_);
    const std::int64_t generation = generation_;
    inputs_[static_cast<std::size_t>(rank)] = std::move(mine);
    if (++arrived_ == size()) {
      result_ = op(inputs_);
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return generation_ != generation; });
    }
    return result_;  // the next collective cannot complete before this member joins it
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Values> inputs_;
  Values result_;
  int arrived_ = 0;
  std::int64_t generation_ = 0;
};

Values sum_of(const std::vector<Values>& all) {
  Values total(all[0].size(), 0.0);
  for (const Values& v : all) {
    REQUIRE(v.size() == total.size());
    for (std::size_t i = 0; i < v.size(); ++i) total[i] += v[i];
  }
  return total;
}

Values root_of(const std::vector<Values>& all) {
  return all[0];
}

Values as_values(const Tensor& t) {
  const Tensor host = t.clone(Device::cpu);
  return Values(host.data<float>(), host.data<float>() + host.numel());
}

void assign(const Tensor& t, const Values& v) {
  REQUIRE(static_cast<std::int64_t>(v.size()) == t.numel());
  Tensor host = Tensor::empty({t.numel()});
  for (std::size_t i = 0; i < v.size(); ++i) host.data<float>()[i] = static_cast<float>(v[i]);
  t.copy_from(host);
}

// One member of a group of threads (see the top). Counts what the session asks of it.
class ThreadGroup final : public TrainingGroup {
 public:
  ThreadGroup(Rendezvous& rendezvous, int rank) : rendezvous_(rendezvous), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return rendezvous_.size(); }

  void all_reduce(const Tensor& gradients, bool finite) override {
    Values v = as_values(gradients);
    if (!finite && !v.empty()) v[0] = std::numeric_limits<double>::quiet_NaN();
    Values mean = rendezvous_.meet(rank_, std::move(v), sum_of);
    for (double& x : mean) x /= size();
    assign(gradients, mean);
    ++reductions;
  }
  void sum(std::span<double> values) override {
    const Values total = rendezvous_.meet(rank_, Values(values.begin(), values.end()), sum_of);
    std::copy(total.begin(), total.end(), values.begin());
  }
  void broadcast(const Tensor& values) override {
    assign(values, rendezvous_.meet(rank_, as_values(values), root_of));
  }
  void broadcast(std::string& bytes) override {
    const Values root = rendezvous_.meet(rank_, Values(bytes.begin(), bytes.end()), root_of);
    bytes.assign(root.size(), '\0');
    for (std::size_t i = 0; i < root.size(); ++i) bytes[i] = static_cast<char>(root[i]);
  }
  void check_identical(const Tensor& values, const std::string& what) override {
    const Values same = rendezvous_.meet(rank_, as_values(values), [](const auto& all) {
      Values flags;
      for (const Values& v : all) flags.push_back(v == all[0] ? 1.0 : 0.0);
      return flags;
    });
    ++checks;
    for (std::size_t r = 0; r < same.size(); ++r)
      SEEDRL_REQUIRE(same[r] == 1.0, what, " on rank ", r, " differ from rank 0's");
  }
  [[noreturn]] void abort(const std::string& why) override {
    std::fprintf(stderr, "ThreadGroup: rank %d aborts the test: %s\n", rank_, why.c_str());
    std::abort();
  }

  std::int64_t reductions = 0, checks = 0;

 private:
  Rendezvous& rendezvous_;
  int rank_;
};

// Runs `member(rank)` for every rank on threads of its own; returns their results by rank.
template <class Member>
auto run_members(int size, Member member) {
  using Result = std::invoke_result_t<Member, int>;
  std::vector<Result> results(static_cast<std::size_t>(size));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        results[static_cast<std::size_t>(r)] = member(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

// A member's CartPole run: examples/cartpole_vtrace's settings at half the actors, environments
// seeded by rank.
TrainingResult train_member(ThreadGroup& group, std::int64_t frames, std::string logdir = {}) {
  const VTraceAgent agent(test::example_vtrace_options(nn::NetworkOptions::mlp(4, 2), frames / 2));
  LocalTrainerOptions run = test::example_run_options(frames, std::move(logdir));
  run.num_actors = 2;
  run.group = &group;
  run.group_check_steps = 50;
  run.checkpoint_seconds = 0;
  const int rank = group.rank();
  return train_locally<VTraceAgent, Backend>(
      agent,
      [rank](std::int32_t a, std::int32_t e) {
        return CartPole(static_cast<std::uint64_t>(100000 * rank + 1000 * a + e));
      },
      run);
}

}  // namespace

TEST_CASE("TrainingSession in a group: members stop after the same step with the group's totals") {
  Rendezvous rendezvous(2);
  ThreadGroup groups[] = {{rendezvous, 0}, {rendezvous, 1}};
  const std::int64_t frames = 150000;
  const auto results = run_members(2, [&](int r) { return train_member(groups[r], frames); });
  for (const TrainingResult& result : results) {
    CAPTURE(result.rank);
    CHECK(result.ranks == 2);
    // The group's frames, reached together: each member alone has only part of them.
    CHECK(result.frames >= frames);
    CHECK(result.frames < frames + 2 * 8 * 20 * 8);  // a few batches of overshoot at most
    CHECK(result.learner_steps == results[0].learner_steps);
    CHECK(result.frames == results[0].frames);
    CHECK(result.episodes == results[0].episodes);
    REQUIRE(result.mean_return.has_value());
    CHECK(*result.mean_return == doctest::Approx(*results[0].mean_return));
  }
  CHECK(results[0].rank == 0);
  CHECK(results[1].rank == 1);
  // One reduction per learner step; the parameters were compared every 50 (a difference would
  // have ended the run with an error).
  CHECK(groups[0].reductions == results[0].learner_steps);
  CHECK(groups[1].reductions == results[0].learner_steps);
  CHECK(groups[0].checks == results[0].learner_steps / 50);
  // Two members of half a run's actors learn CartPole like one learner would.
  CHECK(*results[0].mean_return > 100.0);
}

TEST_CASE("TrainingSession in a group: rank 0 alone writes files; a group resumes from them") {
  const test::TempDir dirs[] = {test::TempDir("group_rank0"), test::TempDir("group_rank1")};
  {
    Rendezvous rendezvous(2);
    ThreadGroup groups[] = {{rendezvous, 0}, {rendezvous, 1}};
    const auto first = run_members(
        2, [&](int r) { return train_member(groups[r], 20000, dirs[r].path.string()); });
    const std::string checkpoint = checkpoint_path(dirs[0].path.string());
    REQUIRE(std::filesystem::exists(checkpoint));
    CHECK(std::filesystem::exists(dirs[0].path / "metrics.csv"));
    CHECK(std::filesystem::is_empty(dirs[1].path));  // rank 1 wrote nothing
    // The checkpoint holds the group's counters.
    const io::CheckpointCounters saved =
        io::checkpoint_counters(io::SafetensorsFile::read(checkpoint));
    CHECK(saved.frames == first[0].frames);
    CHECK(saved.episodes == first[0].episodes);
    CHECK(saved.learner_steps == first[0].learner_steps);

    Rendezvous again(2);
    ThreadGroup resumed_groups[] = {{again, 0}, {again, 1}};
    const auto second = run_members(
        2, [&](int r) { return train_member(resumed_groups[r], 40000, dirs[r].path.string()); });
    for (const TrainingResult& result : second) {
      CAPTURE(result.rank);
      CHECK(result.resumed);  // rank 1 too, from rank 0's checkpoint
      CHECK(result.frames >= 40000);
      CHECK(result.frames_this_run == result.frames - first[0].frames);
      // Every member continued from rank 0's step count.
      CHECK(result.learner_steps > first[0].learner_steps);
      CHECK(result.learner_steps == second[0].learner_steps);
      CHECK(result.episodes > first[0].episodes);
    }
    CHECK(std::filesystem::is_empty(dirs[1].path));
  }
}

TEST_CASE("join_group: the root's parameters, optimizer state, step count and target network") {
  // R2D2, for its target network; rank 0 has taken two steps, rank 1 none and other parameters.
  auto make = [](std::uint64_t seed) {
    R2D2AgentOptions o;
    o.network = nn::NetworkOptions::mlp(2, 3, {8});
    o.network.q_head = true;
    o.network.seed = seed;
    o.batch_size = 2;
    o.target_update_period = 1000;
    return R2D2Agent(o);
  };
  const R2D2Agent agents[] = {make(1), make(2)};
  InferenceServerOptions server;
  server.unroll_length = 6;
  const UnrollSpec spec = make_unroll_spec(agents[0], {{2}, DType::f32}, {3}, server);
  UnrollQueue unused(1);
  std::unique_ptr<Learner<R2D2Agent, Backend>> learners[] = {
      std::make_unique<Learner<R2D2Agent, Backend>>(agents[0], spec, unused),
      std::make_unique<Learner<R2D2Agent, Backend>>(agents[1], spec, unused)};
  for (int step = 0; step < 2; ++step) {
    auto sequences = test::random_unrolls(spec, 2, static_cast<std::uint64_t>(7 + step), 0.0);
    learners[0]->insert(sequences);
    learners[0]->train_on_sample();
  }
  REQUIRE(learners[0]->steps() == 2);
  const Values root_parameters = as_values(learners[0]->network().parameters().values());
  const Values root_moment = as_values(learners[0]->optimizer().slots().front().value);
  const Values root_target = as_values(learners[0]->target_network().parameters().values());
  REQUIRE(root_target != root_parameters);  // two steps, far from the next target copy
  const std::uint64_t version = learners[1]->network().parameters().version();

  Rendezvous rendezvous(2);
  ThreadGroup groups[] = {{rendezvous, 0}, {rendezvous, 1}};
  run_members(2, [&](int r) {
    learners[r]->join_group(groups[r]);
    return 0;
  });
  for (auto& learner : learners) {
    CHECK(as_values(learner->network().parameters().values()) == root_parameters);
    CHECK(as_values(learner->target_network().parameters().values()) == root_target);
    CHECK(as_values(learner->optimizer().slots().front().value) == root_moment);
    CHECK(learner->steps() == 2);
    CHECK(learner->optimizer().steps() == learners[0]->optimizer().steps());
    CHECK(learner->gradient_reducer() != nullptr);
  }
  // Inference reads the same buffer; a new version tells it to repack its weights.
  CHECK(learners[1]->network().parameters().version() > version);
}

TEST_CASE("launched_processes: the launchers' variables, srun --mpi=pmix's among them") {
  // Sets the launchers' variables for one check, the process's own put back after it.
  const std::vector<std::string> names{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                                       "PMIX_RANK", "SLURM_STEP_NUM_TASKS"};
  std::vector<std::optional<std::string>> saved;
  for (const std::string& name : names) {
    const char* value = std::getenv(name.c_str());
    saved.push_back(value ? std::optional<std::string>(value) : std::nullopt);
  }
  const auto with = [&](std::vector<std::pair<std::string, std::string>> set) {
    for (const std::string& name : names) ::unsetenv(name.c_str());
    for (const auto& [name, value] : set) ::setenv(name.c_str(), value.c_str(), 1);
    return launched_processes();
  };
  CHECK(with({}) == 0);
  CHECK(with({{"SLURM_STEP_NUM_TASKS", "4"}}) == 0);  // a job step, not an MPI launch
  CHECK(with({{"OMPI_COMM_WORLD_SIZE", "3"}}) == 3);
  CHECK(with({{"PMI_SIZE", "2"}}) == 2);
  CHECK(with({{"PMIX_RANK", "1"}, {"SLURM_STEP_NUM_TASKS", "2"}}) == 2);  // srun --mpi=pmix
  CHECK(with({{"PMIX_RANK", "0"}}) == 1);  // another PMIx launcher: MPI says how many
  CHECK(with({{"OMPI_COMM_WORLD_SIZE", "5"}, {"PMIX_RANK", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}}) ==
        5);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (saved[i]) {
      ::setenv(names[i].c_str(), saved[i]->c_str(), 1);
    } else {
      ::unsetenv(names[i].c_str());
    }
  }
}

}  // namespace test_training_group
