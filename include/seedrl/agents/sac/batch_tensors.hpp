// The SAC learner's batch (agents/sac/learner.hpp): its n-step windows, and its tensors between
// the host, where the losses compute (algo/sac_loss.hpp), and the backend's device.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "seedrl/algo/sac_loss.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/experience/unroll.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

/// The n-step transitions of a batch of windows (their first steps), as SAC's losses read them.
struct SacWindows {
  Eigen::ArrayXf returns;                    ///< G [B]
  Eigen::ArrayXf discounts;                  ///< gamma^k, 0 after a termination [B]
  Eigen::ArrayXf mask;                       ///< 1 for a transition [B]
  std::vector<std::int64_t> bootstrap_step;  ///< k: the step of s_k in the window [B]
  std::int64_t count = 0;
  double policy_lag = 0.0;
};
/// The windows of `batch` (steps [0, n] of each column).
SacWindows sac_windows(const UnrollBatch& batch, std::int64_t n_step, float discount,
                       float max_abs_reward, std::int64_t version);

namespace sac_detail {

inline float host_scalar(const Tensor& t) {
  return t.device() == Device::cpu ? t.data<float>()[0] : t.clone(Device::cpu).data<float>()[0];
}

// Gathers row `steps[b]` of every column b of `x` [L, B, ...] into [1, B, ...] (host).
inline Tensor gather(ScratchBuffer& buffer, const Tensor& x,
                     const std::vector<std::int64_t>& steps) {
  const std::int64_t batch = x.dim(1);
  const Tensor out = buffer.view(x.shape().drop_front(1).prepend({1}), x.dtype());
  for (std::int64_t b = 0; b < batch; ++b)
    std::memcpy(out[0].row_data(b), x[steps[static_cast<std::size_t>(b)]].row_data(b),
                x[0].row_bytes());
  return out;
}

// Row-major [N, D] host copy of a network output [1, N, D] (or [1, N] as [N]).
inline SacMatrix host_matrix(const Tensor& t, std::int64_t n, std::int64_t d) {
  const Tensor host = t.device() == Device::cpu ? t : t.clone(Device::cpu);
  return host.reshape({n, d}).matrix<float>().array();
}
inline Eigen::ArrayXf host_vector(const Tensor& t, std::int64_t n) {
  const Tensor host = t.device() == Device::cpu ? t : t.clone(Device::cpu);
  return host.reshape({n}).flat<float>();
}
// A host [N, D] matrix as a tensor [1, N, D] on the device (through `staging`).
inline Tensor device_tensor(StagingBuffer& staging, ScratchBuffer& host, const SacMatrix& m) {
  const Tensor t = host.view({1, m.rows(), m.cols()});
  Eigen::Map<SacMatrix>(t.data<float>(), m.rows(), m.cols()) = m;
  return staging(t);
}
inline Tensor device_vector(StagingBuffer& staging, ScratchBuffer& host, const Eigen::ArrayXf& v) {
  const Tensor t = host.view({1, v.size()});
  Eigen::Map<Eigen::ArrayXf>(t.data<float>(), v.size()) = v;
  return staging(t);
}

}  // namespace sac_detail
}  // namespace seedrl
