#include "dnnl_util.hpp"

#include "element_loops.hpp"

namespace seedrl::cpu::detail {

dnnl::engine& engine() {
  static dnnl::engine instance(dnnl::engine::kind::cpu, 0);
  return instance;
}

dnnl::stream& stream() {
  thread_local dnnl::stream instance(engine());
  return instance;
}

void check_sgemm(dnnl_status_t status, const char* what) {
  SEEDRL_REQUIRE(status == dnnl_success, what, ": oneDNN sgemm failed with status ",
                 static_cast<int>(status));
}

void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* a, const float* b, float beta, float* c) {
  if (m == 0 || n == 0) return;
  const std::int64_t lda = transpose_a ? m : k;
  const std::int64_t ldb = transpose_b ? k : n;
  check_sgemm(dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, alpha, a, lda,
                         b, ldb, beta, c, n),
              "gemm");
}

void relu_backward(const float* output, const float* grad, float* result, std::int64_t n) {
  // Both loads are unconditional so that the select compiles to a vector blend: with `grad[i]`
  // read only where the output is positive, GCC kept a scalar loop with a branch per element that
  // mispredicted on about half of a ReLU's outputs (docs/performance.md, issue 19).
  for_each_index(n, kElementParallelThreshold, [output, grad, result](std::int64_t i) {
    const float g = grad[i];
    result[i] = output[i] > 0.0f ? g : 0.0f;
  });
}

void tanh_backward(const float* output, const float* grad, float* result, std::int64_t n) {
  for_each_index(n, kElementParallelThreshold, [output, grad, result](std::int64_t i) {
    result[i] = grad[i] * (1.0f - output[i] * output[i]);
  });
}

}  // namespace seedrl::cpu::detail
