// The CUDA backend's convolution (Conv2d): cuDNN's forward and backward, the algorithms chosen
// once per shape, the bias and a fused activation by kernels.cu.
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

using cuda::detail::stream;

// The CUDA layers' shared helpers (layer_util.hpp).
using namespace cuda_layer;  // NOLINT(google-build-using-namespace)

}  // namespace

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

}  // namespace seedrl::backend

template class seedrl::backend::Conv2d<seedrl::Device::cuda>;
