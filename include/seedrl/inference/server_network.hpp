// ServerNetwork<B>: the inference server's network, run on a batch under the learner's newest
// parameters.
//
// On the CPU the network has values of its own, refreshed under SharedParameters' read lock (one
// memcpy) whenever the learner's moved, so the forward holds no lock and never reads memory the
// learner is writing (sharing it cost the MinAtar pipeline: docs/performance.md). On a GPU it
// reads the learner's values in place, under the lock, and its outputs come back to the host
// before the lock is released, so the GPU has finished reading them. One copy of the batch goes
// to the device (none on the CPU); a feed-forward network's forward is replayed from CUDA graphs
// where the backend has them (inference/graphed_forward.hpp).
#pragma once

#include <algorithm>
#include <cstdint>

#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/inference/graphed_forward.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/shared/shared_parameters.hpp"
#include "seedrl/shared/staging.hpp"

namespace seedrl {

template <nn::Backend B>
class ServerNetwork {
 public:
  ServerNetwork(const nn::NetworkOptions& config, SharedParameters& parameters, bool graphs)
      : parameters_(parameters), network_(config), graphed_(graphs) {
    if constexpr (kCopiesParameters) {
      SharedParameters::ReadGuard guard(parameters);
      network_.parameters().copy_values_from(parameters.store());
      copied_version_ = parameters.store().version();
    } else {
      network_.parameters().alias_values(parameters.store());
    }
  }

  /// The outputs, on the host, for host observations [1, B, ...] (with the recurrent state in
  /// and resets [1, B] for a recurrent network); `version` gets the parameters' published
  /// version. Valid until the next call. The inference thread only.
  const nn::NetworkOutputs& forward(const Tensor& observations, const nn::LstmState& state,
                                    const Tensor& resets, std::int32_t& version) {
    if constexpr (kCopiesParameters) {
      {
        SharedParameters::ReadGuard guard(parameters_);
        const std::uint64_t latest = parameters_.store().version();
        if (latest != copied_version_) {
          network_.parameters().copy_values_from(parameters_.store());
          copied_version_ = latest;
        }
        version = published_version();
      }
      return run(observations, state, resets);
    } else {
      SharedParameters::ReadGuard guard(parameters_);
      version = published_version();
      return run(observations, state, resets);
    }
  }

  /// How the forwards ran: plain, or replayed from graphs. Any thread.
  GraphedForwardStats graph_stats() const SEEDRL_EXCLUDES(graph_mutex_) {
    MutexLock lock(graph_mutex_);
    return graphed_.stats();
  }

 private:
  static constexpr bool kCopiesParameters = B::device == Device::cpu;

  const nn::NetworkOutputs& run(const Tensor& observations, const nn::LstmState& state,
                                const Tensor& resets) {
    const Tensor on_device = device_observations_(observations);
    if (network_.config().lstm_size > 0)
      return host_outputs_(network_.forward(on_device, device_state_(state), resets));
    MutexLock lock(graph_mutex_);
    return host_outputs_(graphed_(network_, on_device));
  }
  std::int32_t published_version() const {
    return static_cast<std::int32_t>(std::min<std::int64_t>(parameters_.version(), INT32_MAX));
  }

  SharedParameters& parameters_;
  nn::Network<B> network_;
  std::uint64_t copied_version_ = 0;  // CPU: the store version the values were copied at
  StagingBuffer device_observations_{B::device};
  StateStaging device_state_{B::device};
  HostOutputs host_outputs_{B::device};
  mutable Mutex graph_mutex_;  // held by the forwards; graph_stats() reads meanwhile
  GraphedForward<B> graphed_ SEEDRL_GUARDED_BY(graph_mutex_);
};

}  // namespace seedrl
