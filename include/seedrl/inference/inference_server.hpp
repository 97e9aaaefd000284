// InferenceServer<Agent, Backend>: SEED RL's central, batched inference.
//
//   actors ──submit()──▶ RequestBatcher ──▶ inference thread, process(batch) in five phases:
//                          a batch is up to max_batch frames, every connected environment's
//                          frame, or what arrived within batch_timeout of the oldest request (a
//                          half-full batch is served; seed_rl's batcher would wait forever)
//            gather   (past a synchronous learner's gate: experience/acting_gate.hpp) copy
//                     observations, declared step fields and slots' recurrent state in
//            forward  the network on the learner's newest values (inference/server_network.hpp),
//                     for the rows that act for it (not a waiting seat's, nor an opponent set's:
//                     inference/live_rows.hpp):
//                     on the CPU a private copy refreshed when they moved, on a GPU the
//                     learner's values in place under the lock, the forward replayed from a CUDA
//                     graph per batch size (inference/graphed_forward.hpp)
//            select   Agent::select_actions (box actions: Agent::select_box_actions, then
//                     clipped to the environment's bounds)
//            scatter  actions to the requests, new recurrent state to the slots
//            record   episode figures; UnrollStore::append ──full unroll──▶ UnrollQueue ──▶
//                     learner (a full queue blocks here: back-pressure to the actors)
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

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/agent/agent.hpp"
#include "seedrl/core/float_mode.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/core/thread_name.hpp"
#include "seedrl/experience/episode_stats.hpp"
#include "seedrl/experience/normalization.hpp"
#include "seedrl/experience/unroll_store.hpp"
#include "seedrl/inference/batch_outcomes.hpp"
#include "seedrl/inference/box_actions.hpp"
#include "seedrl/inference/live_rows.hpp"
#include "seedrl/inference/opponents.hpp"
#include "seedrl/inference/request_batcher.hpp"
#include "seedrl/inference/server_network.hpp"
#include "seedrl/inference/server_options.hpp"
#include "seedrl/inference/slot_table.hpp"
#include "seedrl/inference/step_validation.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/shared/shared_parameters.hpp"

namespace seedrl {

template <Agent A, nn::Backend B>
class InferenceServer final : public InferenceEndpoint {
 public:
  /// Serves steps of `spec` (observations, actions and declared fields); actors must connect with
  /// the same spec.
  InferenceServer(const A& agent, SharedParameters& parameters, UnrollQueue& unrolls,
                  const StepSpec& spec, const InferenceServerOptions& options = {})
      : agent_(agent),
        unrolls_(unrolls),
        spec_(spec),
        options_((options.validate(), options)),
        network_(agent.network_config(), parameters, options.graphs),
        store_(options.max_slots, make_unroll_spec(agent, spec, options), &unrolls.pool()),
        table_(options.max_slots),
        slots_(static_cast<std::size_t>(options.max_slots)),
        rng_(options.seed),
        batcher_(options.max_batch, options.batch_timeout,
                 [this](std::span<StepRequest* const> batch, std::int64_t frames,
                        std::span<Status> answers) { process(batch, frames, answers); }) {
    require_agent_serves(agent, spec, "InferenceServer");
    const NormalizationOptions& normalization = agent.options().normalization;
    if (normalization.any()) {
      SEEDRL_REQUIRE(!normalization.observations || spec.observation.dtype == DType::f32,
                     "InferenceServer: normalization.observations needs f32 observations, got ",
                     spec.observation.to_string());
      MutexLock lock(normalizer_mutex_);
      normalizer_.emplace(normalization, spec.observation.shape.numel(), agent.options().discount,
                          options.max_slots);
      normalize_observations_ = normalization.observations;
      scale_rewards_ = normalization.rewards;
    }
    if (state_size() > 0) {
      state_table_ = {Tensor::zeros({options.max_slots, state_size()}),
                      Tensor::zeros({options.max_slots, state_size()})};
    }
  }

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
  UnrollSpec unroll_spec() const { return store_.spec(); }

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
    if (status.is_ok()) batcher_.set_connected_frames(table_.occupied());
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
    batcher_.set_connected_frames(table_.occupied());  // the others may now make a full batch
  }

  /// Serves the slots `table` assigns to opponent sets with those sets' values (self-play,
  /// inference/opponents.hpp). Call before start(); discrete actions and feed-forward networks.
  void serve_opponents(std::shared_ptr<OpponentTable> table) {
    SEEDRL_REQUIRE(
        table && table->max_slots() == options_.max_slots,
        "InferenceServer: the opponent table must have max_slots = ", options_.max_slots);
    SEEDRL_REQUIRE(!box(), "InferenceServer: opponent sets act in discrete action spaces, not ",
                   spec_.action.to_string());
    opponent_acting_.emplace(agent_);
    opponents_ = std::move(table);
  }

  EpisodeStats& episodes() { return episodes_; }
  /// Environment steps taken by training (non-evaluation) actors.
  std::int64_t training_frames() const { return training_frames_.load(); }
  /// Rows the learner's network has computed: every row of every batch, except those that wait
  /// and those an opponent set serves (inference/live_rows.hpp). Any thread.
  std::int64_t forward_rows() const { return forward_rows_.load(std::memory_order_relaxed); }
  /// Times an opponent set's values were loaded into a network (once per set in use), and the
  /// networks built for them (inference/opponents.hpp). Any thread.
  std::int64_t opponent_loads() const { return opponent_acting_ ? opponent_acting_->loads() : 0; }
  std::int64_t opponent_networks_built() const {
    return opponent_acting_ ? opponent_acting_->networks_built() : 0;
  }
  /// Continues the frame count of a resumed run.
  void set_training_frames(std::int64_t frames) { training_frames_ = frames; }
  InferenceServerStats stats() const { return batcher_.stats(); }
  /// How the forwards ran: plain, or replayed from graphs (GPU backends). Any thread.
  GraphedForwardStats graph_stats() const { return network_.graph_stats(); }

  /// The normalisation statistics (ExperienceNormalizer::to_text; empty when the agent normalises
  /// nothing), for checkpoints. Any thread.
  std::string normalization_text() const SEEDRL_EXCLUDES(normalizer_mutex_) {
    MutexLock lock(normalizer_mutex_);
    return seedrl::normalization_text(normalizer_);
  }
  /// Restores normalization_text() from a checkpoint at `source` (a run resumes); refuses
  /// statistics that do not fit the agent's normalisation, naming `source`.
  void restore_normalization(std::string_view text, std::string_view source)
      SEEDRL_EXCLUDES(normalizer_mutex_) {
    MutexLock lock(normalizer_mutex_);
    seedrl::restore_normalization(normalizer_, text, source);
  }

 private:
  // The inference thread's view of a slot.
  struct SlotState {
    std::uint64_t connection = 0;  // the connection id the slot served last
    EpisodeInProgress episode;
  };

  std::int64_t state_size() const { return agent_.network_config().lstm_size; }
  bool box() const { return spec_.action.is_box(); }

  // One batch of requests holding `frames` environments, in the phases of the top comment. A
  // failure of some requests' rows (an opponent set's) answers them alone; their slots restart.
  void process(std::span<StepRequest* const> batch, std::int64_t frames,
               std::span<Status> answers) {
    unrolls_.acting().wait();
    outcomes_.begin(batch, answers);
    gather(batch, frames);
    forward();
    if (box()) {
      box_.select(agent_, *outputs_, frame_evaluation_, spec_.action, rng_, version_);
    } else {
      ActingContext context{{}, branches_};
      if (mask_field_ >= 0) {  // a branch that allows nothing (a last step's: validate_step)
        const Tensor& masks = fields_[static_cast<std::size_t>(mask_field_)];
        const std::span<std::uint8_t> m(masks.data<std::uint8_t>(), masks.numel());
        math::allow_all_where_none(m, branches_);
        context.action_mask = m;
      }
      if (live_.all()) {
        select_actions(agent_, *outputs_, frame_slots_, frame_evaluation_, frame_actions_, rng_,
                       context);
      } else {
        live_.select(agent_, outputs_, frame_slots_, frame_evaluation_, context, frame_actions_,
                     rng_);
      }
      if (!opponent_values_.empty()) {
        opponent_acting_->act(agent_, frame_policies_, frame_flags_, opponent_values_,
                              observations_, frame_slots_, context, frame_actions_, rng_,
                              outcomes_);
      }
    }
    scatter(batch);
    record(batch);
    for (const std::size_t i : outcomes_.failed_requests())
      for (std::int32_t e = 0; e < batch[i]->connection.num_envs; ++e)
        restart_slot(batch[i]->connection.first_slot + e, batch[i]->connection.id);
  }

  // One copy of each request's observations into the batch; the slots' recurrent state; a slot
  // serving a new connection restarts.
  void gather(std::span<StepRequest* const> batch, std::int64_t frames) {
    observations_ = observation_buffer_.view(spec_.observation.shape.prepend({1, frames}),
                                             spec_.observation.dtype);
    for (std::size_t k = 0; k < spec_.fields.size(); ++k) {
      const TensorSpec& f = spec_.fields[k].spec;
      fields_[k] = field_buffers_[k].view(f.shape.prepend({frames}), f.dtype);
    }
    resets_ = reset_buffer_.view({1, frames}, DType::u8);
    state_in_ = {};
    if (state_size() > 0) {
      state_in_ = {state_h_buffer_.view({frames, state_size()}),
                   state_c_buffer_.view({frames, state_size()})};
    }
    frame_slots_.resize(static_cast<std::size_t>(frames));
    frame_flags_.resize(static_cast<std::size_t>(frames));
    frame_evaluation_.resize(static_cast<std::size_t>(frames));
    frame_actions_.resize(static_cast<std::size_t>(frames) * k_);
    std::int64_t row = 0;
    const Tensor frame_observations = observations_[0];
    const auto state_bytes = static_cast<std::size_t>(state_size()) * sizeof(float);
    for (const StepRequest* r : batch) {
      std::memcpy(frame_observations.row_data(row), r->step.observations.raw_data(),
                  r->step.observations.bytes());
      for (std::size_t k = 0; k < fields_.size(); ++k) {
        std::memcpy(fields_[k].row_data(row), r->step.fields[k].raw_data(),
                    r->step.fields[k].bytes());
      }
      for (std::int32_t e = 0; e < r->connection.num_envs; ++e, ++row) {
        const std::int32_t slot = r->connection.first_slot + e;
        if (slots_[static_cast<std::size_t>(slot)].connection != r->connection.id)
          restart_slot(slot, r->connection.id);
        frame_flags_[static_cast<std::size_t>(row)] = r->step.flags[static_cast<std::size_t>(e)];
        resets_.data<std::uint8_t>()[row] =
            is_first(r->step.flags[static_cast<std::size_t>(e)]) ? 1 : 0;
        frame_slots_[static_cast<std::size_t>(row)] = slot;
        frame_evaluation_[static_cast<std::size_t>(row)] = r->connection.evaluation ? 1 : 0;
        if (state_size() > 0) {  // row views would cost two reference counts each
          std::memcpy(state_in_.h.row_data(row), state_table_.h.row_data(slot), state_bytes);
          std::memcpy(state_in_.c.row_data(row), state_table_.c.row_data(slot), state_bytes);
        }
      }
    }
    frame_policies_.assign(frame_slots_.size(), policy_ids::kLearner);
    if (opponents_) opponents_->lookup(frame_slots_, frame_policies_, opponent_values_);
    // A recurrent network's state and a box's draws are the whole batch's: those forward it all.
    if (state_size() == 0 && !box()) {
      live_.plan(frame_flags_, frame_policies_);
    } else {
      live_.plan_all(frame_flags_.size());
    }
    if (normalize_observations_) {
      MutexLock lock(normalizer_mutex_);
      normalizer_->normalize_observations(
          observations_.reshape({frames, spec_.observation.shape.numel()}).template matrix<float>(),
          frame_evaluation_);
    }
  }

  // The network on the batch's live rows (all of them, unless some wait or an opponent set serves
  // them: inference/live_rows.hpp), under the learner's newest parameters
  // (inference/server_network.hpp).
  void forward() {
    forward_rows_.fetch_add(live_.count(), std::memory_order_relaxed);
    if (live_.all()) {
      outputs_ = &network_.forward(observations_, state_in_, resets_, version_);
    } else {
      outputs_ = live_.count() == 0 ? nullptr
                                    : &network_.forward(live_.observations(observations_), {},
                                                        live_.resets(resets_), version_);
    }
  }

  // Actions to the requests, the new recurrent state to the slots.
  void scatter(std::span<StepRequest* const> batch) {
    std::int64_t row = 0;
    const auto state_bytes = static_cast<std::size_t>(state_size()) * sizeof(float);
    const std::int64_t dims = spec_.action.dims();
    for (StepRequest* r : batch) {
      for (std::int32_t e = 0; e < r->connection.num_envs; ++e, ++row) {
        if (box()) {
          std::memcpy(r->box_actions.data() + e * dims, box_.clipped.row(row).data(),
                      static_cast<std::size_t>(dims) * sizeof(float));
        } else {
          const auto first = frame_actions_.begin() + row * static_cast<std::ptrdiff_t>(k_);
          std::copy(first, first + static_cast<std::ptrdiff_t>(k_), &r->actions[e * k_]);
        }
        if (state_size() > 0 && !is_waiting(r->step.flags[static_cast<std::size_t>(e)])) {
          const std::int32_t slot = frame_slots_[static_cast<std::size_t>(row)];
          std::memcpy(state_table_.h.row_data(slot), outputs_->final_state.h.row_data(row),
                      state_bytes);
          std::memcpy(state_table_.c.row_data(slot), outputs_->final_state.c.row_data(row),
                      state_bytes);
        }
      }
    }
  }

  // Episode figures of every slot (raw rewards); the training slots' steps (scaled rewards when
  // the agent scales them) to their unrolls.
  void record(std::span<StepRequest* const> batch) {
    const bool scaling = scale_rewards_;
    if (scaling) {
      frame_rewards_.clear();
      for (const StepRequest* r : batch)
        frame_rewards_.insert(frame_rewards_.end(), r->step.rewards.begin(), r->step.rewards.end());
      MutexLock lock(normalizer_mutex_);
      normalizer_->scale_rewards(frame_slots_, frame_flags_, frame_evaluation_, frame_rewards_);
    }
    std::int64_t row = 0;
    const Tensor frame_observations = observations_[0];
    // The behaviour numbers the unrolls keep: logits, or the Q-values (R2D2's actor priorities).
    Tensor behaviour;
    if constexpr (A::kStoresLogits) {
      if (!box() && outputs_ != nullptr) behaviour = outputs_->logits[0];
    } else if (records_q_ && outputs_ != nullptr) {
      behaviour = outputs_->q[0];
    }
    for (std::size_t request = 0; request < batch.size(); ++request) {
      const StepRequest* r = batch[request];
      if (outcomes_.failed(request)) {  // nothing of a failed step is kept
        row += r->connection.num_envs;
        continue;
      }
      for (std::int32_t e = 0; e < r->connection.num_envs; ++e, ++row) {
        const auto i = static_cast<std::size_t>(row);
        const std::int32_t slot = frame_slots_[i];
        const std::uint8_t flags = r->step.flags[static_cast<std::size_t>(e)];
        const float reward = r->step.rewards[static_cast<std::size_t>(e)];
        // A waiting seat's row, and an opponent's (inference/opponents.hpp), leave nothing.
        if (is_waiting(flags) || frame_policies_[i] != policy_ids::kLearner) continue;
        if (!is_first(flags) && !r->connection.evaluation) ++training_frames_;
        if (const auto done = slots_[static_cast<std::size_t>(slot)].episode.step(
                flags, reward, r->connection.evaluation))
          episodes_.record(*done);
        if (r->connection.evaluation) continue;
        UnrollStep step;
        step.observation = frame_observations[row];
        step.reward = scaling ? frame_rewards_[i] : reward;
        step.flags = flags;
        if (box()) {
          step.box_action = box_.drawn.row(row).data();
          if constexpr (A::kStoresLogits) step.behaviour = box_.behaviour.row(row).data();
        } else {
          step.action = frame_actions_[i * k_];
          step.branch_actions = &frame_actions_[i * k_];
          if (behaviour.defined()) step.behaviour = behaviour.row_data<float>(live_.index(row));
        }
        step.policy_version = version_;
        step.fields = fields_;
        step.field_row = row;
        if (state_size() > 0) {
          step.state_h = state_in_.h.template row_data<float>(row);
          step.state_c = state_in_.c.template row_data<float>(row);
        }
        if (std::unique_ptr<Unroll> unroll = store_.append(slot, step))
          unrolls_.push(std::move(unroll));
      }
    }
  }

  void restart_slot(std::int32_t slot, std::uint64_t connection) {
    slots_[static_cast<std::size_t>(slot)] = SlotState{connection, {}};
    store_.reset(slot);
    if (scale_rewards_) {
      MutexLock lock(normalizer_mutex_);
      normalizer_->restart_slot(slot);
    }
    if (state_table_.h.defined()) {
      state_table_.h[slot].fill_zero();
      state_table_.c[slot].fill_zero();
    }
  }

  const A agent_;  // a copy: the caller's agent may be a temporary
  UnrollQueue& unrolls_;
  const StepSpec spec_;
  const InferenceServerOptions options_;
  ServerNetwork<B> network_;
  UnrollStore store_;

  mutable Mutex mutex_;
  SlotTable table_ SEEDRL_GUARDED_BY(mutex_);
  bool stopping_ SEEDRL_GUARDED_BY(mutex_) = false;

  // Inference thread only: the slots' state and the batch being processed.
  std::vector<SlotState> slots_;
  nn::LstmState state_table_;
  Tensor observations_, resets_;
  std::vector<Tensor> fields_ = std::vector<Tensor>(spec_.fields.size());  // [frames, field...]
  nn::LstmState state_in_;
  const nn::NetworkOutputs* outputs_ = nullptr;
  std::int32_t version_ = 0;
  const bool records_q_ = records_q_values(agent_);         // the unrolls keep the Q-values
  std::vector<std::int32_t> frame_slots_, frame_policies_;  // policy_ids, or an opponent set
  std::vector<std::uint8_t> frame_evaluation_;
  std::vector<std::int32_t> frame_actions_;
  BoxActions box_;                    // a batch's box actions
  std::vector<float> frame_rewards_;  // scaled, when the agent scales rewards
  std::vector<std::uint8_t> frame_flags_;
  LiveRows live_{B::device};                   // the rows the forward computes
  std::atomic<std::int64_t> forward_rows_{0};  // rows the learner's network computed
  // Used by the inference thread; the lock lets checkpoints read the statistics meanwhile.
  mutable Mutex normalizer_mutex_;
  std::optional<ExperienceNormalizer> normalizer_ SEEDRL_GUARDED_BY(normalizer_mutex_);
  bool normalize_observations_ = false, scale_rewards_ = false;  // set once, at construction
  // The batch is assembled on the host (in memory page-locked for a GPU backend, which gets one
  // copy per batch); the recurrent state table stays on the host too.
  ScratchBuffer observation_buffer_ = ScratchBuffer::pinned(B::device),
                reset_buffer_ = ScratchBuffer::pinned(B::device),
                state_h_buffer_ = ScratchBuffer::pinned(B::device),
                state_c_buffer_ = ScratchBuffer::pinned(B::device);
  std::vector<ScratchBuffer> field_buffers_ = std::vector<ScratchBuffer>(spec_.fields.size());
  const int mask_field_ = spec_.action_mask_index("InferenceServer");  // -1: no masks
  // The discrete actions' branches (one for a discrete action; unused for a box), and their count.
  const math::Branches branches_ =
      spec_.action.is_box() ? math::Branches({1}) : math::branches_of(spec_.action);
  const std::size_t k_ = static_cast<std::size_t>(branches_.count());
  Rng rng_;
  std::shared_ptr<OpponentTable> opponents_;  // set before start(); null: none
  std::optional<OpponentActing<A, B>> opponent_acting_;
  std::map<std::int32_t, Tensor> opponent_values_;  // the batch's opponent sets

  EpisodeStats episodes_;
  std::atomic<std::int64_t> training_frames_{0};
  BatchOutcomes outcomes_;  // the batch's answers (inference thread)
  RequestBatcher batcher_;  // last: its thread is stopped before the members it uses go
};

}  // namespace seedrl
