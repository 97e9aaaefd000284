// ParameterStore: every parameter and gradient of a model, in two flat buffers.
//
// Layers declare their parameters (name, shape, initialisation) while the model is built; the
// model then calls finalize(seed), which allocates one flat value buffer and one flat gradient
// buffer and hands each Parameter its views into them. Optimizers therefore update the whole
// model in one pass, the global gradient norm is one reduction, a checkpoint walks parameters()
// by name, and a second copy of a model is one memcpy (copy_values_from).
//
// Each parameter starts on a 64-byte boundary; the padding between them stays zero.
//
// Versions: every change of the values bumps version() (optimizer steps, checkpoint loads,
// copies do it themselves). Layers keep weights repacked for oneDNN and repack only when the
// version moves, so code that writes values directly must call bump_version() afterwards.
// Stores that alias one value buffer (alias_values) share one version counter.
//
// Thread-safety: declaring and finalising is single-threaded. Afterwards the values may be read
// concurrently; writers must be serialised by the owner (shared/shared_parameters.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_set>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/init.hpp"

namespace seedrl::nn {

/// One named parameter. `value` and `grad` are views into the store's flat buffers; both are
/// undefined until the store is finalised.
struct Parameter {
  std::string name;
  /// The version of the buffer `value` lives in (see ParameterStore::version()).
  std::uint64_t version() const {
    return version_counter ? version_counter->load(std::memory_order_acquire) : 0;
  }
  Shape shape;
  Init init;
  std::int64_t fan_in = 0;
  std::int64_t fan_out = 0;
  std::int64_t offset = 0;  ///< first element within the flat buffers
  Tensor value;
  Tensor grad;
  const std::atomic<std::uint64_t>* version_counter = nullptr;  ///< set by the store
};

class ParameterStore {
 public:
  /// Elements per alignment unit: every parameter starts at a multiple of this offset.
  static constexpr std::int64_t kAlignElements = 16;

  explicit ParameterStore(Device device = Device::cpu) : device_(device) {}
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  /// Declares a parameter. Names must be unique; the reference stays valid for the store's life.
  Parameter& add(std::string name, const Shape& shape, const Init& init, std::int64_t fan_in,
                 std::int64_t fan_out) {
    SEEDRL_REQUIRE(!finalized_, "ParameterStore::add('", name,
                   "'): the store is already finalised");
    SEEDRL_REQUIRE(!name.empty(), "ParameterStore::add: empty parameter name");
    SEEDRL_REQUIRE(shape.numel() > 0, "ParameterStore::add('", name, "'): empty shape ", shape);
    SEEDRL_REQUIRE(names_.insert(name).second, "ParameterStore::add: duplicate parameter name '",
                   name, "'");
    Parameter& p = parameters_.emplace_back();
    p.name = std::move(name);
    p.shape = shape;
    p.init = init;
    p.fan_in = fan_in;
    p.fan_out = fan_out;
    p.offset = total_;
    const std::int64_t padded = (shape.numel() + kAlignElements - 1) / kAlignElements *
                                kAlignElements;  // shape.numel() < 2^63: Shape checks it
    SEEDRL_REQUIRE(padded >= 0 && !__builtin_add_overflow(total_, padded, &total_),
                   "ParameterStore::add('", p.name, "'): ", shape,
                   " takes the store's size past 2^63 values");
    return p;
  }

  /// Allocates the flat buffers and initialises every parameter, in declaration order, from
  /// generators derived from `seed`. Gradients start at zero.
  void finalize(std::uint64_t seed) {
    SEEDRL_REQUIRE(!finalized_, "ParameterStore::finalize: called twice");
    Tensor host_values = Tensor::empty({total_}, DType::f32, Device::cpu);
    Rng seeder(seed);
    for (Parameter& p : parameters_) {
      Rng rng = seeder.split();
      initialize(host_values.data<float>() + p.offset, p.shape, p.init, p.fan_in, p.fan_out, rng);
    }
    values_ = device_ == Device::cpu ? host_values : host_values.clone(device_);
    grads_ = Tensor::empty({total_}, DType::f32, device_);
    for (Parameter& p : parameters_) {
      p.value = view(values_, p);
      p.grad = view(grads_, p);
      p.version_counter = version_.get();
    }
    finalized_ = true;
    bump_version();
  }

  bool finalized() const { return finalized_; }
  Device device() const { return device_; }
  /// All parameters in declaration order.
  std::deque<Parameter>& parameters() { return parameters_; }
  const std::deque<Parameter>& parameters() const { return parameters_; }

  /// The parameter called `name`; throws if there is none.
  const Parameter& find(std::string_view name) const {
    for (const Parameter& p : parameters_)
      if (p.name == name) return p;
    fail("ParameterStore: no parameter named '", name, "'");
  }
  Parameter& find(std::string_view name) {
    return const_cast<Parameter&>(static_cast<const ParameterStore&>(*this).find(name));
  }

  /// Flat buffers: every value / every gradient (padding included), shape [flat_size()].
  const Tensor& values() const { return checked(values_); }
  const Tensor& grads() const { return checked(grads_); }
  std::int64_t flat_size() const { return total_; }

  /// Number of trainable scalars (padding excluded).
  std::int64_t num_parameters() const {
    std::int64_t n = 0;
    for (const Parameter& p : parameters_) n += p.shape.numel();
    return n;
  }

  /// Changes whenever the values change (optimizer step, load, copy); layers that cache a
  /// transformed copy of their weights compare it to decide when to refresh.
  std::uint64_t version() const { return version_->load(std::memory_order_acquire); }
  void bump_version() { version_->fetch_add(1, std::memory_order_acq_rel); }

  void zero_grad() { checked(grads_).fill_zero(); }

  /// Copies all values from a store with the same layout (names and shapes, in order).
  void copy_values_from(const ParameterStore& other) {
    require_same_layout(other);
    values_.copy_from(other.values_);
    bump_version();
  }

  /// Makes this store read its values from `other`'s buffer (same layout): both models then see
  /// one set of parameters, with no copy. Gradients stay separate. `other` must outlive this
  /// store; the owner serialises writes against reads (see shared/shared_parameters.hpp).
  /// This store's tensors are handles of its own on that memory (borrowed): two models on two
  /// threads never share a reference count, whose cache line would otherwise bounce between the
  /// cores at every tensor copy a layer makes.
  void alias_values(const ParameterStore& other) {
    require_same_layout(other);
    values_ = Tensor::from_blob(other.values_.raw_data(), other.values_.shape(),
                                other.values_.dtype(), other.values_.device());
    version_ = other.version_;
    for (Parameter& p : parameters_) {
      p.value = view(values_, p);
      p.version_counter = version_.get();
    }
    bump_version();
  }

  /// Throws seedrl::Error naming the first difference unless `other` has the same layout.
  void require_same_layout(const ParameterStore& other) const {
    checked(values_);
    other.checked(other.values_);
    SEEDRL_REQUIRE(parameters_.size() == other.parameters_.size(),
                   "ParameterStore: ", parameters_.size(), " parameters vs ",
                   other.parameters_.size());
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      const Parameter& a = parameters_[i];
      const Parameter& b = other.parameters_[i];
      SEEDRL_REQUIRE(a.name == b.name && a.shape == b.shape, "ParameterStore: parameter ", i,
                     " is '", a.name, "' ", a.shape, " here but '", b.name, "' ", b.shape,
                     " there");
    }
  }

 private:
  static Tensor view(const Tensor& flat, const Parameter& p) {
    return flat.slice(p.offset, p.offset + p.shape.numel()).reshape(p.shape);
  }
  const Tensor& checked(const Tensor& t) const {
    SEEDRL_REQUIRE(finalized_, "ParameterStore: not finalised yet (the model must call finalize)");
    return t;
  }

  Device device_;
  std::deque<Parameter> parameters_;
  std::unordered_set<std::string> names_;
  std::int64_t total_ = 0;
  Tensor values_;
  Tensor grads_;
  std::shared_ptr<std::atomic<std::uint64_t>> version_ =
      std::make_shared<std::atomic<std::uint64_t>>(0);
  bool finalized_ = false;
};

}  // namespace seedrl::nn
