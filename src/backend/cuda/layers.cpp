// The layers of the CUDA backend: cuBLAS GEMMs, cuDNN convolutions and kernels.cu.
#include <array>
#include <map>
#include <optional>
#include <vector>

#include "../layer_definitions.hpp"
#include "cuda_util.hpp"
#include "kernels.hpp"
#include "layer_util.hpp"
#include "seedrl/backend/cuda/backend.hpp"
#include "seedrl/core/scratch_buffer.hpp"

namespace seedrl::backend {
namespace {

using cuda::detail::gemm;
using cuda::detail::stream;

using cuda_layer::bytes_of;
using cuda_layer::DeviceScratch;
using cuda_layer::f32;
using cuda_layer::RegistersRuntime;

/// Column sums of a row-major [rows, cols] matrix as one GEMV against a vector of ones.
class ColumnSums {
 public:
  void operator()(const float* x, std::int64_t rows, std::int64_t cols, float* out) {
    if (rows > ones_count_) {
      ones_ = buffer_.view({rows});
      cuda::kernels::fill(f32(ones_), rows, 1.0f, stream());
      ones_count_ = rows;
    }
    const float one = 1.0f, zero = 0.0f;
    SEEDRL_CUBLAS_CHECK(cublasSgemv(cuda::detail::cublas(), CUBLAS_OP_N, static_cast<int>(cols),
                                    static_cast<int>(rows), &one, x, static_cast<int>(cols),
                                    f32(ones_), 1, &zero, out, 1));
  }

 private:
  DeviceScratch buffer_;
  Tensor ones_;
  std::int64_t ones_count_ = 0;
};

// Gradient after a fused ReLU: grad where the output was positive.
Tensor relu_masked(const Tensor& grad_output, const Tensor& output, DeviceScratch& buffer) {
  Tensor grad = buffer.view(grad_output.shape());
  cuda::kernels::relu_backward(f32(output), f32(grad_output), f32(grad), grad.numel(), stream());
  return grad;
}

// Gradient before a fused activation, from its output (grad_output itself for none).
Tensor activation_backward(nn::Activation act, const Tensor& grad_output, const Tensor& output,
                           DeviceScratch& buffer) {
  if (act == nn::Activation::none) return grad_output;
  if (act == nn::Activation::relu) return relu_masked(grad_output, output, buffer);
  Tensor grad = buffer.view(grad_output.shape());
  cuda::kernels::tanh_backward(f32(output), f32(grad_output), f32(grad), grad.numel(), stream());
  return grad;
}

cuda::kernels::Act fused(nn::Activation act) {
  return static_cast<cuda::kernels::Act>(static_cast<int>(act));
}

}  // namespace

// ---- Linear ----

template <>
struct LinearKernels<Device::cuda> : RegistersRuntime, LinearState {
  DeviceScratch output_buffer, grad_input_buffer, masked_grad_buffer;
  ColumnSums column_sums;

  Tensor forward(const Tensor& input, const Shape& out_shape) {
    const std::int64_t n = input.dim(0), in = options.in_features, out = options.out_features;
    Tensor output = output_buffer.view(out_shape);
    gemm(false, true, n, out, in, 1.0f, f32(input), f32(weight->value), 0.0f, f32(output));
    if (bias != nullptr || options.activation != nn::Activation::none) {
      cuda::kernels::bias_activation(f32(output), bias ? f32(bias->value) : nullptr, n, out,
                                     fused(options.activation), stream());
    }
    return output;
  }

  Tensor backward(const Tensor& grad_output, bool input_grad) {
    const std::int64_t n = saved_input.dim(0), in = options.in_features, out = options.out_features;
    const Tensor grad =
        activation_backward(options.activation, grad_output, saved_output, masked_grad_buffer);
    gemm(true, false, out, in, n, 1.0f, f32(grad), f32(saved_input), 0.0f, f32(weight->grad));
    if (bias) column_sums(f32(grad), n, out, f32(bias->grad));
    if (!input_grad) return {};
    Tensor grad_input = grad_input_buffer.view(saved_input.shape());
    gemm(false, false, n, in, out, 1.0f, f32(grad), f32(weight->value), 0.0f, f32(grad_input));
    return grad_input;
  }
};

// ---- Conv2d ----

template <>
struct Conv2dKernels<Device::cuda> : RegistersRuntime, Conv2dState {
  // One pass's algorithm for one shape: cuDNN's heuristic choice at first, measured (cudnnFind)
  // at the pass's cuda::conv_measure_after()-th use.
  template <class Algo>
  struct Choice {
    Algo algo{};
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    std::size_t workspace = 0;
    int uses = 0;
    bool ready = false, measured = false;
  };
  // Descriptors and chosen algorithms for one input shape (and TF32 setting).
  struct Plan {
    cuda::detail::TensorDescriptor x, y;
    cuda::detail::FilterDescriptor w;
    cuda::detail::ConvolutionDescriptor forward_conv, data_conv, filter_conv;
    bool tf32 = false;
    Shape input_shape;
    Choice<cudnnConvolutionFwdAlgo_t> forward;
    Choice<cudnnConvolutionBwdFilterAlgo_t> filter;
    Choice<cudnnConvolutionBwdDataAlgo_t> data;
  };
  std::map<std::array<std::int64_t, 5>, Plan> plans;
  Plan* last = nullptr;
  DeviceScratch output_buffer, grad_input_buffer, masked_grad_buffer, workspace_buffer;
  DeviceScratch packed_weight_buffer, packed_grad_buffer;
  Tensor packed_weight;  // [out, k, k, in]
  std::uint64_t packed_version = ~std::uint64_t{0};
  ColumnSums column_sums;

  cuda::detail::ConvolutionDescriptor make_conv(bool tf32) const {
    auto conv = cuda::detail::make_convolution_descriptor();
    const int pad = static_cast<int>(options.padding), stride = static_cast<int>(options.stride);
    SEEDRL_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv.get(), pad, pad, stride, stride, 1, 1,
                                                       CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    SEEDRL_CUDNN_CHECK(
        cudnnSetConvolutionMathType(conv.get(), tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    return conv;
  }

  Plan& plan(const Shape& in, const Shape& out) {
    const bool tf32 = cuda::allow_tf32();
    const std::array<std::int64_t, 5> key{in[0], in[1], in[2], in[3], tf32 ? 1 : 0};
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    Plan p;
    auto int_of = [](std::int64_t v) { return static_cast<int>(v); };
    p.x = cuda::detail::make_tensor_descriptor();
    SEEDRL_CUDNN_CHECK(cudnnSetTensor4dDescriptor(p.x.get(), CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT,
                                                  int_of(in[0]), int_of(in[3]), int_of(in[1]),
                                                  int_of(in[2])));
    p.y = cuda::detail::make_tensor_descriptor();
    SEEDRL_CUDNN_CHECK(cudnnSetTensor4dDescriptor(p.y.get(), CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT,
                                                  int_of(out[0]), int_of(out[3]), int_of(out[1]),
                                                  int_of(out[2])));
    p.w = cuda::detail::make_filter_descriptor();
    SEEDRL_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
        p.w.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, int_of(options.out_channels),
        int_of(options.in_channels), int_of(options.kernel), int_of(options.kernel)));
    p.tf32 = tf32;
    p.input_shape = in;
    p.forward_conv = make_conv(tf32);
    p.data_conv = make_conv(tf32);
    p.filter_conv = make_conv(tf32);
    return plans.emplace(key, std::move(p)).first->second;
  }

  // Chooses (or keeps) `c` for its next use: the heuristic pick at first, the measured one at the
  // conv_measure_after()-th use. `search(measure, results, found)` asks cuDNN for candidates
  // (timed or ranked), `bytes(algo)` for an algorithm's workspace.
  template <class Algo, class Perf, class Search, class Bytes>
  void choose(Choice<Algo>& c, const Plan& p, cudnnConvolutionDescriptor_t conv, const char* pass,
              Search&& search, Bytes&& bytes) {
    if (c.measured) return;
    const int measure_after = cuda::conv_measure_after();
    const bool measure = measure_after > 0 && ++c.uses >= measure_after;
    if (c.ready && !measure) return;
    cudnnStatus_t first_status = CUDNN_STATUS_SUCCESS;
    // The fastest usable candidate of one search (timed or ranked), none if every one failed.
    auto best_of = [&](bool timed) -> std::optional<Perf> {
      // A search starts from the plan's math type, not the one the last choice set.
      SEEDRL_CUDNN_CHECK(
          cudnnSetConvolutionMathType(conv, p.tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
      constexpr int kCandidates = 8;
      std::array<Perf, kCandidates> results{};
      int found = 0;
      if (timed) {
        MutexLock lock(cuda::detail::conv_search_mutex());
        search(true, kCandidates, &found, results.data());
        cuda::detail::count_conv_measurement();
      } else {
        search(false, kCandidates, &found, results.data());
      }
      for (int i = 0; i < found; ++i) {
        const Perf& r = results[static_cast<std::size_t>(i)];
        if (r.status == CUDNN_STATUS_SUCCESS) return r;
      }
      if (found > 0) first_status = results[0].status;
      return std::nullopt;
    };
    std::optional<Perf> best = best_of(measure);
    if (!best && measure) {
      // A measurement can fail every candidate (its trial workspaces out of memory, say, with many
      // threads searching at once): keep the heuristic choice, or make one, and measure no more.
      c.measured = true;
      if (c.ready) {
        SEEDRL_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, c.math));
        return;
      }
      best = best_of(false);
    }
    if (!best) {
      fail(name, ": cuDNN found no usable ", pass, " convolution algorithm for input ",
           p.input_shape, " (the first candidate: ", cudnnGetErrorString(first_status), ")");
    }
    c.algo = best->algo;
    c.math = best->mathType;
    SEEDRL_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, c.math));
    c.workspace = bytes(c.algo);
    c.ready = true;
    c.measured = c.measured || measure;
  }

  void choose_forward(Plan& p) {
    cudnnHandle_t h = cuda::detail::cudnn();
    choose<cudnnConvolutionFwdAlgo_t, cudnnConvolutionFwdAlgoPerf_t>(
        p.forward, p, p.forward_conv.get(), "forward",
        [&](bool measure, int n, int* found, cudnnConvolutionFwdAlgoPerf_t* r) {
          SEEDRL_CUDNN_CHECK(
              measure ? cudnnFindConvolutionForwardAlgorithm(
                            h, p.x.get(), p.w.get(), p.forward_conv.get(), p.y.get(), n, found, r)
                      : cudnnGetConvolutionForwardAlgorithm_v7(
                            h, p.x.get(), p.w.get(), p.forward_conv.get(), p.y.get(), n, found, r));
        },
        [&](cudnnConvolutionFwdAlgo_t algo) {
          std::size_t bytes = 0;
          SEEDRL_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
              h, p.x.get(), p.w.get(), p.forward_conv.get(), p.y.get(), algo, &bytes));
          return bytes;
        });
  }

  void choose_filter(Plan& p) {
    cudnnHandle_t h = cuda::detail::cudnn();
    choose<cudnnConvolutionBwdFilterAlgo_t, cudnnConvolutionBwdFilterAlgoPerf_t>(
        p.filter, p, p.filter_conv.get(), "backward filter",
        [&](bool measure, int n, int* found, cudnnConvolutionBwdFilterAlgoPerf_t* r) {
          SEEDRL_CUDNN_CHECK(
              measure ? cudnnFindConvolutionBackwardFilterAlgorithm(
                            h, p.x.get(), p.y.get(), p.filter_conv.get(), p.w.get(), n, found, r)
                      : cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                            h, p.x.get(), p.y.get(), p.filter_conv.get(), p.w.get(), n, found, r));
        },
        [&](cudnnConvolutionBwdFilterAlgo_t algo) {
          std::size_t bytes = 0;
          SEEDRL_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
              h, p.x.get(), p.y.get(), p.filter_conv.get(), p.w.get(), algo, &bytes));
          return bytes;
        });
  }

  void choose_data(Plan& p) {
    cudnnHandle_t h = cuda::detail::cudnn();
    choose<cudnnConvolutionBwdDataAlgo_t, cudnnConvolutionBwdDataAlgoPerf_t>(
        p.data, p, p.data_conv.get(), "backward data",
        [&](bool measure, int n, int* found, cudnnConvolutionBwdDataAlgoPerf_t* r) {
          SEEDRL_CUDNN_CHECK(
              measure ? cudnnFindConvolutionBackwardDataAlgorithm(
                            h, p.w.get(), p.y.get(), p.data_conv.get(), p.x.get(), n, found, r)
                      : cudnnGetConvolutionBackwardDataAlgorithm_v7(
                            h, p.w.get(), p.y.get(), p.data_conv.get(), p.x.get(), n, found, r));
        },
        [&](cudnnConvolutionBwdDataAlgo_t algo) {
          std::size_t bytes = 0;
          SEEDRL_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
              h, p.w.get(), p.y.get(), p.data_conv.get(), p.x.get(), algo, &bytes));
          return bytes;
        });
  }

  void* workspace(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    return workspace_buffer.view({static_cast<std::int64_t>(bytes)}, DType::u8).raw_data();
  }

  const Tensor& weights_nhwc() {
    const std::uint64_t version = weight->version();
    if (!packed_weight.defined() || packed_version != version || cuda::detail::capturing()) {
      packed_weight = packed_weight_buffer.view(
          {options.out_channels, options.kernel, options.kernel, options.in_channels});
      cuda::kernels::oihw_to_ohwi(f32(weight->value), f32(packed_weight), options.out_channels,
                                  options.in_channels, options.kernel, stream());
      // A captured repack runs at the graph's replays, not now: the next plain forward repacks.
      packed_version = cuda::detail::capturing() ? ~std::uint64_t{0} : version;
    }
    return packed_weight;
  }

  Tensor forward(const Tensor& input, const Shape& out_shape) {
    Plan& p = plan(input.shape(), out_shape);
    choose_forward(p);
    Tensor output = output_buffer.view(out_shape);
    const float one = 1.0f, zero = 0.0f;
    const Tensor& w = weights_nhwc();
    SEEDRL_CUDNN_CHECK(cudnnConvolutionForward(
        cuda::detail::cudnn(), &one, p.x.get(), input.raw_data(), p.w.get(), w.raw_data(),
        p.forward_conv.get(), p.forward.algo, workspace(p.forward.workspace), p.forward.workspace,
        &zero, p.y.get(), output.raw_data()));
    if (bias != nullptr || options.activation != nn::Activation::none) {
      cuda::kernels::bias_activation(f32(output), bias ? f32(bias->value) : nullptr,
                                     out_shape.numel() / options.out_channels, options.out_channels,
                                     fused(options.activation), stream());
    }
    last = &p;
    return output;
  }

  Tensor backward(const Tensor& grad_output, bool input_grad) {
    Plan& p = *last;
    const Tensor grad =
        activation_backward(options.activation, grad_output, saved_output, masked_grad_buffer);
    const float one = 1.0f, zero = 0.0f;
    cudnnHandle_t h = cuda::detail::cudnn();
    choose_filter(p);
    const Tensor packed_grad = packed_grad_buffer.view(
        {options.out_channels, options.kernel, options.kernel, options.in_channels});
    SEEDRL_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        h, &one, p.x.get(), saved_input.raw_data(), p.y.get(), grad.raw_data(), p.filter_conv.get(),
        p.filter.algo, workspace(p.filter.workspace), p.filter.workspace, &zero, p.w.get(),
        packed_grad.raw_data()));
    cuda::kernels::ohwi_to_oihw(f32(packed_grad), f32(weight->grad), options.out_channels,
                                options.in_channels, options.kernel, stream());
    if (bias) {
      column_sums(f32(grad), grad.numel() / options.out_channels, options.out_channels,
                  f32(bias->grad));
    }
    if (!input_grad) return {};
    choose_data(p);
    Tensor grad_input = grad_input_buffer.view(saved_input.shape());
    const Tensor& w = weights_nhwc();
    SEEDRL_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &one, p.w.get(), w.raw_data(), p.y.get(),
                                                    grad.raw_data(), p.data_conv.get(), p.data.algo,
                                                    workspace(p.data.workspace), p.data.workspace,
                                                    &zero, p.x.get(), grad_input.raw_data()));
    return grad_input;
  }
};

// ---- LSTM ----

template <>
struct LstmKernels<Device::cuda> : RegistersRuntime, LstmLayerState {
  Tensor gates;        // [T, B, 4H] activated i, f, g, o
  Tensor prev_hidden;  // [T, B, H] h_{t-1} as used by step t (zero after a reset)
  Tensor prev_cells;   // [T, B, H] c_{t-1} as used by step t
  Tensor resets;       // [T, B] on the device, or undefined
  DeviceScratch gates_buffer, cells_buffer, outputs_buffer, prev_hidden_buffer, prev_cells_buffer,
      resets_buffer;
  DeviceScratch grad_gates_buffer, grad_input_buffer, grad_h_buffer, grad_c_buffer;
  ColumnSums column_sums;

  const void* resets_at(std::int64_t t) const {
    if (!resets.defined()) return nullptr;
    return static_cast<const char*>(resets.raw_data()) +
           t * batch * static_cast<std::int64_t>(size_of(resets.dtype()));
  }
  bool resets_u8() const { return resets.defined() && resets.dtype() == DType::u8; }

  void forward(const Tensor& input, const nn::LstmState& initial_state, const Tensor& resets_in) {
    const std::int64_t in_size = options.input_size, h = hidden(), g = 4 * h;
    const std::int64_t num_steps = input.dim(0), frames = num_steps * batch;
    resets = Tensor();
    if (resets_in.defined()) {
      resets = resets_in.device() == Device::cuda
                   ? resets_in
                   : resets_buffer.view(resets_in.shape(), resets_in.dtype());
      if (resets_in.device() != Device::cuda) resets.copy_from(resets_in);
    }
    gates = gates_buffer.view({num_steps, batch, g});
    cells = cells_buffer.view({num_steps, batch, h});
    outputs = outputs_buffer.view({num_steps, batch, h});
    prev_hidden = prev_hidden_buffer.view({num_steps, batch, h});
    prev_cells = prev_cells_buffer.view({num_steps, batch, h});

    gemm(false, true, frames, g, in_size, 1.0f, f32(input), f32(weight_ih->value), 0.0f,
         f32(gates));
    cuda::kernels::bias_activation(f32(gates), f32(bias->value), frames, g,
                                   cuda::kernels::Act::none, stream());
    for (std::int64_t t = 0; t < num_steps; ++t) {
      const float* hidden_in =
          t == 0 ? static_cast<const float*>(bytes_of(initial_state.h)) : f32(outputs[t - 1]);
      const float* cell_in =
          t == 0 ? static_cast<const float*>(bytes_of(initial_state.c)) : f32(cells[t - 1]);
      cuda::kernels::masked_copy(hidden_in, f32(prev_hidden[t]), resets_at(t), resets_u8(), batch,
                                 h, stream());
      cuda::kernels::masked_copy(cell_in, f32(prev_cells[t]), resets_at(t), resets_u8(), batch, h,
                                 stream());
      gemm(false, true, batch, g, h, 1.0f, f32(prev_hidden[t]), f32(weight_hh->value), 1.0f,
           f32(gates[t]));
      cuda::kernels::lstm_cell_forward(f32(gates[t]), f32(prev_cells[t]), f32(cells[t]),
                                       f32(outputs[t]), batch, h, stream());
    }
  }

  Tensor backward(const Tensor& grad_output, const nn::LstmState& grad_final_state,
                  bool input_grad) {
    const std::int64_t h = hidden(), g = 4 * h, in_size = options.input_size,
                       frames = steps * batch;
    Tensor grad_gates = grad_gates_buffer.view({steps, batch, g});
    Tensor dh_next = grad_h_buffer.view({batch, h});
    Tensor dc_next = grad_c_buffer.view({batch, h});
    if (grad_final_state.h.defined()) {
      dh_next.copy_from(grad_final_state.h);
    } else {
      cuda::kernels::fill(f32(dh_next), batch * h, 0.0f, stream());
    }
    if (grad_final_state.c.defined()) {
      dc_next.copy_from(grad_final_state.c);
    } else {
      cuda::kernels::fill(f32(dc_next), batch * h, 0.0f, stream());
    }
    for (std::int64_t t = steps - 1; t >= 0; --t) {
      cuda::kernels::lstm_cell_backward(f32(gates[t]), f32(cells[t]), f32(prev_cells[t]),
                                        grad_output.defined() ? f32(grad_output[t]) : nullptr,
                                        f32(dh_next), f32(dc_next), f32(grad_gates[t]), batch, h,
                                        stream());
      // Into the previous step through the recurrent weights, except across a reset.
      gemm(false, false, batch, h, g, 1.0f, f32(grad_gates[t]), f32(weight_hh->value), 0.0f,
           f32(dh_next));
      cuda::kernels::zero_reset_rows(f32(dh_next), resets_at(t), resets_u8(), batch, h, stream());
      cuda::kernels::zero_reset_rows(f32(dc_next), resets_at(t), resets_u8(), batch, h, stream());
    }
    grad_initial = {dh_next, dc_next};

    gemm(true, false, g, h, frames, 1.0f, f32(grad_gates), f32(prev_hidden), 0.0f,
         f32(weight_hh->grad));
    gemm(true, false, g, in_size, frames, 1.0f, f32(grad_gates), f32(saved_input), 0.0f,
         f32(weight_ih->grad));
    column_sums(f32(grad_gates), frames, g, f32(bias->grad));
    if (!input_grad) return {};
    Tensor grad_input = grad_input_buffer.view(saved_input.shape());
    gemm(false, false, frames, in_size, g, 1.0f, f32(grad_gates), f32(weight_ih->value), 0.0f,
         f32(grad_input));
    return grad_input;
  }
};

// ---- ReLU ----

template <>
struct ReluKernels<Device::cuda> : RegistersRuntime, ReluState {
  DeviceScratch output_buffer, grad_input_buffer;

  Tensor forward(const Tensor& input) {
    Tensor output = output_buffer.view(input.shape());
    cuda::kernels::relu_forward(f32(input), f32(output), input.numel(), stream());
    return output;
  }
  Tensor backward(const Tensor& grad_output) {
    return relu_masked(grad_output, saved_output, grad_input_buffer);
  }
};

// ---- Rescale ----

template <>
struct RescaleKernels<Device::cuda> : RegistersRuntime, RescaleState {
  DeviceScratch output_buffer;

  Tensor forward(const Tensor& input, const Shape& out_shape) {
    Tensor output = output_buffer.view(out_shape);
    // out_shape is [N, H, W, C] whatever the input layout.
    cuda::kernels::rescale(input.raw_data(), input.dtype() == DType::u8,
                           options.channels_first_input, out_shape[0], out_shape[3], out_shape[1],
                           out_shape[2], options.scale, f32(output), stream());
    return output;
  }
};

}  // namespace seedrl::backend

template class seedrl::backend::Linear<seedrl::Device::cuda>;
template class seedrl::backend::Conv2d<seedrl::Device::cuda>;
template class seedrl::backend::LSTM<seedrl::Device::cuda>;
template class seedrl::backend::ReLU<seedrl::Device::cuda>;
template class seedrl::backend::Rescale<seedrl::Device::cuda>;
