// LoadGenerator: many actor connections from few threads, for bench_connections. Each connection
// is a small state machine on an Asio event loop (connect, HELLO, WELCOME, then STEP / ACTIONS in
// lock-step, one environment, with wire protocol frames from seedrl::protocol); every round trip
// of the measured window goes into a log-scale histogram (2% buckets) shared by the threads. Its
// environment is a fixed observation of obs_bytes (the server's policy is trivial), or with
// `cartpole` a CartPole that plays the actions a real learner answers (distributed_learner --env
// cartpole): thousands of slow actors from one thread.
//
// Thread-safety: connect(), start_stepping(), measure() and finish() from one thread (the
// caller's); the connections run on the generator's own threads.
#pragma once

#include <utility>  // before Asio: Boost 1.74's Asio needs it in C++20

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cartpole_logic.hpp"
#include "latency_histogram.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/transport/protocol.hpp"

namespace seedrl::bench {

namespace asio = boost::asio;

inline constexpr const char* kLoadToken = "bench-connections";

struct LoadOptions {
  std::string host = "127.0.0.1";  ///< an IPv4 address; loopback: sources spread over 127.0.0.x
  std::uint16_t port = 0;
  std::string token = kLoadToken;
  std::int32_t connections = 1;
  double rate = 0;  ///< steps a second in all, paced; 0: lock-step as fast as answered
  std::int32_t threads = 1;
  std::int32_t handshake_window = 32;
  std::int64_t obs_bytes = 16;  ///< the fixed observation's bytes (not with cartpole)
  bool cartpole = false;
};

struct LoadResult {
  std::int64_t connected = 0, refused = 0, broken = 0, finished = 0, steps = 0;
  double connect_seconds = 0, p50_us = 0, p99_us = 0, max_us = 0;

  /// The measured round trips: their count and quantiles.
  void take_latency(const LatencyHistogram& latency) {
    steps = latency.count();
    p50_us = latency.quantile(0.5);
    p99_us = latency.quantile(0.99);
    max_us = latency.max();
  }
};

class LoadGenerator {
 public:
  explicit LoadGenerator(LoadOptions options)
      : o_(std::move(options)),
        address_(asio::ip::make_address_v4(o_.host)),
        period_(o_.rate > 0 ? Seconds(o_.connections / o_.rate) : Seconds(0)) {
    spec_.observation =
        o_.cartpole ? TensorSpec{{4}, DType::f32} : TensorSpec{{o_.obs_bytes}, DType::u8};
    spec_.action = ActionSpec::discrete(2);
    layout_ = protocol::step_layout(1, spec_);
    for (std::int32_t i = 0; i < o_.connections; ++i)
      clients_.push_back(std::make_unique<Client>(*this, i));
  }
  ~LoadGenerator() { finish(); }

  /// Makes every connection (at most handshake_window handshakes at once) and returns when all
  /// are connected or refused.
  LoadResult connect() {
    const auto start = Clock::now();
    for (std::int32_t i = 0; i < std::min<std::int32_t>(o_.handshake_window, size()); ++i)
      next_connect();
    for (std::int32_t t = 0; t < o_.threads; ++t) pool_.emplace_back([this] { io_.run(); });
    while (settled_.load() < size()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    LoadResult r;
    r.connected = connected_.load();
    r.refused = refused_.load();
    r.connect_seconds = Seconds(Clock::now() - start).count();
    return r;
  }
  void start_stepping() {
    for (auto& c : clients_) asio::post(c->socket.get_executor(), [&c = *c] { c.begin(); });
  }
  void measure(bool on) { measuring_.store(on); }
  /// Connections still open (the learner closes them when training is over).
  std::int64_t open() const { return connected_.load() - closed_.load(); }
  LoadResult finish() {
    if (finished_) return result_;
    finished_ = true;
    stopping_.store(true);
    for (auto& c : clients_) asio::post(c->socket.get_executor(), [&c = *c] { c.close(); });
    guard_.reset();
    for (std::thread& t : pool_) t.join();
    result_.connected = connected_.load();
    result_.refused = refused_.load();
    result_.broken = broken_.load();
    result_.finished = finished_count_.load();
    result_.take_latency(latency_);
    return result_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  using Seconds = std::chrono::duration<double>;

  struct Client;
  std::int32_t size() const { return static_cast<std::int32_t>(clients_.size()); }

  void next_connect() {
    const std::int32_t i = next_.fetch_add(1);
    if (i < size()) clients_[static_cast<std::size_t>(i)]->start_connect();
  }
  void settled(bool ok) {
    (ok ? connected_ : refused_).fetch_add(1);
    settled_.fetch_add(1);
    next_connect();
  }
  void record(double us) {
    if (measuring_.load(std::memory_order_relaxed)) latency_.add(us);
  }

  struct Client {
    LoadGenerator& g;
    std::int32_t index;
    asio::ip::tcp::socket socket;
    asio::steady_timer timer;
    std::string out;
    std::array<std::uint8_t, protocol::kHeaderBytes> header{};
    std::vector<std::uint8_t> payload;
    std::uint32_t sequence = 0;
    Clock::time_point sent, next_send;
    bool stepping = false, closed = false;
    CartPole env;
    float reward = 0.0f;
    std::uint8_t flag = step_flags::kFirst;

    Client(LoadGenerator& generator, std::int32_t i)
        : g(generator),
          index(i),
          socket(asio::make_strand(g.io_)),
          timer(socket.get_executor()),
          env(0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1)) {}

    // The learner's action (in `payload`) played, or after an ending step a new episode begun.
    bool play() {
      std::int32_t action = 0;
      if (!protocol::decode_actions(payload, 2, {&action, 1}).is_ok()) return false;
      if (flag & (step_flags::kTerminated | step_flags::kTruncated)) {
        env.reset();
        flag = step_flags::kFirst;
        reward = 0.0f;
      } else {
        flag = env.step(action);
        reward = 1.0f;
      }
      return true;
    }
    void finish() {  // the learner said why it closes (training is over, it shuts down)
      g.finished_count_.fetch_add(1);
      close();
    }

    void start_connect() {
      asio::post(socket.get_executor(), [this] {
        boost::system::error_code ec;
        socket.open(asio::ip::tcp::v4(), ec);
        // On loopback, a source address of its own among 250 (the server's admission is per
        // peer address, as for actors on many machines).
        if (!ec && g.address_.is_loopback()) {
          const asio::ip::address_v4 source(0x7f000001u + static_cast<std::uint32_t>(index % 250));
          socket.bind({source, 0}, ec);
        }
        if (ec) return fail_handshake();
        socket.async_connect({g.address_, g.o_.port}, [this](boost::system::error_code e) {
          if (e) return fail_handshake();
          socket.set_option(asio::ip::tcp::no_delay(true));
          protocol::Hello hello{g.o_.token,
                                0x5eed000000000000ull + static_cast<std::uint64_t>(index), 1, false,
                                g.spec_};
          out.clear();
          protocol::encode_hello(out, hello, 1);
          asio::async_write(socket, asio::buffer(out),
                            [this](boost::system::error_code e2, std::size_t) {
                              if (e2) return fail_handshake();
                              read_frame(true);
                            });
        });
      });
    }
    void fail_handshake() {
      close();
      g.settled(false);
    }
    void read_frame(bool handshake) {
      asio::async_read(
          socket, asio::buffer(header),
          [this, handshake](boost::system::error_code e, std::size_t) {
            protocol::FrameHeader h;
            if (e || !protocol::decode_header(header, 1u << 30, &h).is_ok())
              return handshake ? fail_handshake() : broken();
            payload.resize(h.payload_bytes());
            asio::async_read(
                socket, asio::buffer(payload),
                [this, handshake, h](boost::system::error_code e2, std::size_t) {
                  if (e2) return handshake ? fail_handshake() : broken();
                  if (handshake) {
                    if (h.type != protocol::FrameType::welcome) return fail_handshake();
                    out.clear();  // without an environment the STEP is made once: its sequence
                                  // changes
                    std::vector<std::uint8_t> observation(g.layout_.observation_bytes, 7);
                    protocol::encode_step(out, 0, {&reward, 1}, {&flag, 1}, observation);
                    return g.settled(true);
                  }
                  if (h.type == protocol::FrameType::error && g.o_.cartpole) return finish();
                  if (h.type != protocol::FrameType::actions || h.sequence != sequence)
                    return broken();
                  g.record(std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
                  if (g.o_.cartpole && !play()) return broken();
                  send_next();
                });
          });
    }
    void begin() {
      if (closed || out.empty()) return;
      stepping = true;
      next_send = Clock::now();
      if (g.period_.count() > 0) {  // a random phase within the period
        std::mt19937 rng(static_cast<std::uint32_t>(index));
        next_send += std::chrono::duration_cast<Clock::duration>(
            g.period_ * std::uniform_real_distribution<double>(0, 1)(rng));
      }
      send_next();
    }
    void send_next() {
      if (g.stopping_.load() || closed) return;
      const auto now = Clock::now();
      if (g.period_.count() > 0 && next_send > now) {
        timer.expires_at(next_send);
        timer.async_wait([this](boost::system::error_code e) {
          if (!e) send_now();
        });
        return;
      }
      send_now();
    }
    void send_now() {
      if (g.stopping_.load() || closed) return;
      sequence += 1;
      if (g.o_.cartpole) {
        float observation[4];
        env.observe(observation);
        out.clear();
        protocol::encode_step(out, sequence, {&reward, 1}, {&flag, 1},
                              {reinterpret_cast<const std::uint8_t*>(observation), 16});
      } else {
        const std::uint32_t le = sequence;  // x86: the wire's little-endian order
        std::memcpy(out.data() + 8, &le, 4);
      }
      sent = Clock::now();
      if (g.period_.count() > 0)
        next_send += std::chrono::duration_cast<Clock::duration>(g.period_);
      asio::async_write(socket, asio::buffer(out),
                        [this](boost::system::error_code e, std::size_t) {
                          if (e) return broken();
                          read_frame(false);
                        });
    }
    void broken() {
      if (!closed && !g.stopping_.load()) g.broken_.fetch_add(1);
      close();
    }
    void close() {
      if (closed) return;
      closed = true;
      if (!out.empty()) g.closed_.fetch_add(1);  // a connection that was made
      boost::system::error_code ignored;
      timer.cancel();
      socket.close(ignored);
    }
  };

  const LoadOptions o_;
  const asio::ip::address_v4 address_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{io_.get_executor()};
  Seconds period_;
  StepSpec spec_;
  protocol::StepLayout layout_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::thread> pool_;
  std::atomic<std::int32_t> next_{0}, settled_{0};
  std::atomic<std::int64_t> connected_{0}, refused_{0}, broken_{0}, finished_count_{0}, closed_{0};
  std::atomic<bool> measuring_{false}, stopping_{false};
  LatencyHistogram latency_;
  bool finished_ = false;
  LoadResult result_;
};

}  // namespace seedrl::bench
