// Optimizers over a ParameterStore: Adam, RMSProp (centered, momentum) and SGD (momentum).
//
// Each keeps its state in flat tensors shaped like the store's buffers and updates the whole
// model in one pass of the backend's kernel. Optimizer is the small type-erased base a learner
// holds when the choice is made at run time (make_optimizer); the concrete classes are
// templates on the backend.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedrl/backend/cpu/backend.hpp"
#ifdef SEEDRL_CUDA_SESSIONS
#include "seedrl/backend/cuda/backend.hpp"
#endif
#include "seedrl/core/error.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/parameter.hpp"
#include "seedrl/nn/update_rules.hpp"

namespace seedrl::nn {

struct AdamOptions {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  void validate(std::string_view owner = "AdamOptions") const {
    SEEDRL_REQUIRE(beta1 >= 0.0f && beta1 < 1.0f, owner, ".beta1 must be in [0, 1), got ", beta1);
    SEEDRL_REQUIRE(beta2 >= 0.0f && beta2 < 1.0f, owner, ".beta2 must be in [0, 1), got ", beta2);
    SEEDRL_REQUIRE(epsilon > 0.0f && std::isfinite(epsilon), owner,
                   ".epsilon must be positive, got ", epsilon);
  }
};

struct RmsPropOptions {
  float decay = 0.99f;  ///< rho, the moving-average factor of the squared gradient
  float momentum = 0.0f;
  float epsilon = 1e-5f;  ///< IMPALA used 0.01, which turns small gradients into plain SGD steps
  bool centered =
      false;  ///< divide by an estimate of the variance instead of the raw second moment
  bool epsilon_inside_sqrt = true;  ///< TensorFlow's form sqrt(ms + eps); false: sqrt(ms) + eps
  void validate(std::string_view owner = "RmsPropOptions") const {
    SEEDRL_REQUIRE(decay >= 0.0f && decay < 1.0f, owner, ".decay must be in [0, 1), got ", decay);
    SEEDRL_REQUIRE(momentum >= 0.0f && momentum < 1.0f, owner, ".momentum must be in [0, 1), got ",
                   momentum);
    SEEDRL_REQUIRE(epsilon > 0.0f && std::isfinite(epsilon), owner,
                   ".epsilon must be positive, got ", epsilon);
  }
};

struct SgdOptions {
  float momentum = 0.0f;
  void validate(std::string_view owner = "SgdOptions") const {
    SEEDRL_REQUIRE(momentum >= 0.0f && momentum < 1.0f, owner, ".momentum must be in [0, 1), got ",
                   momentum);
  }
};

enum class OptimizerKind { adam, rmsprop, sgd };

/// Which optimizer to build, with the options of each.
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::adam;
  AdamOptions adam;
  RmsPropOptions rmsprop;
  SgdOptions sgd;
};

/// OptimizerOptions' name before seedrl's option structs were named alike (all *Options).
using OptimizerConfig [[deprecated("seedrl: OptimizerConfig is now OptimizerOptions")]] =
    OptimizerOptions;

/// A named optimizer-state tensor (flat, like ParameterStore::values()), for checkpoints.
struct OptimizerSlot {
  std::string name;
  Tensor value;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  /// Runs range(begin, end) over disjoint ranges covering [0, n), possibly on several threads at
  /// once, and returns when every range is done (LearnerCore's workers share the update this way).
  using Range = std::function<void(std::int64_t begin, std::int64_t end)>;
  using Splitter = std::function<void(std::int64_t n, const Range& range)>;

  /// One update of every parameter from the store's gradients; bumps the store's version. Every
  /// rule is element-wise, so a `split` over threads changes no bit of the result.
  void step(float learning_rate, const Splitter& split = {}) {
    SEEDRL_REQUIRE(std::isfinite(learning_rate) && learning_rate >= 0.0f, name(),
                   ": learning rate must be finite and >= 0, got ", learning_rate);
    ++steps_;
    const std::int64_t n = store_.flat_size();
    if (split) {
      split(n, [this, learning_rate](std::int64_t begin, std::int64_t end) {
        apply(learning_rate, begin, end);
      });
    } else {
      apply(learning_rate, 0, n);
    }
    store_.bump_version();
  }

  /// Updates applied so far (restored from checkpoints with set_steps()).
  std::int64_t steps() const { return steps_; }
  void set_steps(std::int64_t steps) {
    SEEDRL_REQUIRE(steps >= 0, name(), ": step count must be >= 0, got ", steps);
    steps_ = steps;
  }

  virtual const char* name() const = 0;
  /// The state tensors, e.g. {"adam.m", ...}; writing them restores a saved state.
  virtual std::vector<OptimizerSlot> slots() const = 0;

 protected:
  explicit Optimizer(ParameterStore& store) : store_(store) {
    SEEDRL_REQUIRE(store.finalized(), "Optimizer: the parameter store is not finalised");
  }
  Tensor new_slot() const {
    return Tensor::zeros({store_.flat_size()}, DType::f32, store_.device());
  }
  /// Updates elements [begin, end) of the flat parameters and this optimizer's state (called for
  /// disjoint ranges, perhaps at the same time from several threads).
  virtual void apply(float learning_rate, std::int64_t begin, std::int64_t end) = 0;
  /// Elements [begin, end) of a flat tensor (the store's values or grads, or a slot).
  static Tensor range(const Tensor& flat, std::int64_t begin, std::int64_t end) {
    return flat.slice(begin, end);
  }

  ParameterStore& store_;
  std::int64_t steps_ = 0;
};

template <Backend B>
class Adam final : public Optimizer {
 public:
  Adam(ParameterStore& store, const AdamOptions& options = {})
      : Optimizer(store), options_(options), m_(new_slot()), v_(new_slot()) {
    options.validate();
  }
  const char* name() const override { return "adam"; }
  std::vector<OptimizerSlot> slots() const override { return {{"adam.m", m_}, {"adam.v", v_}}; }

 private:
  void apply(float learning_rate, std::int64_t begin, std::int64_t end) override {
    const double t = static_cast<double>(steps_);
    const AdamStep step{learning_rate,
                        options_.beta1,
                        options_.beta2,
                        options_.epsilon,
                        static_cast<float>(1.0 - std::pow(static_cast<double>(options_.beta1), t)),
                        static_cast<float>(1.0 - std::pow(static_cast<double>(options_.beta2), t))};
    B::adam_update(range(store_.values(), begin, end), range(store_.grads(), begin, end),
                   range(m_, begin, end), range(v_, begin, end), step);
  }

  AdamOptions options_;
  Tensor m_, v_;
};

template <Backend B>
class RmsProp final : public Optimizer {
 public:
  RmsProp(ParameterStore& store, const RmsPropOptions& options = {})
      : Optimizer(store),
        options_(options),
        mean_square_(new_slot()),
        mean_grad_(new_slot()),
        momentum_(new_slot()) {
    options.validate();
  }
  const char* name() const override { return "rmsprop"; }
  std::vector<OptimizerSlot> slots() const override {
    return {{"rmsprop.mean_square", mean_square_},
            {"rmsprop.mean_grad", mean_grad_},
            {"rmsprop.momentum", momentum_}};
  }

 private:
  void apply(float learning_rate, std::int64_t begin, std::int64_t end) override {
    const RmsPropStep step{learning_rate,    options_.decay,    options_.momentum,
                           options_.epsilon, options_.centered, options_.epsilon_inside_sqrt};
    B::rmsprop_update(range(store_.values(), begin, end), range(store_.grads(), begin, end),
                      range(mean_square_, begin, end), range(mean_grad_, begin, end),
                      range(momentum_, begin, end), step);
  }

  RmsPropOptions options_;
  Tensor mean_square_, mean_grad_, momentum_;
};

template <Backend B>
class Sgd final : public Optimizer {
 public:
  Sgd(ParameterStore& store, const SgdOptions& options = {})
      : Optimizer(store), options_(options), buffer_(new_slot()) {
    options.validate();
  }
  const char* name() const override { return "sgd"; }
  std::vector<OptimizerSlot> slots() const override { return {{"sgd.momentum", buffer_}}; }

 private:
  void apply(float learning_rate, std::int64_t begin, std::int64_t end) override {
    B::sgd_update(range(store_.values(), begin, end), range(store_.grads(), begin, end),
                  range(buffer_, begin, end), SgdStep{learning_rate, options_.momentum});
  }

  SgdOptions options_;
  Tensor buffer_;
};

/// The optimizer `config` names, for backend B.
template <Backend B>
std::unique_ptr<Optimizer> make_optimizer(ParameterStore& store, const OptimizerOptions& config) {
  switch (config.kind) {
    case OptimizerKind::adam:
      return std::make_unique<Adam<B>>(store, config.adam);
    case OptimizerKind::rmsprop:
      return std::make_unique<RmsProp<B>>(store, config.rmsprop);
    case OptimizerKind::sgd:
      return std::make_unique<Sgd<B>>(store, config.sgd);
  }
  fail("make_optimizer: unknown optimizer kind ", static_cast<int>(config.kind));
}

// Compiled once, in the library (src/nn/cpu_instantiations.cpp).
extern template class Adam<cpu::Backend>;
extern template class RmsProp<cpu::Backend>;
extern template class Sgd<cpu::Backend>;
extern template std::unique_ptr<Optimizer> make_optimizer<cpu::Backend>(ParameterStore&,
                                                                        const OptimizerOptions&);
// On the CUDA backend, in seedrl::cuda (src/session/cuda_templates.cpp).
#ifdef SEEDRL_CUDA_SESSIONS
extern template class Adam<cuda::Backend>;
extern template class RmsProp<cuda::Backend>;
extern template class Sgd<cuda::Backend>;
extern template std::unique_ptr<Optimizer> make_optimizer<cuda::Backend>(ParameterStore&,
                                                                         const OptimizerOptions&);
#endif

}  // namespace seedrl::nn
