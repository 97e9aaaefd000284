// Policy<Backend>: a trained agent inside a host program, made from a checkpoint file alone.
//
//   seedrl::Policy<> policy("run/checkpoint.safetensors");       // CPU backend
//   policy.act(observations, actions);   // observations [N, ...] for streams 0..N-1
//   policy.act({observations, fields}, actions);  // where the run's steps declared fields
//   policy.reset(stream);                // that stream's episode ended: its LSTM state restarts
//
// Discrete actions come as int32 (one per stream, or N x K for K action branches: each stream's
// action of every branch, numbered within the branch), box actions as N x D floats (row-major),
// each clipped to the bounds the checkpoint records (metadata "action_spec"): greedy acting takes
// the Gaussian's mean, `sample` draws from it. Where the run normalised observations (PPO), the
// checkpoint's statistics (metadata "normalization") are applied first, as inference did.
//
// The checkpoint names its network (metadata "network", nn::describe) and holds its parameters;
// the heads are read from the parameter names. It also says how the agent's evaluation actors act
// (metadata "acting": V-trace greedy, R2D2 epsilon-greedy at its evaluation epsilon), and the
// policy acts the same way unless PolicyOptions::acting says otherwise: so a reloaded agent plays
// as the training run's evaluation did. No training runtime, no optimizer state, and no threads
// of its own: act() computes on the calling thread, with PolicyOptions::threads compute threads on
// the CPU backend (default 1, which starts no OpenMP team: a small forward beside the host's busy
// threads is fastest alone, and a team waits at its barriers for any of its threads that another
// thread has descheduled). The calling thread's own setting is back when act() returns.
//
// Streams: every act() takes one observation per stream; a recurrent network keeps each stream's
// LSTM state between calls (an MLP or CNN has none). The first act() fixes the number of streams;
// reset() (all streams) lets the next act() choose again.
//
// Thread-safety: a Policy is not thread-safe (act() and reset() change its state): give each
// thread its own (each loads its own copy of the parameters). The const accessors may be called
// concurrently with each other, not with act().
//
// A Policy can be neither copied nor moved (its network's layers point into its parameters):
// hold it in a std::unique_ptr to pass it around.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seedrl/agent/acting.hpp"
#include "seedrl/algo/sac_loss.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#ifdef SEEDRL_CUDA_SESSIONS
#include "seedrl/backend/cuda/backend.hpp"
#endif
#include "seedrl/core/random.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/env/environment.hpp"
#include "seedrl/experience/normalization.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/io/safetensors.hpp"
#include "seedrl/math/distributions.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

struct PolicyOptions {
  /// How to act; empty: as the checkpoint records for the agent's evaluation actors (greedy for a
  /// checkpoint that records nothing).
  std::optional<ActingOptions> acting;
  std::uint64_t seed = 0;  ///< for sample and epsilon_greedy
  /// Compute threads for act()'s forward on the CPU backend; 0: the calling thread's own setting
  /// (cpu::set_num_threads; OpenMP's default is every core). More than 1 pays only for many
  /// streams or a large network on cores that nothing else is using.
  int threads = 1;
};

/// What Policy::act takes: N streams' observations [N, observation...] and, where the checkpoint's
/// steps declare fields (PolicyDescription::step_fields), each field's N values [N, field...], in
/// the declared order. A Tensor converts to an input without fields.
struct PolicyInput {
  PolicyInput(Tensor observations_in, std::span<const Tensor> fields_in = {})  // NOLINT: implicit
      : observations(std::move(observations_in)), fields(fields_in) {}
  Tensor observations;
  std::span<const Tensor> fields;
};

/// What a checkpoint says about the agent in it, read without building anything.
struct PolicyDescription {
  std::string agent;  ///< "vtrace", "r2d2", ... (empty where the checkpoint does not say)
  nn::NetworkOptions network;
  ActingOptions acting;  ///< the agent's evaluation acting (greedy where not recorded)
  io::CheckpointCounters counters;
  /// The actions: the network's discrete actions, or the box (with bounds) the run recorded.
  ActionSpec action_spec;
  /// The observation statistics the run normalised with (inactive where it did not).
  ObservationNormalization normalization;
  /// The fields the run's steps declared (metadata "step_fields"; none where it records none):
  /// act() takes them beside the observations.
  std::vector<StepFieldSpec> step_fields;
  /// SAC's policy (metadata "policy": "squashed_gaussian MIN MAX"): the action is tanh(u) scaled
  /// to the box, u ~ N(mean, exp(log_std)) with log_std = MIN + (MAX - MIN)(tanh(raw) + 1) / 2 of
  /// the network's raw output (algo/sac_loss.hpp); greedy acting takes u = mean. Empty: a plain
  /// Gaussian whose draws are clipped to the box.
  std::optional<SacLogStdBounds> squashed;
};

/// Reads `checkpoint`'s description; throws naming the file and the missing or unknown part.
PolicyDescription describe_checkpoint(const std::string& checkpoint);
PolicyDescription describe_checkpoint(const io::SafetensorsFile& checkpoint);

template <nn::Backend B = cpu::Backend>
class Policy {
 public:
  explicit Policy(const std::string& checkpoint, PolicyOptions options = {});
  /// The same from a checkpoint already read (SafetensorsFile::read).
  explicit Policy(const io::SafetensorsFile& checkpoint, PolicyOptions options = {});

  const std::string& checkpoint() const { return checkpoint_; }
  const std::string& agent() const { return description_.agent; }
  /// Everything the checkpoint says about the agent (describe_checkpoint).
  const PolicyDescription& description() const { return description_; }
  const nn::NetworkOptions& network_config() const { return description_.network; }
  /// The frames, learner steps and episodes the run had when it saved the checkpoint.
  const io::CheckpointCounters& counters() const { return description_.counters; }
  const ActingOptions& acting() const { return acting_; }
  /// Discrete actions (0 for a box).
  std::int64_t num_actions() const { return description_.network.num_actions; }
  /// What act() returns: discrete actions, or a box of dims() values per stream with bounds.
  const ActionSpec& action_spec() const { return description_.action_spec; }
  /// The observation normalisation act() applies (inactive where the run had none).
  const ObservationNormalization& normalization() const { return description_.normalization; }
  /// The step fields act() takes beside the observations (none for most runs).
  const std::vector<StepFieldSpec>& step_fields() const { return description_.step_fields; }
  bool recurrent() const { return network_.recurrent(); }
  /// The network the checkpoint holds (e.g. for io::export_onnx).
  const nn::Network<B>& network() const { return network_; }
  /// The streams act() serves (0 until the first act(), and after reset()).
  std::int64_t streams() const { return streams_; }

  /// One action per stream: `input.observations` [N, observation shape...] (f32, or u8 where the
  /// network takes pixels) on any device, and the declared fields if any; `actions` N entries.
  /// Throws naming the mismatch (also for a checkpoint of box actions).
  void act(const PolicyInput& input, std::span<std::int32_t> actions);
  std::vector<std::int32_t> act(const PolicyInput& input);
  /// Box actions: `actions` N x D values (row-major), within the recorded bounds. Throws naming
  /// the mismatch (also for a checkpoint of discrete actions).
  void act(const PolicyInput& input, std::span<float> actions);

  /// Stream `stream`'s next act() starts a new episode (its LSTM state restarts from zero).
  void reset(std::int64_t stream);
  /// Every stream starts a new episode, and the next act() may serve another number of streams.
  void reset();

  /// The last act()'s network outputs ([1, N, A] logits and [1, N] values, [1, N, A] Q-values,
  /// or [1, N, D] mean and log std), on the backend's device; valid until the next act().
  const nn::NetworkOutputs& outputs() const {
    SEEDRL_REQUIRE(outputs_ != nullptr, "Policy::outputs: no act() yet");
    return *outputs_;
  }

 private:
  // Checks the observations, the fields and the room for `values` action values, runs the network
  // and returns the number of streams N.
  std::int64_t run(const PolicyInput& input, std::size_t values, bool box);
  // Throws naming the field unless `fields` are the declared ones, for N streams.
  void require_fields(std::span<const Tensor> fields, std::int64_t n) const;

  std::string checkpoint_;
  PolicyDescription description_;
  ActingOptions acting_;
  Rng rng_;
  nn::Network<B> network_;
  std::int64_t streams_ = 0;
  nn::LstmState state_;
  Tensor resets_;      // [1, N] u8 on the host: 1 where a stream starts a new episode
  Tensor normalized_;  // the normalised observations, on the host
  int threads_;        // PolicyOptions::threads
  const nn::NetworkOutputs* outputs_ = nullptr;
};

// ---- implementation ----

namespace detail {

// For one forward, the calling thread computes with `n` threads where the backend has the
// setting and n > 0 (backend ScopedThreads); otherwise nothing changes.
template <class B>
struct ForwardThreads {
  explicit ForwardThreads(int /*n*/) {}
};
template <class B>
requires requires {
  typename B::ScopedThreads;
}
struct ForwardThreads<B> {
  explicit ForwardThreads(int n) {
    if (n > 0) scope.emplace(n);
  }
  std::optional<typename B::ScopedThreads> scope;
};

}  // namespace detail

template <nn::Backend B>
Policy<B>::Policy(const std::string& checkpoint, PolicyOptions options)
    : Policy(io::SafetensorsFile::read(checkpoint), options) {}

template <nn::Backend B>
Policy<B>::Policy(const io::SafetensorsFile& file, PolicyOptions options)
    : checkpoint_(file.source()),
      description_(describe_checkpoint(file)),
      acting_(options.acting.value_or(description_.acting)),
      rng_(options.seed),
      network_(description_.network),
      threads_(options.threads) {
  SEEDRL_REQUIRE(threads_ >= 0,
                 "Policy: PolicyOptions::threads must be >= 0 (0: the calling "
                 "thread's own setting), got ",
                 threads_);
  acting_.validate();
  SEEDRL_REQUIRE(acting_.mode != ActionMode::sample || description_.network.policy_value_heads,
                 "Policy: acting 'sample' needs a policy head; ", checkpoint_,
                 " holds a network with Q-values only (use greedy or epsilon_greedy)");
  SEEDRL_REQUIRE(acting_.mode != ActionMode::epsilon_greedy || !description_.action_spec.is_box(),
                 "Policy: acting 'epsilon_greedy' picks among discrete actions; ", checkpoint_,
                 " acts on a ", description_.action_spec.to_string(), " (use greedy or sample)");
  io::load_checkpoint(file, network_.parameters(), nullptr);
}

template <nn::Backend B>
std::int64_t Policy<B>::run(const PolicyInput& input_record, std::size_t values, bool box) {
  const Tensor& observations = input_record.observations;
  const nn::NetworkOptions& config = description_.network;
  SEEDRL_REQUIRE(box == description_.action_spec.is_box(), "Policy::act: ", checkpoint_,
                 " acts on ", description_.action_spec.to_string(), "; call act() with ",
                 box ? "int32 actions" : "float actions (N x dims)");
  SEEDRL_REQUIRE(observations.defined() &&
                     observations.rank() == config.observation_shape.rank() + 1 &&
                     observations.shape().drop_front(1) == config.observation_shape,
                 "Policy::act: observations must be [N, ",
                 config.observation_shape.to_string().substr(1), " for ", checkpoint_, ", got ",
                 observations.defined() ? observations.shape().to_string() : "nothing");
  const std::int64_t n = observations.dim(0);
  SEEDRL_REQUIRE(n > 0, "Policy::act: no observations");
  require_fields(input_record.fields, n);
  const std::int64_t per_stream = description_.action_spec.dims();
  SEEDRL_REQUIRE(static_cast<std::int64_t>(values) == n * per_stream, "Policy::act: ", n,
                 " observations need room for ", n * per_stream, " action values, got ", values);
  if (streams_ == 0) {
    streams_ = n;
    state_ = network_.initial_state(n);
    resets_ = Tensor::zeros({1, n}, DType::u8);
    resets_.flat<std::uint8_t>().setOnes();
  }
  SEEDRL_REQUIRE(n == streams_, "Policy::act: ", n, " observations for ", streams_,
                 " streams (call reset() to serve another number of streams)");

  Tensor input = observations.reshape(observations.shape().prepend({1}));
  if (description_.normalization.active()) {  // on the host, in f32, as inference did
    SEEDRL_REQUIRE(observations.dtype() == DType::f32, "Policy::act: ", checkpoint_,
                   " normalises f32 observations, got ", observations.dtype());
    if (!normalized_.defined() || normalized_.numel() != input.numel())
      normalized_ = Tensor::empty(input.shape());
    normalized_.copy_from(input.device() == Device::cpu ? input : input.clone(Device::cpu));
    description_.normalization.apply(
        normalized_.reshape({n, normalized_.numel() / n}).matrix<float>());
    input = normalized_;
  }
  if (input.device() != B::device) input = input.clone(B::device);
  const detail::ForwardThreads<B> threads(threads_);
  outputs_ = recurrent() ? &network_.forward(input, state_, resets_) : &network_.forward(input);
  if (recurrent()) {
    state_.h.copy_from(outputs_->final_state.h);
    state_.c.copy_from(outputs_->final_state.c);
    resets_.fill_zero();
  }
  return n;
}

template <nn::Backend B>
void Policy<B>::require_fields(std::span<const Tensor> fields, std::int64_t n) const {
  const std::vector<StepFieldSpec>& declared = description_.step_fields;
  SEEDRL_REQUIRE(fields.size() == declared.size(), "Policy::act: ", checkpoint_,
                 "'s steps declare ", StepSpec::fields_to_string(declared), "; act() was given ",
                 fields.size(), " fields");
  for (std::size_t k = 0; k < declared.size(); ++k) {
    const Shape expected = declared[k].spec.shape.prepend({n});
    SEEDRL_REQUIRE(fields[k].defined() && fields[k].shape() == expected &&
                       fields[k].dtype() == declared[k].spec.dtype,
                   "Policy::act: step field '", declared[k].name, "' must be ",
                   name(declared[k].spec.dtype), expected, ", got ",
                   fields[k].defined() ? str_cat(name(fields[k].dtype()), fields[k].shape())
                                       : std::string("nothing"));
  }
}

template <nn::Backend B>
void Policy<B>::act(const PolicyInput& input, std::span<std::int32_t> actions) {
  const std::int64_t n = run(input, actions.size(), false);
  const nn::NetworkOptions& config = description_.network;
  const Tensor& scores = config.policy_value_heads ? outputs_->logits : outputs_->q;
  const Tensor rows = scores.reshape({n, config.num_actions});
  Tensor masks;  // the run's legal-action masks, where its steps had them
  std::span<const std::uint8_t> mask;
  if (const int k = StepSpec::index_of(description_.step_fields, kActionMaskField); k >= 0) {
    const Tensor& given = input.fields[static_cast<std::size_t>(k)];
    masks = given.device() == Device::cpu ? given : given.clone(Device::cpu);
    mask = {masks.data<std::uint8_t>(), static_cast<std::size_t>(masks.numel())};
  }
  select_actions(
      rows.device() == Device::cpu ? rows : rows.clone(Device::cpu), acting_, rng_, actions, mask,
      description_.action_spec.is_branched() ? math::branches_of(description_.action_spec)
                                             : math::Branches());
}

template <nn::Backend B>
void Policy<B>::act(const PolicyInput& input, std::span<float> actions) {
  const std::int64_t n = run(input, actions.size(), true);
  const ActionSpec& spec = description_.action_spec;
  const std::int64_t d = spec.dims();
  auto host = [](const Tensor& t) { return t.device() == Device::cpu ? t : t.clone(Device::cpu); };
  const Tensor mean = host(outputs_->mean).reshape({n, d});
  const Tensor log_std = host(outputs_->log_std).reshape({n, d});
  Eigen::Map<RowMatrixXf> out(actions.data(), n, d);
  if (description_.squashed) {  // SAC: within the box by construction
    Eigen::ArrayXf scale(d), bias(d);
    for (std::int64_t j = 0; j < d; ++j) {
      const auto k = static_cast<std::size_t>(j);
      scale(j) = 0.5f * (spec.high[k] - spec.low[k]);
      bias(j) = 0.5f * (spec.high[k] + spec.low[k]);
    }
    const SacMatrix zeros = SacMatrix::Zero(n, d);
    out = sac_sample(mean.matrix<float>().array(), log_std.matrix<float>().array(), scale, bias,
                     *description_.squashed, &rng_,
                     acting_.mode == ActionMode::sample ? nullptr : &zeros)
              .action.matrix();
    return;
  }
  if (acting_.mode == ActionMode::sample) {
    math::DiagGaussian::sample(mean.matrix<float>(), log_std.matrix<float>(), out, rng_);
  } else {
    math::DiagGaussian::mode(mean.matrix<float>(), out);
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j)
      out(i, j) = spec.clip(static_cast<std::size_t>(j), out(i, j));
}

template <nn::Backend B>
std::vector<std::int32_t> Policy<B>::act(const PolicyInput& input) {
  SEEDRL_REQUIRE(input.observations.defined() && input.observations.rank() >= 1,
                 "Policy::act: observations must be [N, ...]");
  std::vector<std::int32_t> actions(static_cast<std::size_t>(input.observations.dim(0)) *
                                    static_cast<std::size_t>(description_.action_spec.dims()));
  act(input, actions);
  return actions;
}

template <nn::Backend B>
void Policy<B>::reset(std::int64_t stream) {
  SEEDRL_REQUIRE(stream >= 0 && stream < streams_, "Policy::reset: stream ", stream,
                 " out of range (", streams_, " streams)");
  resets_.data<std::uint8_t>()[stream] = 1;
}

template <nn::Backend B>
void Policy<B>::reset() {
  streams_ = 0;
  state_ = {};
  resets_ = Tensor();
}

extern template class Policy<cpu::Backend>;
// On the CUDA backend, in seedrl::cuda (src/session/cuda_templates.cpp).
#ifdef SEEDRL_CUDA_SESSIONS
extern template class Policy<cuda::Backend>;
#endif

}  // namespace seedrl
