// bench_transport: how many lock-step actor steps per second the transports carry, and at what
// latency. K actor threads (one environment each, as seed_rl's actors) send a step with an
// observation of --obs-bytes and wait for the action; the server side is the same for every
// transport: SEED's dynamic batching (RequestBatcher) and one copy of each observation into a
// batch buffer, with a trivial policy instead of a network (support/trivial_endpoint.hpp).
//
//   inproc  LocalClient: the in-process path (no socket at all)
//   unix    RemoteClient -> SocketServer over a Unix-domain socket
//   tcp     RemoteClient -> SocketServer over TCP on 127.0.0.1
//   tls     the same over TLS 1.3 (EC P-256 certificates made at start; no client certificates)
//   grpc    a gRPC bidirectional stream per actor (seed_rl's transport), when built with gRPC
//
//   bench_transport [--transports inproc,unix,tcp,tls,grpc] [--clients 1,16]
//                   [--obs-bytes 16,28224] [--seconds 3] [--io-threads 1] [--flood-threads 0]
//
// --flood-threads K: K more threads connect over and over during the measurement (TLS: a full
// handshake each time) with a wrong token, as a flood of strangers would: the figures then say
// what it costs the actors.
//
// One JSON line per (transport, clients, obs_bytes): steps_per_s, p50_us, p99_us (latency of
// one step as the actor sees it), mean inference batch. The last line is a JSON summary with the
// ratios the docs quote (tcp/grpc at 16 clients and 28224 bytes, inproc/tcp at 16 bytes, tls/tcp).

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"
#include "seedrl/acting/inference_client.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/bench_util.hpp"
#include "support/tls_certificates.hpp"
#include "support/trivial_endpoint.hpp"
#ifdef SEEDRL_BENCH_GRPC
#include "grpc_baseline.hpp"
#endif

using namespace seedrl;
using namespace seedrl::bench;

namespace {

constexpr std::int32_t kActions = 6;

struct Measurement {
  double steps_per_s = 0.0;
  double p50_us = 0.0;
  double p99_us = 0.0;
  double mean_batch = 0.0;
  std::int64_t flood_attempts = 0;  ///< strangers' connection attempts during the run
};

TensorSpec spec_for(std::int64_t bytes) {
  if (bytes == 28224) return {{4, 84, 84}, DType::u8};  // a stack of 4 Atari frames
  return {{bytes}, DType::u8};
}

/// Runs `clients` threads; each calls `make_stepper(i)` once to get a callable that performs one
/// lock-step exchange and returns false on failure. Steps are counted and timed in a window of
/// `seconds` after `warmup` seconds.
template <class MakeStepper>
Measurement measure(int clients, double warmup, double seconds, MakeStepper make_stepper) {
  std::atomic<bool> measuring{false}, stop{false};
  std::atomic<int> ready{0};
  std::vector<std::vector<float>> latencies(static_cast<std::size_t>(clients));
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      const auto stepper = make_stepper(c);  // a shared_ptr to the client's state
      auto& step = *stepper;
      auto& mine = latencies[static_cast<std::size_t>(c)];
      mine.reserve(1 << 20);
      ++ready;
      while (!stop) {
        const double t0 = now_seconds();
        if (!step()) {
          failed = true;
          return;
        }
        if (measuring) mine.push_back(static_cast<float>((now_seconds() - t0) * 1e6));
      }
    });
  }
  while (ready < clients && !failed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  measuring = true;
  const double start = now_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  measuring = false;
  const double elapsed = now_seconds() - start;
  stop = true;
  for (std::thread& t : threads) t.join();
  SEEDRL_REQUIRE(!failed, "bench_transport: a client failed");

  std::vector<float> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  Measurement m;
  m.steps_per_s = static_cast<double>(all.size()) / elapsed;
  if (!all.empty()) {
    auto at = [&](double q) {
      const auto k = static_cast<std::size_t>(q * static_cast<double>(all.size() - 1));
      std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
      return static_cast<double>(all[k]);
    };
    m.p50_us = at(0.50);
    m.p99_us = at(0.99);
  }
  return m;
}

/// Per-client state for the seedrl transports: one environment's step buffers and a client.
template <class Client>
struct ClientStepper {
  Client client;
  Tensor observation;
  std::vector<float> reward{0.0f};
  std::vector<std::uint8_t> flags{step_flags::kFirst};
  std::vector<std::int32_t> action{0};
  std::uint8_t counter = 0;

  ClientStepper(Client c, const TensorSpec& spec) : client(std::move(c)) {
    observation = Tensor::zeros(spec.shape.prepend({1}), spec.dtype);
    ConnectRequest request;
    request.run_id = new_run_id();
    request.num_envs = 1;
    request.spec.observation = spec;
    request.spec.action = {kActions};
    const Status status = client.connect(request);
    SEEDRL_REQUIRE(status.is_ok(), "bench_transport: connect failed: ", status.to_string());
  }
  bool operator()() {
    static_cast<std::uint8_t*>(observation.raw_data())[0] = ++counter;
    const bool ok = client.step({observation, reward, flags, {}}, action).is_ok();
    flags[0] = 0;
    return ok;
  }
};

// Throwaway certificates for the tls transport, made once per run.
const test::TlsFiles& tls_files() {
  static const test::TlsFiles files = test::make_tls_files(
      std::filesystem::temp_directory_path() / ("seedrl_bench_tls_" + std::to_string(::getpid())));
  return files;
}

// Strangers that connect over and over with a wrong token (with TLS: a full handshake each time)
// while `flooding` holds.
struct Flood {
  std::atomic<bool> flooding{true};
  std::atomic<std::int64_t> attempts{0};
  std::vector<std::thread> threads;
  Flood(int count, RemoteClientOptions options, const TensorSpec& spec) {
    options.token = "not the token";
    options.connect_timeout = std::chrono::seconds(2);
    for (int i = 0; i < count; ++i) {
      threads.emplace_back([this, options, spec] {
        RemoteClient stranger(options);
        ConnectRequest request;
        request.num_envs = 1;
        request.spec.observation = spec;
        request.spec.action = {kActions};
        while (flooding) {
          request.run_id = new_run_id();
          (void)stranger.connect(request);
          ++attempts;
        }
      });
    }
  }
  ~Flood() {
    flooding = false;
    for (std::thread& t : threads) t.join();
  }
};

Measurement run_transport(const std::string& transport, int clients, std::int64_t obs_bytes,
                          double warmup, double seconds, int io_threads, int flood_threads) {
  const TensorSpec spec = spec_for(obs_bytes);
  // A batch is served once every connected actor is waiting (or after 1 ms), as in the runtime.
  TrivialEndpoint endpoint(spec, kActions, std::max(clients, 1), std::chrono::microseconds(1000));
  Measurement m;
  if (transport == "inproc") {
    m = measure(clients, warmup, seconds, [&](int) {
      return std::make_shared<ClientStepper<LocalClient>>(LocalClient(endpoint), spec);
    });
  } else if (transport == "tcp" || transport == "unix" || transport == "tls") {
    SocketServerOptions options;
    const std::string path = std::filesystem::temp_directory_path().string() +
                             "/seedrl_bench_transport_" + std::to_string(::getpid()) + ".sock";
    options.listen = transport == "unix" ? "unix:" + path : "127.0.0.1:0";
    options.io_threads = io_threads;
    if (transport == "tls") {
      options.tls.certificate = tls_files().server_certificate;
      options.tls.private_key = tls_files().server_key;
    }
    SocketServer server(endpoint, options);
    server.start();
    RemoteClientOptions client;
    client.address = server.address().to_string();
    if (transport == "tls") client.tls.ca = tls_files().ca;
    std::optional<Flood> flood;
    if (flood_threads > 0) flood.emplace(flood_threads, client, spec);
    m = measure(clients, warmup, seconds, [&](int) {
      return std::make_shared<ClientStepper<RemoteClient>>(RemoteClient(client), spec);
    });
    if (flood) {
      m.flood_attempts = flood->attempts.load();
      flood.reset();
    }
    server.stop();
#ifdef SEEDRL_BENCH_GRPC
  } else if (transport == "grpc") {
    GrpcServer server(endpoint);
    const std::string address = server.address();
    m = measure(clients, warmup, seconds, [&](int c) {
      struct Stepper {
        GrpcActorStream stream;
        std::vector<std::uint8_t> observation;
        std::int32_t action = 0;
        Stepper(const std::string& to, std::size_t bytes, std::uint8_t fill)
            : stream(to), observation(bytes, fill) {}
        bool operator()() {
          ++observation[0];
          return stream.step(observation, 0.0f, &action);
        }
      };
      return std::make_shared<Stepper>(address, static_cast<std::size_t>(obs_bytes),
                                       static_cast<std::uint8_t>(c));
    });
#endif
  } else {
    SEEDRL_REQUIRE(false, "bench_transport: unknown transport '", transport, "'");
  }
  m.mean_batch = endpoint.stats().mean_batch_size();
  endpoint.stop();
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app(
      "seedrl transport benchmark: lock-step actor steps per second and latency");
  std::vector<std::string> transports{"inproc", "unix", "tcp", "tls"};
#ifdef SEEDRL_BENCH_GRPC
  transports.push_back("grpc");
#endif
  std::vector<int> clients{1, 16};
  std::vector<std::int64_t> obs_bytes{16, 28224};
  double seconds = 3.0, warmup = 0.5;
  int io_threads = 1;
  app.option("--transports", transports, "inproc, unix, tcp, tls, grpc").delimiter(',');
  int flood_threads = 0;
  app.option("--flood-threads", flood_threads,
             "threads of strangers connecting over and over (tcp, unix, tls)")
      .range(0, 256);
  app.option("--clients", clients, "actor threads (one environment each)")
      .delimiter(',')
      .range(1, 4096);
  app.option("--obs-bytes", obs_bytes, "observation size (28224 = 4x84x84 u8)")
      .delimiter(',')
      .range(1, 1 << 24);
  app.option("--seconds", seconds, "measured seconds per configuration").positive();
  app.option("--warmup", warmup, "seconds before measuring").non_negative();
  app.option("--io-threads", io_threads, "SocketServer I/O threads").range(1, 64);
  if (const auto exit = app.parse(argc, argv)) return *exit;

  try {
    std::map<std::string, double> rate;  // "transport/clients/bytes" -> steps/s
    std::map<std::string, double> p99;
    for (const std::int64_t bytes : obs_bytes) {
      for (const int k : clients) {
        for (const std::string& transport : transports) {
          const Measurement m =
              run_transport(transport, k, bytes, warmup, seconds, io_threads, flood_threads);
          const std::string key = transport + "/" + std::to_string(k) + "/" + std::to_string(bytes);
          rate[key] = m.steps_per_s;
          p99[key] = m.p99_us;
          Json()
              .add("bench", "transport")
              .add("transport", transport)
              .add("clients", k)
              .add("obs_bytes", static_cast<long long>(bytes))
              .add("io_threads", io_threads)
              .add("steps_per_s", m.steps_per_s)
              .add("p50_us", m.p50_us)
              .add("p99_us", m.p99_us)
              .add("mean_batch", m.mean_batch)
              .add("flood_threads", flood_threads)
              .add("flood_attempts_per_s",
                   static_cast<double>(m.flood_attempts) / (warmup + seconds))
              .add("cores", static_cast<int>(std::thread::hardware_concurrency()))
              .print();
        }
      }
    }
    Json summary;
    summary.add("bench", "transport_summary");
    auto ratio = [&](const std::string& name, const std::string& a, const std::string& b,
                     const std::map<std::string, double>& table) {
      if (table.count(a) && table.count(b) && table.at(b) > 0)
        summary.add(name, table.at(a) / table.at(b));
    };
    ratio("tcp_over_grpc_steps_16c_28224b", "tcp/16/28224", "grpc/16/28224", rate);
    ratio("grpc_over_tcp_p99_16c_28224b", "grpc/16/28224", "tcp/16/28224", p99);
    ratio("inproc_over_tcp_steps_16c_16b", "inproc/16/16", "tcp/16/16", rate);
    ratio("inproc_over_tcp_steps_1c_16b", "inproc/1/16", "tcp/1/16", rate);
    ratio("tls_over_tcp_steps_16c_28224b", "tls/16/28224", "tcp/16/28224", rate);
    ratio("tls_over_tcp_p99_16c_28224b", "tls/16/28224", "tcp/16/28224", p99);
    ratio("tls_over_tcp_steps_16c_16b", "tls/16/16", "tcp/16/16", rate);
    summary.print();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_transport: error: %s\n", e.what());
    return 1;
  }
}
