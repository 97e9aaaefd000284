// Moving the runtime's batches between the host and a backend's device.
//
// The runtime assembles batches on the host (observations from actors, unrolls from the store)
// and agents pick actions and compute losses there; a GPU backend computes on its own memory.
// StagingBuffer copies a tensor to a device once per batch into a reused buffer, and HostOutputs
// brings a network's outputs back. With the CPU backend both pass tensors through untouched, so
// the CPU path pays nothing.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/lstm_state.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl {

/// A reused destination on `device`: operator() returns a tensor on that device with the
/// source's shape and elements (a copy, or the source itself when it already lives there).
/// A host destination can be page-locked for an accelerator (faster copies).
class StagingBuffer {
 public:
  explicit StagingBuffer(Device device, Device pinned_for = Device::cpu)
      : device_(device),
        buffer_(device == Device::cpu && pinned_for != Device::cpu
                    ? ScratchBuffer::pinned(pinned_for)
                    : ScratchBuffer(device)) {}

  Tensor operator()(const Tensor& source) {
    if (!source.defined() || source.device() == device_) return source;
    const Tensor copy = buffer_.view(source.shape(), source.dtype());
    copy.copy_from(source);
    return copy;
  }

  /// The same copy, queued (DeviceRuntime::copy_async): complete after the device runtime's
  /// synchronize() on this thread.
  Tensor enqueue(const Tensor& source) {
    if (!source.defined() || source.device() == device_) return source;
    const Tensor copy = buffer_.view(source.shape(), source.dtype());
    if (copy.bytes() > 0) {
      const Device other = device_ == Device::cpu ? source.device() : device_;
      device_runtime(other).copy_async(copy.raw_data(), device_, source.raw_data(), source.device(),
                                       copy.bytes());
    }
    return copy;
  }

 private:
  Device device_;
  ScratchBuffer buffer_;
};

/// An LSTM state staged on `device` (both halves).
class StateStaging {
 public:
  explicit StateStaging(Device device) : h_(device), c_(device) {}
  nn::LstmState operator()(const nn::LstmState& state) { return {h_(state.h), c_(state.c)}; }

 private:
  StagingBuffer h_, c_;
};

/// Host copies of a network's outputs (the outputs themselves on the CPU backend). Copies go to
/// memory page-locked for `device`; each call queues them all, then waits once for the network's
/// work and the copies to finish (one round trip to the device, not one per head).
class HostOutputs {
 public:
  explicit HostOutputs(Device device)
      : heads_(make_buffers(device, std::make_index_sequence<nn::kHeadNames.size()>())),
        h_(Device::cpu, device),
        c_(Device::cpu, device) {}

  const nn::NetworkOutputs& operator()(const nn::NetworkOutputs& outputs) {
    if (!on_device(outputs)) return outputs;
    const auto from = nn::head_tensors(outputs);
    const auto to = nn::head_tensors(host_);
    Device device = Device::cpu;
    for (std::size_t i = 0; i < from.size(); ++i) {
      *to[i] = heads_[i].enqueue(*from[i]);
      if (from[i]->defined() && from[i]->device() != Device::cpu) device = from[i]->device();
    }
    host_.final_state = {h_.enqueue(outputs.final_state.h), c_.enqueue(outputs.final_state.c)};
    if (outputs.final_state.h.defined() && outputs.final_state.h.device() != Device::cpu) {
      device = outputs.final_state.h.device();
    }
    device_runtime(device).synchronize();
    return host_;
  }

 private:
  static constexpr std::size_t kHeads = nn::kHeadNames.size();

  template <std::size_t... I>
  static std::array<StagingBuffer, kHeads> make_buffers(Device device, std::index_sequence<I...>) {
    return {((void)I, StagingBuffer(Device::cpu, device))...};
  }

  static bool on_device(const nn::NetworkOutputs& o) {
    for (const Tensor* t : nn::head_tensors(o))
      if (t->defined()) return t->device() != Device::cpu;
    if (o.final_state.h.defined()) return o.final_state.h.device() != Device::cpu;
    return false;
  }

  std::array<StagingBuffer, kHeads> heads_;  // one per head, in kHeadNames' order
  StagingBuffer h_, c_;
  nn::NetworkOutputs host_;
};

}  // namespace seedrl
