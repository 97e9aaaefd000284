// Actor<Env, Client>: steps a batch of environments and nothing else; inference chooses the
// actions (SEED RL: actors hold no model).
//
//   reset all envs ──▶ client.step(step record, actions) ──▶ actions ──▶ env.step ─┐
//                        ▲                                                         │
//                        └─────────────────────────────────────────────────────────┘
//
// The step record (core/step_record.hpp) is the actor's buffers: observations, rewards, step flags
// and one buffer per field the environments declare (env/environment.hpp); environment e writes
// its row of them.
//
// Every episode's last observation is sent (flagged terminated or truncated) so the learner can
// bootstrap a truncated episode from it; the action returned for it is not executed: the
// environment is reset and its first observation sent next, flagged first, with reward 0.
//
// A run id, a fresh random 64-bit number, is drawn at every (re)connection (it names the run in
// the server's logs); the server restarts the actor's slots for every new connection. run() returns
// when stop() is called or the server closes or refuses; a lost connection (unavailable, deadline
// exceeded) is retried with capped exponential back-off.
//
// Thread-safety: run() on one thread; stop(), stats() and run_id() from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

#include "seedrl/acting/inference_client.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/env/environment.hpp"
#include "seedrl/experience/unroll.hpp"

namespace seedrl {

struct ActorOptions {
  bool evaluation = false;       ///< greedy actions, no training data
  std::int32_t first_slot = -1;  ///< fixed slots (in-process); -1: the server picks
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
};

struct ActorStats {
  std::int64_t frames = 0;  ///< environment steps taken
  std::int64_t episodes = 0;
  double mean_return = 0.0;  ///< over the last 100 episodes
  std::int64_t connections = 0;
};

/// A fresh random 64-bit run id (never 0).
inline std::uint64_t new_run_id() {
  static Mutex mutex;
  static std::mt19937_64 generator SEEDRL_GUARDED_BY(mutex) = [] {
    std::random_device device;
    std::seed_seq seq{
        device(), device(), device(), device(),
        static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count())};
    return std::mt19937_64(seq);
  }();
  MutexLock lock(mutex);
  std::uint64_t id = 0;
  while (id == 0) id = generator();
  return id;
}

template <Environment Env, InferenceClient Client>
class Actor {
  // Box environments take D floats per step; their client must carry them. Branched ones take K
  // i32.
  static constexpr bool kBranched = BranchedEnvironment<Env>;
  static constexpr bool kBox = !DiscreteEnvironment<Env> && !kBranched;
  static_assert(!kBox || BoxInferenceClient<Client>,
                "Actor: the environments take box actions but the client carries only discrete "
                "ones (see BoxInferenceClient)");
  using Action = std::conditional_t<kBox, float, std::int32_t>;

 public:
  Actor(std::vector<Env> envs, Client client, const ActorOptions& options = {})
      : envs_(std::move(envs)), client_(std::move(client)), options_(options) {
    SEEDRL_REQUIRE(!envs_.empty(), "Actor: no environments");
    spec_ = seedrl::step_spec(envs_.front());
    for (const Env& env : envs_) {
      SEEDRL_REQUIRE(seedrl::step_spec(env) == spec_,
                     "Actor: environments with different step specs (", spec_.to_string(), " and ",
                     seedrl::step_spec(env).to_string(), ")");
    }
    spec_.validate("Actor: the environments' step spec");
    SEEDRL_REQUIRE(spec_.action.is_box() == kBox, "Actor: the environments report ",
                   spec_.action.to_string(), " but their step() takes ", kBox ? "box" : "discrete",
                   " actions");
    SEEDRL_REQUIRE(kBox || spec_.action.is_branched() == kBranched,
                   "Actor: the environments report ", spec_.action.to_string(),
                   " but their step() takes ",
                   kBranched ? "one action per branch (a span)" : "one discrete action");
    const auto n = static_cast<std::int64_t>(envs_.size());
    observations_ = Tensor::empty(spec_.observation.shape.prepend({n}), spec_.observation.dtype);
    for (const StepFieldSpec& f : spec_.fields)
      fields_.push_back(Tensor::zeros(f.spec.shape.prepend({n}), f.spec.dtype));
    rewards_.assign(envs_.size(), 0.0f);
    flags_.assign(envs_.size(), 0);
    actions_.assign(envs_.size() * static_cast<std::size_t>(spec_.action.dims()), Action{});
    episode_returns_.assign(envs_.size(), 0.0);
  }

  /// Plays until stop() or until the server closes. Returns why it stopped (ok after stop()).
  Status run() SEEDRL_EXCLUDES(stop_mutex_, stats_mutex_) {
    std::chrono::milliseconds backoff = options_.initial_backoff;
    while (!stopping_) {
      const Status status = play_one_connection();
      if (stopping_) break;
      if (!status.is_unavailable() && !status.is_deadline_exceeded() && !status.is_ok())
        return status;
      if (status.is_ok()) {
        backoff = options_.initial_backoff;
        continue;
      }
      // Connection lost: wait (interruptibly), then reconnect with a new run id.
      const auto deadline = deadline_after(backoff);
      MutexLock lock(stop_mutex_);
      while (!stopping_) {
        if (stop_signal_.wait_until(lock, deadline) == std::cv_status::timeout) break;
      }
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
    return Status::ok();
  }

  /// Makes run() return soon: at once when it waits to reconnect, and also in the middle of a
  /// step when the client can be interrupted (RemoteClient can).
  void stop() SEEDRL_EXCLUDES(stop_mutex_) {
    {
      MutexLock lock(stop_mutex_);
      stopping_ = true;
    }
    stop_signal_.notify_all();
    if constexpr (requires { client_.interrupt(); }) client_.interrupt();
  }

  ActorStats stats() const SEEDRL_EXCLUDES(stats_mutex_) {
    MutexLock lock(stats_mutex_);
    ActorStats s;
    s.frames = frames_;
    s.episodes = episodes_;
    s.connections = connections_;
    for (double r : recent_returns_) s.mean_return += r;
    if (!recent_returns_.empty()) s.mean_return /= static_cast<double>(recent_returns_.size());
    return s;
  }

  std::uint64_t run_id() const { return run_id_.load(); }
  std::int32_t num_envs() const { return static_cast<std::int32_t>(envs_.size()); }
  /// What the actor's environments' steps are (their specs and declared fields).
  const StepSpec& step_spec() const { return spec_; }

 private:
  Status play_one_connection() SEEDRL_EXCLUDES(stats_mutex_) {
    ConnectRequest request;
    request.run_id = new_run_id();
    request.num_envs = num_envs();
    request.evaluation = options_.evaluation;
    request.spec = spec_;
    request.first_slot = options_.first_slot;
    run_id_ = request.run_id;
    Status status = client_.connect(request);
    if (!status.is_ok()) return status;
    {
      MutexLock lock(stats_mutex_);
      ++connections_;
    }
    for (std::size_t e = 0; e < envs_.size(); ++e) restart(e);
    const StepRecord record{observations_, rewards_, flags_, fields_};
    while (!stopping_) {
      status = client_.step(record, std::span<Action>(actions_));
      if (!status.is_ok()) break;
      for (std::size_t e = 0; e < envs_.size(); ++e) {
        if (is_last(flags_[e])) {
          restart(e);
          continue;
        }
        const StepResult result = step_row(envs_[e], action(e), row(e));
        rewards_[e] = result.reward;
        flags_[e] = static_cast<std::uint8_t>((result.terminated ? step_flags::kTerminated : 0) |
                                              (result.truncated ? step_flags::kTruncated : 0));
        episode_returns_[e] += result.reward;
        MutexLock lock(stats_mutex_);
        ++frames_;
        if (result.episode_over()) {
          ++episodes_;
          recent_returns_.push_back(episode_returns_[e]);
          if (recent_returns_.size() > 100) recent_returns_.pop_front();
        }
      }
    }
    client_.disconnect();
    return status.is_ok() || stopping_ ? Status::ok() : status;
  }

  // Environment e's action as its step() takes it.
  auto action(std::size_t e) const {
    if constexpr (kBox) {
      const auto dims = static_cast<std::size_t>(spec_.action.dims());
      return std::span<const float>(actions_).subspan(e * dims, dims);
    } else if constexpr (kBranched) {
      const auto k = static_cast<std::size_t>(spec_.action.dims());
      return std::span<const std::int32_t>(actions_).subspan(e * k, k);
    } else {
      return actions_[e];
    }
  }

  // Environment e's row of the step record.
  StepRow row(std::size_t e) const {
    const auto i = static_cast<std::int64_t>(e);
    return StepRow(observations_[i], spec_.fields, fields_, i);
  }

  void restart(std::size_t e) {
    reset_row(envs_[e], row(e));
    rewards_[e] = 0.0f;
    flags_[e] = step_flags::kFirst;
    episode_returns_[e] = 0.0;
  }

  std::vector<Env> envs_;
  Client client_;
  ActorOptions options_;
  StepSpec spec_;
  Tensor observations_;
  std::vector<Tensor> fields_;  // one [num_envs, field...] buffer per declared field
  std::vector<float> rewards_;
  std::vector<std::uint8_t> flags_;
  std::vector<Action> actions_;  // num_envs (discrete), num_envs * K (branches) or * D (box)
  std::vector<double> episode_returns_;

  // Read without the lock by run(); stop() sets it under stop_mutex_ so that a run() about to wait
  // for the back-off cannot miss the wake-up.
  std::atomic<bool> stopping_{false};
  Mutex stop_mutex_;
  CondVar stop_signal_;
  std::atomic<std::uint64_t> run_id_{0};

  mutable Mutex stats_mutex_;
  std::int64_t frames_ SEEDRL_GUARDED_BY(stats_mutex_) = 0;
  std::int64_t episodes_ SEEDRL_GUARDED_BY(stats_mutex_) = 0;
  std::int64_t connections_ SEEDRL_GUARDED_BY(stats_mutex_) = 0;
  std::deque<double> recent_returns_ SEEDRL_GUARDED_BY(stats_mutex_);
};

}  // namespace seedrl
