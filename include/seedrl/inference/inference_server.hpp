// InferenceServer<Agent, Backend>: SEED RL's central, batched inference.
//
//   actors ──submit()──▶ RequestBatcher ──▶ inference thread, process(): one StepBatch
//                          (inference/step_batch.hpp) through five stages. A batch is up to
//                          max_batch frames, every connected environment's frame, or what arrived
//                          within batch_timeout of the oldest request (a half-full batch is
//                          served; seed_rl's batcher would wait forever)
//            gather   (past a synchronous learner's gate: experience/acting_gate.hpp) copy
//                     observations, declared step fields and slots' recurrent state in
//                     (BatchGather, ServerSlots); observations normalised (ServerNormalizer)
//            forward  the network on the learner's newest values (inference/server_network.hpp),
//                     for the rows that act for it (not a waiting seat's, nor an opponent set's:
//                     inference/live_rows.hpp):
//                     on the CPU a private copy refreshed when they moved, on a GPU the
//                     learner's values in place under the lock, the forward replayed from a CUDA
//                     graph per batch size (inference/graphed_forward.hpp)
//            select   the action kind, chosen once from the spec (inference/action_kind.hpp):
//                     Agent::select_actions under masks and branches, or select_box_actions
//                     clipped to the environment's bounds
//            scatter  actions to the requests (the action kind), new recurrent state to the slots
//            record   episode figures; UnrollStore::append ──full unroll──▶ UnrollQueue ──▶
//                     learner (UnrollRecorder; a full queue blocks here: back-pressure)
//          ◀──actions──────
//
// Slots: every environment of a connected actor has a slot holding its recurrent state, its
// partial unroll and its episode accumulators. Each connection owns its slots (SlotTable): a step
// must present the connection id they were given to. A step from another connection than the one a
// slot served last restarts the slot (zero state, partial unroll dropped): every (re)connect of an
// actor is a new connection. Evaluation slots act greedily and produce no unrolls; a waiting
// seat's rows (step_flags::kWaiting) and self-play opponents' (serve_opponents) leave nothing.
//
// Thread-safety: connect/submit/step/disconnect from any number of threads; one internal
// inference thread (start()/stop()). A peer's bad request is answered with
// Status::invalid_argument and never disturbs the other actors.
#pragma once

#include <atomic>
#include <memory>
#include <span>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/core/thread_name.hpp"
#include "seedrl/experience/episode_stats.hpp"
#include "seedrl/inference/action_kinds.hpp"
#include "seedrl/inference/batch_gather.hpp"
#include "seedrl/inference/batch_outcomes.hpp"
#include "seedrl/inference/opponents.hpp"
#include "seedrl/inference/request_batcher.hpp"
#include "seedrl/inference/server_network.hpp"
#include "seedrl/inference/server_normalizer.hpp"
#include "seedrl/inference/server_options.hpp"
#include "seedrl/inference/server_slots.hpp"
#include "seedrl/inference/slot_table.hpp"
#include "seedrl/inference/step_batch.hpp"
#include "seedrl/inference/step_validation.hpp"
#include "seedrl/inference/unroll_recorder.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/shared/shared_parameters.hpp"
#include "seedrl/shared/unroll_layout.hpp"

namespace seedrl {

template <Agent A, nn::Backend B>
class InferenceServer final : public InferenceEndpoint {
 public:
  /// Serves steps of `spec` (observations, actions and declared fields); actors must connect with
  /// the same spec.
  InferenceServer(const A& agent, SharedParameters& parameters, UnrollQueue& unrolls,
                  const StepSpec& spec, const InferenceServerOptions& options = {})
      : agent_((options.validate(), require_agent_serves(agent, spec, "InferenceServer"), agent)),
        unrolls_(unrolls),
        spec_(spec),
        options_(options),
        network_(agent.network_config(), parameters, options.graphs),
        table_(options.max_slots),
        slots_(options.max_slots, agent.network_config().lstm_size),
        normalizer_(agent.options().normalization, spec.observation, agent.options().discount,
                    options.max_slots),
        gather_(spec, B::device),
        actions_(make_action_kind<A, B>(agent, spec)),
        recorder_(options.max_slots, make_unroll_spec(agent, spec, options), unrolls),
        rng_(options.seed),
        batcher_(options.max_batch, options.batch_timeout,
                 [this](std::span<StepRequest* const> batch, std::int64_t frames,
                        std::span<Status> answers) { process(batch, frames, answers); }) {}

  /// The same for steps with no declared fields.
  InferenceServer(const A& agent, SharedParameters& parameters, UnrollQueue& unrolls,
                  const TensorSpec& observation_spec, const ActionSpec& action_spec,
                  const InferenceServerOptions& options = {})
      : InferenceServer(agent, parameters, unrolls, StepSpec{observation_spec, action_spec, {}},
                        options) {}

  ~InferenceServer() override { stop(); }
  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  /// Starts the inference thread.
  void start() {
    batcher_.start([this] {
      set_thread_name("seedrl-infer");
      if (options_.flush_denormals) set_flush_denormals(true);
      if constexpr (requires { B::set_num_threads(1); }) B::set_num_threads(options_.threads);
    });
  }

  /// Answers every pending and later step with Status::closed, closes the unroll queue (the
  /// learner then drains it and stops) and joins the inference thread. Idempotent.
  void stop() SEEDRL_EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
    }
    unrolls_.close();  // first: the inference thread may be waiting to push an unroll
    batcher_.stop(Status::closed("inference server stopped"));
  }

  const StepSpec& step_spec() const override { return spec_; }
  const InferenceServerOptions& options() const { return options_; }
  UnrollSpec unroll_spec() const { return recorder_.spec(); }

  Status connect(const ConnectRequest& request, Connection* connection) override
      SEEDRL_EXCLUDES(mutex_) {
    if (Status s = check_actor_spec(request.spec, spec_); !s.is_ok()) return s;
    if (request.num_envs < 1 || request.num_envs > options_.max_batch) {
      return Status::invalid_argument(str_cat(
          "num_envs ", request.num_envs, " must be in [1, max_batch = ", options_.max_batch, "]"));
    }
    MutexLock lock(mutex_);
    if (stopping_) return Status::closed("inference server stopped");
    const Status status = table_.connect(request, connection);
    if (status.is_ok()) batcher_.set_connected_frames(table_.training_occupied());
    return status;
  }

  void submit(StepRequest& request) override SEEDRL_EXCLUDES(mutex_) {
    Status refused = validate_step(request, {spec_, options_.max_slots});
    if (refused.is_ok()) {
      MutexLock lock(mutex_);
      if (stopping_) {
        refused = Status::closed("inference server stopped");
      } else if (!table_.owns(request.connection)) {
        refused =
            Status::invalid_argument("step on slots this connection does not hold (disconnected?)");
      }
    }
    if (!refused.is_ok()) {
      request.on_complete(refused);
      return;
    }
    batcher_.submit(request);
  }

  void disconnect(const Connection& connection) override SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    table_.disconnect(connection);
    // The others may now make a full batch.
    batcher_.set_connected_frames(table_.training_occupied());
  }

  /// Serves the slots `table` assigns to opponent sets with those sets' values (self-play,
  /// inference/opponents.hpp). Call before start(); discrete actions and feed-forward networks.
  void serve_opponents(std::shared_ptr<OpponentTable> table) {
    SEEDRL_REQUIRE(
        table && table->max_slots() == options_.max_slots,
        "InferenceServer: the opponent table must have max_slots = ", options_.max_slots);
    actions_->serve_opponents(agent_);
    opponents_ = std::move(table);
  }

  EpisodeStats& episodes() { return recorder_.episodes(); }
  /// Environment steps taken by training (non-evaluation) actors.
  std::int64_t training_frames() const { return recorder_.training_frames(); }
  /// Rows the learner's network has computed: every row of every batch, except those that wait
  /// and those an opponent set serves (inference/live_rows.hpp). Any thread.
  std::int64_t forward_rows() const { return forward_rows_.load(std::memory_order_relaxed); }
  /// Times an opponent set's values were loaded into a network (once per set in use), and the
  /// networks built for them (inference/opponents.hpp). Any thread.
  std::int64_t opponent_loads() const {
    return actions_->opponents() ? actions_->opponents()->loads() : 0;
  }
  std::int64_t opponent_networks_built() const {
    return actions_->opponents() ? actions_->opponents()->networks_built() : 0;
  }
  /// Continues the frame count of a resumed run.
  void set_training_frames(std::int64_t frames) { recorder_.set_training_frames(frames); }
  InferenceServerStats stats() const { return batcher_.stats(); }
  /// How the forwards ran: plain, or replayed from graphs (GPU backends). Any thread.
  GraphedForwardStats graph_stats() const { return network_.graph_stats(); }

  /// The normalisation statistics (ExperienceNormalizer::to_text; empty when the agent normalises
  /// nothing), for checkpoints. Any thread.
  std::string normalization_text() const { return normalizer_.text(); }
  /// Restores normalization_text() from a checkpoint at `source` (a run resumes); refuses
  /// statistics that do not fit the agent's normalisation, naming `source`.
  void restore_normalization(std::string_view text, std::string_view source) {
    normalizer_.restore(text, source);
  }

 private:
  // One batch of requests holding `frames` environments, through the stages of the top comment.
  // A failure of some requests' rows (an opponent set's) answers them alone; their slots restart.
  void process(std::span<StepRequest* const> requests, std::int64_t frames,
               std::span<Status> answers) {
    unrolls_.acting().wait();
    outcomes_.begin(requests, answers);
    gather(requests, frames);
    forward();
    actions_->select(agent_, batch_, rng_, outcomes_);
    actions_->scatter(batch_);
    slots_.store_states(batch_);
    recorder_.record(batch_, *actions_, normalizer_.scaled_rewards(batch_), outcomes_);
    for (const std::size_t i : outcomes_.failed_requests())
      for (std::int32_t e = 0; e < requests[i]->connection.num_envs; ++e)
        restart_slot(requests[i]->connection.first_slot + e, requests[i]->connection.id);
  }

  // The batch from the requests; which rows act for the learner (the others wait or an opponent
  // set serves them) and which of those its network computes; observations normalised.
  void gather(std::span<StepRequest* const> requests, std::int64_t frames) {
    gather_.gather(requests, frames, batch_, slots_,
                   [this](std::int32_t slot, std::uint64_t id) { restart_slot(slot, id); });
    batch_.policies.assign(batch_.slots.size(), policy_ids::kLearner);
    if (opponents_) opponents_->lookup(batch_.slots, batch_.policies, batch_.opponent_values);
    actions_->plan(batch_, slots_.state_size() > 0);
    normalizer_.normalize_observations(batch_);
  }

  // The network on the batch's live rows (all of them, unless some wait or an opponent set serves
  // them: inference/live_rows.hpp), under the learner's newest parameters
  // (inference/server_network.hpp).
  void forward() {
    LiveRows& live = batch_.live;
    forward_rows_.fetch_add(live.count(), std::memory_order_relaxed);
    if (live.all()) {
      batch_.outputs =
          &network_.forward(batch_.observations, batch_.state_in, batch_.resets, batch_.version);
    } else {
      batch_.outputs = live.count() == 0
                           ? nullptr
                           : &network_.forward(live.observations(batch_.observations), {},
                                               live.resets(batch_.resets), batch_.version);
    }
  }

  void restart_slot(std::int32_t slot, std::uint64_t connection) {
    slots_.restart(slot, connection);
    recorder_.restart_slot(slot);
    normalizer_.restart_slot(slot);
  }

  // Each member is built from the constructor's arguments alone, never from another member.
  const A agent_;  // a copy: the caller's agent may be a temporary
  UnrollQueue& unrolls_;
  const StepSpec spec_;
  const InferenceServerOptions options_;
  ServerNetwork<B> network_;

  mutable Mutex mutex_;
  SlotTable table_ SEEDRL_GUARDED_BY(mutex_);
  bool stopping_ SEEDRL_GUARDED_BY(mutex_) = false;

  // The inference thread's: the slots, the stages a batch passes through, the batch.
  ServerSlots slots_;
  ServerNormalizer normalizer_;  // its statistics: any thread (checkpoints)
  BatchGather gather_;
  const std::unique_ptr<ActionKind<A, B>> actions_;  // select, scatter, record's actions
  UnrollRecorder recorder_;
  StepBatch batch_{B::device};
  Rng rng_;
  std::shared_ptr<OpponentTable> opponents_;   // set before start(); null: none
  BatchOutcomes outcomes_;                     // the batch's answers
  std::atomic<std::int64_t> forward_rows_{0};  // rows the learner's network computed (any thread)
  RequestBatcher batcher_;  // last: its thread is stopped before the members it uses go
};

}  // namespace seedrl
