// bench_connections: many actor connections on one learner-side server, driven from few
// threads. The server is a child process (this program with --serve): a SocketServer over TCP
// with SEED's dynamic batching and a trivial policy in place of a network
// (support/trivial_endpoint.hpp), so that what is measured is the transport and the batching. The
// load generator here holds every connection on an Asio event loop: one environment each, in
// lock-step (the next STEP once the last one's ACTIONS are in), as fast as the server answers or,
// with --rate, at that many steps a second in all (each connection at rate / N, started at a
// random phase). Connections come from source addresses 127.0.0.1 - 127.0.0.250 (the server's
// admission budget is per peer address, as it would be for actors on many machines), at most
// --handshake-window handshakes at a time.
//
//   bench_connections [--connections 1,64,1024,4096] [--obs-bytes 16,28224] [--seconds 5]
//                     [--warmup 1] [--rate 0] [--pin] [--threads 1] [--io-threads 1]
//                     [--max-batch 256]
//
// One JSON line per (connections, observation bytes): steps_per_s, p50_us and p99_us (one step's
// round trip as the actor sees it), the server's CPU per 1,000 steps (ms, from /proc: user and
// system), its resident memory per idle connection (KiB: RSS with every connection made and
// idle, less RSS before the first), connections made, refused and broken. --pin puts the server
// on core 0 and the load generator on core 1, so that the server's share is seen alone.
//
//   bench_connections --learner HOST:PORT --token-file F --connections 4096 --rate 40960
//
// feeds a real distributed_learner --env cartpole instead: CartPole actors, one environment a
// connection, that play its actions (4,096 at 10 steps/s each above) until it closes them at the
// end of training; one JSON line of what they did.
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "connection_load.hpp"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "seedrl/transport/token.hpp"
#include "support/tls_certificates.hpp"
#include "support/trivial_endpoint.hpp"
#include "thread_load.hpp"

using namespace seedrl;

namespace {

// ---- The server: a child process, pinned or not, that says its port and then serves ----

int serve(std::int64_t obs_bytes, std::int32_t io_threads, std::int32_t max_batch,
          const std::string& tls_cert, const std::string& tls_key) {
  bench::TrivialEndpoint endpoint(TensorSpec{{obs_bytes}, DType::u8}, 2, max_batch,
                                  std::chrono::microseconds(1000));
  SocketServerOptions options;
  options.listen = "127.0.0.1:0";
  options.token = bench::kLoadToken;
  options.max_connections = 16384;
  options.io_threads = io_threads;
  options.idle_timeout = std::chrono::minutes(10);
  options.max_frame_bytes = static_cast<std::uint32_t>(64 + 2 * obs_bytes + (1 << 16));
  options.tls.certificate = tls_cert;
  options.tls.private_key = tls_key;
  SocketServer server(endpoint, options);
  server.start();
  std::printf("port %u\n", static_cast<unsigned>(server.address().port));
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) > 0) {
  }  // until the load generator closes our stdin
  const SocketServerStats s = server.stats();
  std::printf(
      "{\"accepted\":%lld,\"handshakes\":%lld,\"refused\":%lld,\"refused_at_accept\":%lld}\n",
      static_cast<long long>(s.accepted), static_cast<long long>(s.handshakes),
      static_cast<long long>(s.refused), static_cast<long long>(s.refused_at_accept));
  server.stop();
  endpoint.stop();
  return 0;
}

void pin_to(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) std::perror("bench_connections: pin");
}

struct ServerProcess {
  pid_t pid = -1;
  int to_child = -1;  // its stdin: closing it ends the server
  FILE* from_child = nullptr;
  std::uint16_t port = 0;
};

ServerProcess start_server(std::int64_t obs_bytes, std::int32_t io_threads, std::int32_t max_batch,
                           bool pin, const std::string& tls_cert, const std::string& tls_key) {
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) fail("bench_connections: pipe");
  ServerProcess p;
  p.pid = ::fork();
  if (p.pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    if (pin) pin_to(0);
    const std::string b = std::to_string(obs_bytes), t = std::to_string(io_threads),
                      m = std::to_string(max_batch);
    if (tls_cert.empty()) {
      ::execl("/proc/self/exe", "bench_connections", "--serve", "--obs-bytes", b.c_str(),
              "--io-threads", t.c_str(), "--max-batch", m.c_str(), nullptr);
    } else {
      ::execl("/proc/self/exe", "bench_connections", "--serve", "--obs-bytes", b.c_str(),
              "--io-threads", t.c_str(), "--max-batch", m.c_str(), "--tls-cert", tls_cert.c_str(),
              "--tls-key", tls_key.c_str(), nullptr);
    }
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  p.to_child = in[1];
  p.from_child = ::fdopen(out[0], "r");
  unsigned port = 0;
  if (std::fscanf(p.from_child, "port %u", &port) != 1) fail("bench_connections: no server");
  p.port = static_cast<std::uint16_t>(port);
  return p;
}

std::string stop_server(ServerProcess& p) {
  ::close(p.to_child);
  std::string text;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, p.from_child) != nullptr) text += buffer;
  std::fclose(p.from_child);
  ::waitpid(p.pid, nullptr, 0);
  const std::size_t at = text.find('{');
  return at == std::string::npos ? "{}" : text.substr(at, text.find('}', at) - at + 1);
}

// The server's user + system CPU seconds and resident KiB, from /proc.
double cpu_seconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), {});
  std::size_t at = stat.rfind(')');
  std::vector<std::string> fields;
  for (std::size_t i = at + 2, j; i < stat.size(); i = j + 1) {
    j = stat.find(' ', i);
    if (j == std::string::npos) j = stat.size();
    fields.push_back(stat.substr(i, j - i));
  }
  // Fields 14 and 15 (utime, stime) are the 12th and 13th after the command's ')'.
  if (fields.size() < 13) return 0.0;
  return (std::stod(fields[11]) + std::stod(fields[12])) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double rss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6));
  return 0.0;
}

// CartPole actors for a real learner until it closes them (training is over) or `seconds` pass:
// one JSON line of what they did.
int feed_learner(const std::string& address, const std::string& token_file, bench::LoadOptions o,
                 double seconds) {
  const std::size_t colon = address.rfind(':');
  SEEDRL_REQUIRE(colon != std::string::npos, "--learner '", address, "': expected HOST:PORT");
  o.host = address.substr(0, colon);
  o.port = static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)));
  o.token = token_file.empty() ? "" : read_token_file(token_file);
  o.cartpole = true;
  const std::int32_t n = o.connections;
  const double rate = o.rate;
  bench::LoadGenerator load(o);
  const bench::LoadResult made = load.connect();
  std::fprintf(stderr, "bench_connections: %lld of %d connected in %.1f s (%lld refused)\n",
               static_cast<long long>(made.connected), n, made.connect_seconds,
               static_cast<long long>(made.refused));
  load.measure(true);
  load.start_stepping();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (load.open() > 0 && elapsed() < seconds)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const double ran = elapsed();
  const bench::LoadResult r = load.finish();
  std::printf(
      "{\"bench\":\"connections_learner\",\"connections\":%d,\"rate\":%.0f,\"connected\":%lld,"
      "\"refused\":%lld,\"finished\":%lld,\"broken\":%lld,\"seconds\":%.1f,\"steps\":%lld,"
      "\"steps_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
      n, rate, static_cast<long long>(r.connected), static_cast<long long>(r.refused),
      static_cast<long long>(r.finished), static_cast<long long>(r.broken), ran,
      static_cast<long long>(r.steps), static_cast<double>(r.steps) / ran, r.p50_us, r.p99_us);
  return r.broken == 0 && r.refused == 0 ? 0 : 1;
}

void raise_open_files() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// One line: connect every client, read the server's memory with them idle, step for warmup and
// then `seconds` measured, and print what the load and the server's /proc said.
struct Line {
  std::int32_t connections;
  std::int64_t obs_bytes;
  double rate;
  bool pinned;
  std::int32_t threads, io_threads;
  bool tls, thread_clients;
};

template <class Load>
void measure_line(Load& load, ServerProcess& server, double warmup, double seconds, const Line& l) {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double rss_before = rss_kib(server.pid);
  const bench::LoadResult connected = load.connect();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double rss_idle = rss_kib(server.pid);
  load.start_stepping();
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  const double cpu0 = cpu_seconds(server.pid), load_cpu0 = cpu_seconds(::getpid());
  load.measure(true);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  load.measure(false);
  const double cpu1 = cpu_seconds(server.pid), load_cpu1 = cpu_seconds(::getpid());
  const bench::LoadResult r = load.finish();
  const std::string stats = stop_server(server);
  std::printf(
      "{\"bench\":\"connections\",\"transport\":\"%s\",\"client\":\"%s\",\"connections\":%d,"
      "\"obs_bytes\":%lld,\"rate\":%.0f,\"pinned\":%s,\"threads\":%d,\"io_threads\":%d,"
      "\"connected\":%lld,\"refused\":%lld,\"broken\":%lld,\"steps_per_s\":%.1f,"
      "\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,"
      "\"server_cpu_ms_per_1000_steps\":%.3f,\"server_cpu_share\":%.3f,\"load_cpu_share\":%.3f,"
      "\"server_rss_kib_idle\":%.0f,\"server_rss_kib_per_idle_connection\":%.2f,"
      "\"connect_seconds\":%.3f,\"server\":%s}\n",
      l.tls ? "tls" : "tcp", l.thread_clients ? "threads" : "asio", l.connections,
      static_cast<long long>(l.obs_bytes), l.rate, l.pinned ? "true" : "false", l.threads,
      l.io_threads, static_cast<long long>(connected.connected), static_cast<long long>(r.refused),
      static_cast<long long>(r.broken), static_cast<double>(r.steps) / seconds, r.p50_us, r.p99_us,
      r.max_us, r.steps > 0 ? 1e6 * (cpu1 - cpu0) / static_cast<double>(r.steps) : 0.0,
      (cpu1 - cpu0) / seconds, (load_cpu1 - load_cpu0) / seconds, rss_idle,
      (rss_idle - rss_before) / l.connections, connected.connect_seconds, stats.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  cli::CommandLine app("Many actor connections on one server, from few threads");
  std::vector<std::int32_t> connections{1, 64, 1024, 4096};
  std::vector<std::int64_t> obs_sizes{16, 28224};
  double seconds = 5.0, warmup = 1.0, rate = 0.0;
  bool pin = false, serve_mode = false;
  std::int32_t threads = 1, io_threads = 1, max_batch = 256, window = 32;
  app.option("--connections", connections, "actor connections, one environment each")
      .delimiter(',');
  app.option("--obs-bytes", obs_sizes, "observation bytes").delimiter(',');
  app.option("--seconds", seconds, "measured seconds per line").positive();
  app.option("--warmup", warmup, "seconds of stepping before the measurement");
  app.option("--rate", rate, "steps per second in all, paced (0: lock-step, as fast as answered)");
  app.flag("--pin", pin, "server on core 0, load generator on core 1");
  app.option("--threads", threads, "load generator threads").range(1, 64);
  app.option("--io-threads", io_threads, "the server's network threads").range(1, 64);
  app.option("--max-batch", max_batch, "the server's largest inference batch").range(1, 65536);
  app.option("--handshake-window", window, "handshakes in flight at once").range(1, 4096);
  app.flag("--serve", serve_mode, "(internal) be the server");
  bool tls = false, thread_clients = false;
  std::string tls_cert, tls_key;
  app.flag("--tls", tls, "TLS 1.3 (throwaway certificates); the clients are --thread-clients");
  app.flag("--thread-clients", thread_clients,
           "RemoteClient in a thread per connection, as distributed_actor runs it, instead of "
           "the event loop");
  app.option("--tls-cert", tls_cert, "(internal) the server's certificate");
  app.option("--tls-key", tls_key, "(internal) the server's key");
  std::string learner, token_file;
  app.option("--learner", learner,
             "HOST:PORT of a distributed_learner --env cartpole: CartPole actors for it (one "
             "environment a connection, paced by --rate) until it closes them, or --seconds");
  app.option("--token-file", token_file, "with --learner: the file holding its secret");
  if (const auto exit = app.parse(argc, argv)) return *exit;
  try {
    if (serve_mode) return serve(obs_sizes.at(0), io_threads, max_batch, tls_cert, tls_key);
    bench::LoadOptions load_options;  // what every line's load generator shares
    load_options.rate = rate;
    load_options.threads = threads;
    load_options.handshake_window = window;
    if (!learner.empty()) {
      raise_open_files();
      load_options.connections = connections.at(0);
      return feed_learner(learner, token_file, load_options, seconds);
    }
    raise_open_files();
    if (pin) pin_to(std::thread::hardware_concurrency() > 1 ? 1 : 0);
    // TLS: throwaway certificates (EC P-256, 127.0.0.1) for the server; its clients check them.
    test::TlsFiles tls_files;
    if (tls) {
      tls_files = test::make_tls_files(std::filesystem::temp_directory_path() /
                                       ("seedrl_bench_connections_" + std::to_string(::getpid())));
      thread_clients = true;  // the library's client: its TLS channel is what is measured
    }
    for (const std::int64_t obs_bytes : obs_sizes) {
      for (const std::int32_t n : connections) {
        Line line{n, obs_bytes, rate, pin, threads, io_threads, tls, thread_clients};
        ServerProcess server = start_server(obs_bytes, io_threads, max_batch, pin,
                                            tls_files.server_certificate, tls_files.server_key);
        if (thread_clients) {
          bench::ThreadLoad load(server.port, obs_bytes, n, tls_files.ca);
          measure_line(load, server, warmup, seconds, line);
        } else {
          bench::LoadOptions lo = load_options;
          lo.port = server.port;
          lo.obs_bytes = obs_bytes;
          lo.connections = n;
          bench::LoadGenerator load(lo);
          measure_line(load, server, warmup, seconds, line);
        }
      }
    }
    if (tls) std::filesystem::remove_all(std::filesystem::path(tls_files.ca).parent_path());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_connections: error: %s\n", e.what());
    return 1;
  }
}
