// Private helpers of the CPU backend: the oneDNN engine and streams, memory wrapping, error
// translation and reusable buffers. Not installed; oneDNN never appears in public headers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>

#include "seedrl/core/error.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"

namespace seedrl::cpu::detail {

using dnnl::memory;
using Tag = memory::format_tag;
using DataType = memory::data_type;

/// The process-wide CPU engine.
dnnl::engine& engine();
/// A stream for the calling thread (streams are not thread-safe; engines and primitives are).
dnnl::stream& stream();

/// Runs `body`, turning a oneDNN exception into seedrl::Error that names the layer and the step.
template <class F>
decltype(auto) guarded(const std::string& layer, const char* step, F&& body) {
  try {
    return body();
  } catch (const dnnl::error& e) {
    fail(layer, ": ", step, ": oneDNN error: ", e.what(), " (status ", static_cast<int>(e.status),
         ")");
  }
}

/// A oneDNN memory object over a tensor's elements (no copy).
inline memory wrap(const memory::desc& desc, const Tensor& t) {
  return memory(desc, engine(), t.raw_data());
}

inline DataType data_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return DataType::f32;
    case DType::u8:
      return DataType::u8;
    case DType::i32:
      return DataType::s32;
  }
  return DataType::undef;
}

/// Attributes with a user-managed scratchpad: every layer passes its own scratchpad memory, so
/// primitives run concurrently from several threads (inference and learner) never share one,
/// whatever oneDNN's build-time scratchpad policy.
inline dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// Scratchpad memory for a primitive, in `buffer` (reallocated only when it grows).
template <class PrimitiveDesc>
memory scratchpad(ScratchBuffer& buffer, const PrimitiveDesc& pd) {
  const memory::desc desc = pd.scratchpad_desc();
  const auto bytes = static_cast<std::int64_t>(desc.get_size());
  return memory(desc, engine(),
                buffer.view({std::max<std::int64_t>(bytes, 1)}, DType::u8).raw_data());
}

/// Weights in the layout a primitive chose (format_tag::any), repacked from the parameter's plain
/// layout only when its values changed (a new version, or another buffer). When the layouts
/// agree the plain memory is used directly.
class PackedWeights {
 public:
  PackedWeights(const memory::desc& wanted, const memory::desc& plain) {
    if (wanted != plain) {
      packed_ = memory(wanted, engine());
      pack_pd_.emplace(engine(), plain, engine(), wanted, user_scratchpad());
      pack_.emplace(*pack_pd_);
    }
  }

  /// The weights to pass to the primitive for `plain_values` at `version`.
  memory refresh(const memory& plain_values, std::uint64_t version, ScratchBuffer& scratch) {
    if (!pack_) return plain_values;
    const void* source = plain_values.get_data_handle();
    if (version != packed_version_ || source != packed_from_) {
      pack_->execute(stream(), {{DNNL_ARG_FROM, plain_values},
                                {DNNL_ARG_TO, packed_},
                                {DNNL_ARG_SCRATCHPAD, scratchpad(scratch, *pack_pd_)}});
      packed_version_ = version;
      packed_from_ = source;
    }
    return packed_;
  }

 private:
  memory packed_;
  std::optional<dnnl::reorder::primitive_desc> pack_pd_;
  std::optional<dnnl::reorder> pack_;
  std::uint64_t packed_version_ = ~std::uint64_t{0};
  const void* packed_from_ = nullptr;
};

/// Throws seedrl::Error unless sgemm succeeded.
void check_sgemm(dnnl_status_t status, const char* what);

/// Row-major C[m, n] = alpha * op(A) op(B) + beta * C with op = transpose when the flag is set.
void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* a, const float* b, float beta, float* c);

using Buffer = ScratchBuffer;

/// result = grad where output > 0, else 0 (the backward of a fused or standalone ReLU).
void relu_backward(const float* output, const float* grad, float* result, std::int64_t n);
/// result = grad * (1 - output^2) (the backward of a fused tanh, from its output).
void tanh_backward(const float* output, const float* grad, float* result, std::int64_t n);

}  // namespace seedrl::cpu::detail
