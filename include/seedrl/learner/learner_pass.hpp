// LearnerPass<Backend>: one thread's means of computing a batch's gradients: the networks it
// computes with and the buffers a batch is stacked into. A learner writes its loss against a pass
// (a class derived from this one, with the learner's own scratch buffers), so that the learner
// thread, each learner worker and R2D2's inserter run the same code on their own state:
//
//   LearnerCore's pass 0    the core's NetworkSet             the learner thread
//   a worker's pass         a replica: aliases the values     WorkerTeam helper w (set_workers)
//   R2D2's evaluator        a copy, refreshed per batch       the "seedrl-insert" thread
//
//   stack(unrolls) ──▶ batch() on the host; observations, initial state on the device, resets
//   transitions(first, steps)   the [T, B] transitions of the batch (learner/transitions.hpp)
//   device_fields()             actions, rewards, flags, behaviour logits on the device
//   backward_policy_value(...)  a policy-value loss's gradients through network()
//
// Thread-safety: one thread uses a pass at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <ranges>
#include <string_view>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/learner/network_set.hpp"
#include "seedrl/learner/transitions.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

/// What every pass of one learner shares: its unroll layout, its name (for messages) and its
/// update counter (transitions count the policy lag from it).
struct LearnerPassContext {
  const UnrollSpec* spec = nullptr;
  std::string_view agent_name;
  const std::atomic<std::int64_t>* steps = nullptr;
};

template <nn::Backend B>
class LearnerPass {
 public:
  LearnerPass(NetworkSet<B>& networks, const LearnerPassContext& context)
      : networks_(networks), context_(context) {}
  virtual ~LearnerPass() = default;
  LearnerPass(const LearnerPass&) = delete;
  LearnerPass& operator=(const LearnerPass&) = delete;

  /// The networks this pass computes with; network() is the first (the acting one).
  NetworkSet<B>& networks() { return networks_; }
  nn::Network<B>& network() { return networks_.trained(0).network; }
  const UnrollSpec& spec() const { return *context_.spec; }

  /// What a batch feeds a network: observations and the stored initial state on the backend's
  /// device, and the resets [L, B] (1 at the first step of an episode) on the host.
  struct NetworkInputs {
    Tensor observations;
    nn::LstmState initial_state;
    Tensor resets;
  };
  /// The batch's other fields on the backend's device, for losses computed there.
  struct DeviceFields {
    Tensor actions, rewards, flags, behaviour;
  };

  /// Stacks `unrolls` (pointers to unrolls of spec()) into batch() and stages it for a forward.
  template <std::ranges::random_access_range Range>
  NetworkInputs stack(const Range& unrolls) {
    batch_.stack(unrolls, spec());
    const std::int64_t cells = batch_.flags.numel();
    const Tensor resets = resets_.view(batch_.flags.shape(), DType::u8);
    const std::uint8_t* flags = batch_.flags.data<std::uint8_t>();
    for (std::int64_t i = 0; i < cells; ++i)
      resets.data<std::uint8_t>()[i] = is_first(flags[i]) ? 1 : 0;
    return {observations_(batch_.observations), state_(batch_.initial_state), resets};
  }
  const UnrollBatch& batch() const { return batch_; }
  /// The batch's actions (checked to be in range: device kernels index with them), rewards,
  /// flags and behaviour policy on the device.
  DeviceFields device_fields() {
    check_actions(batch_, spec(), context_.agent_name);
    return {actions_(batch_.actions), rewards_(batch_.rewards), flags_(batch_.flags),
            behaviour_(batch_.behaviour)};
  }
  /// The transitions of steps [first, first + steps) of batch(), at the learner's current
  /// version.
  Transitions transitions(std::int64_t first, std::int64_t steps, float max_abs_reward) const {
    check_actions(batch_, spec(), context_.agent_name);
    return make_transitions(batch_, first, steps, max_abs_reward, context_.steps->load());
  }

  /// Backpropagates a policy-value loss over the first T steps of the batch (the last of its
  /// T + 1 steps only bootstraps, so its gradients are 0): grad_logits [T B, A] (row t B + b),
  /// grad_values [T, B]. The gradients go to the backend's device once.
  void backward_policy_value(const RowMatrixXf& grad_logits, const Eigen::ArrayXXf& grad_values) {
    const std::int64_t steps = grad_values.rows(), batch = grad_values.cols(),
                       actions = grad_logits.cols();
    const Tensor logits = grad_logits_.view({steps + 1, batch, actions});
    const Tensor values = grad_values_.view({steps + 1, batch});
    logits.fill_zero();
    values.fill_zero();
    logits.reshape({(steps + 1) * batch, actions}).template matrix<float>().topRows(steps * batch) =
        grad_logits;
    for (std::int64_t t = 0; t < steps; ++t)
      for (std::int64_t b = 0; b < batch; ++b)
        values.data<float>()[t * batch + b] = grad_values(t, b);
    network().backward(
        {.logits = device_grad_logits_(logits), .values = device_grad_values_(values)});
  }

 private:
  NetworkSet<B>& networks_;
  const LearnerPassContext context_;
  UnrollBatch batch_;
  ScratchBuffer resets_, grad_logits_, grad_values_;
  // The batch goes to the backend's device once (no copies on the CPU backend).
  StagingBuffer observations_{B::device}, actions_{B::device}, rewards_{B::device},
      flags_{B::device}, behaviour_{B::device}, device_grad_logits_{B::device},
      device_grad_values_{B::device};
  StateStaging state_{B::device};
};

}  // namespace seedrl
