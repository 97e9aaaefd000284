// ThreadLoad: actor connections as RemoteClient does them, a thread each, in lock-step with one
// environment of a fixed observation: the client the library ships, over plain TCP or TLS (its
// BIO-pair channel), for bench_connections' TLS-against-plain lines. The same interface as
// LoadGenerator (connect, start_stepping, measure, finish).
//
// Thread-safety: the methods from one thread; the clients run on their own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "connection_load.hpp"
#include "latency_histogram.hpp"
#include "seedrl/transport/remote_client.hpp"

namespace seedrl::bench {

class ThreadLoad {
 public:
  /// `tls_ca` non-empty: TLS, the server's certificate checked against it.
  ThreadLoad(std::uint16_t port, std::int64_t obs_bytes, std::int32_t connections,
             std::string tls_ca)
      : port_(port), obs_bytes_(obs_bytes), connections_(connections), tls_ca_(std::move(tls_ca)) {}
  ~ThreadLoad() { finish(); }

  LoadResult connect() {
    const auto start = std::chrono::steady_clock::now();
    for (std::int32_t i = 0; i < connections_; ++i) threads_.emplace_back([this, i] { run(i); });
    while (settled_.load() < connections_)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    LoadResult r;
    r.connected = connected_.load();
    r.refused = connections_ - r.connected;
    r.connect_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  void start_stepping() { go_.store(true); }
  void measure(bool on) { measuring_.store(on); }
  LoadResult finish() {
    if (threads_.empty()) return result_;
    stopping_.store(true);
    go_.store(true);
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    result_.connected = connected_.load();
    result_.refused = connections_ - result_.connected;
    result_.broken = broken_.load();
    result_.take_latency(latency_);
    return result_;
  }

 private:
  void run(std::int32_t i) {
    RemoteClientOptions options;
    options.address = "127.0.0.1:" + std::to_string(port_);
    options.token = kLoadToken;
    options.tls.ca = tls_ca_;
    RemoteClient client(options);
    const StepSpec spec{TensorSpec{{obs_bytes_}, DType::u8}, ActionSpec::discrete(2), {}};
    const bool ok = client
                        .connect({.run_id = 0x7ead000000000000ull + static_cast<std::uint64_t>(i),
                                  .num_envs = 1,
                                  .spec = spec})
                        .is_ok();
    if (ok) connected_.fetch_add(1);
    settled_.fetch_add(1);
    if (!ok) return;
    while (!go_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::vector<std::uint8_t> observation(static_cast<std::size_t>(obs_bytes_), 7);
    float reward = 1.0f;
    std::uint8_t flag = 0;
    std::int32_t action = 0;
    StepRecord record;
    record.observations = Tensor::from_blob(observation.data(), Shape({1, obs_bytes_}), DType::u8);
    record.rewards = {&reward, 1};
    record.flags = {&flag, 1};
    while (!stopping_.load(std::memory_order_relaxed)) {
      const auto sent = std::chrono::steady_clock::now();
      if (!client.step(record, std::span<std::int32_t>(&action, 1)).is_ok()) {
        if (!stopping_.load()) broken_.fetch_add(1);
        return;
      }
      if (measuring_.load(std::memory_order_relaxed))
        latency_.add(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - sent)
                .count());
    }
    client.disconnect();
  }

  const std::uint16_t port_;
  const std::int64_t obs_bytes_;
  const std::int32_t connections_;
  const std::string tls_ca_;
  std::vector<std::thread> threads_;
  std::atomic<std::int32_t> settled_{0};
  std::atomic<std::int64_t> connected_{0}, broken_{0};
  std::atomic<bool> go_{false}, measuring_{false}, stopping_{false};
  LatencyHistogram latency_;
  LoadResult result_;
};

}  // namespace seedrl::bench
