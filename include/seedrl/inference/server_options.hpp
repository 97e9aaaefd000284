// What an InferenceServer is set up with (InferenceServerOptions), and the unroll layout it
// produces for an agent with them: make_unroll_spec(agent, step, options), the options read as
// their UnrollShape (shared/unroll_layout.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/inference/request_batcher.hpp"
#include "seedrl/shared/unroll_layout.hpp"

namespace seedrl {

struct InferenceServerOptions {
  std::int32_t max_slots = 1024;  ///< environments that can be connected at once
  std::int32_t max_batch = 64;    ///< frames per inference batch
  std::chrono::microseconds batch_timeout{1000};
  std::int64_t unroll_length = 20;  ///< T: transitions per unroll (an unroll holds T + 1 steps)
  std::int64_t burn_in = 0;         ///< extra leading steps per unroll (R2D2)
  int threads = 1;                  ///< compute threads of the inference thread
  std::uint64_t seed = 0;           ///< action sampling
  /// The inference thread flushes denormal floats to zero (core/float_mode.hpp).
  bool flush_denormals = true;
  /// On a backend with graphs (CUDA), a feed-forward network's forward at each batch size is
  /// captured once and replayed with one launch (inference/graphed_forward.hpp).
  bool graphs = true;

  /// The shape of the unrolls this server records: make_unroll_spec(agent, step, options) gives
  /// their layout (shared/unroll_layout.hpp).
  operator UnrollShape() const { return {unroll_length, burn_in}; }  // NOLINT: implicit on purpose

  void validate(std::string_view owner = "InferenceServerOptions") const {
    SEEDRL_REQUIRE(max_slots > 0, owner, ".max_slots must be positive, got ", max_slots);
    SEEDRL_REQUIRE(max_batch > 0, owner, ".max_batch must be positive, got ", max_batch);
    SEEDRL_REQUIRE(batch_timeout.count() >= 0, owner, ".batch_timeout must be >= 0");
    SEEDRL_REQUIRE(unroll_length >= 1, owner, ".unroll_length must be >= 1, got ", unroll_length);
    SEEDRL_REQUIRE(burn_in >= 0, owner, ".burn_in must be >= 0, got ", burn_in);
    SEEDRL_REQUIRE(threads >= 1, owner, ".threads must be >= 1, got ", threads);
  }
};

using InferenceServerStats = BatcherStats;

}  // namespace seedrl
