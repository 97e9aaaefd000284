// bench_actors: what an actor costs by the language it is written in. The same CartPole logic
// (examples/c/cartpole_actor.c's, python/examples/cartpole.py's) steps N environments against
// one learner-side server, a SocketServer over a Unix socket with SEED's dynamic batching and a
// trivial policy instead of a network (support/trivial_endpoint.hpp): what differs from one line
// to the next is the actor alone.
//
//   remote_client  C++: the environments' loop around RemoteClient::step (what Actor does)
//   c_abi          the same loop around seedrl_actor_step (libseedrl_c.so, the C ABI)
//   python         python -m seedrl.actor --env cartpole:make (a Python loop over environments)
//   python_vector  python -m seedrl.actor --vector-env cartpole_vector:make (numpy arrays, one
//                  call a batch; only where the Python has numpy)
//
//   bench_actors [--envs 8,64] [--seconds 3] [--repeats 3] [--python python3]
//                [--python-dir DIR]
//
// One JSON line per (kind, envs, repeat), the kinds interleaved within each repeat (in reverse
// order every other repeat): steps_per_s (environment steps), us_per_batch (one STEP and its
// ACTIONS, the environments' steps included), us_per_env_step, and actor_cpu_us_per_batch: the
// CPU time the actor itself spent per batch (its thread's, or the Python process's while
// connected), the environments' steps, the encoding and the system calls, without the waits for
// the server. Wall rates on 2 shared cores swing by 20% or more from one line to the next (the
// server's batching shares the cores); the actor's CPU per batch is what its language costs. The
// last line has each kind's medians and the ratios docs/performance.md quotes (c_abi /
// remote_client, python / remote_client), of steps/s and of CPU per batch.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cartpole_logic.hpp"
#include "seedrl/capi/seedrl.h"
#include "seedrl/cli/command_line.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "support/trivial_endpoint.hpp"

using namespace seedrl;

namespace {

struct Rate {
  double steps_per_s = std::nan("");
  double cpu_us_per_batch = std::nan("");  // the actor's own CPU time per batch
};

double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The environments' side of one actor: the loop every kind but Python runs. `exchange(rewards,
// flags, observations, actions)` is one lock-step STEP.
template <class Exchange>
Rate run_loop(int n, double seconds, Exchange&& exchange) {
  std::vector<bench::CartPole> envs;
  for (int e = 0; e < n; ++e) envs.emplace_back(1000 + static_cast<std::uint64_t>(e));
  std::vector<float> rewards(static_cast<std::size_t>(n), 0.0f),
      obs(4 * static_cast<std::size_t>(n));
  std::vector<std::uint8_t> flags(static_cast<std::size_t>(n), step_flags::kFirst);
  std::vector<std::int32_t> actions(static_cast<std::size_t>(n));
  for (int e = 0; e < n; ++e)
    envs[static_cast<std::size_t>(e)].observe(&obs[4 * static_cast<std::size_t>(e)]);
  const auto start = std::chrono::steady_clock::now();
  const double start_cpu = thread_cpu_seconds();
  const auto end = start + std::chrono::duration<double>(seconds);
  std::int64_t batches = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (!exchange(rewards, flags, obs, actions)) fail("bench_actors: a step failed");
    for (std::size_t e = 0; e < envs.size(); ++e) {
      bench::CartPole& env = envs[e];
      if (flags[e] & (step_flags::kTerminated | step_flags::kTruncated)) {
        env.reset();
        rewards[e] = 0.0f;
        flags[e] = step_flags::kFirst;
      } else {
        flags[e] = env.step(actions[e]);
        rewards[e] = 1.0f;
      }
      env.observe(&obs[4 * e]);
    }
    ++batches;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = thread_cpu_seconds() - start_cpu;
  return {static_cast<double>(batches) * n / elapsed, 1e6 * cpu / static_cast<double>(batches)};
}

StepSpec cartpole_spec() {
  return {TensorSpec{{4}, DType::f32}, ActionSpec::discrete(2), {}};
}

Rate remote_client(const std::string& address, int n, double seconds) {
  RemoteClientOptions options;
  options.address = address;
  RemoteClient client(options);
  if (Status s = client.connect({.run_id = 7, .num_envs = n, .spec = cartpole_spec()}); !s.is_ok())
    fail("bench_actors: ", s.to_string());
  const Rate rate = run_loop(n, seconds, [&](auto& rewards, auto& flags, auto& obs, auto& actions) {
    StepRecord record;
    record.observations = Tensor::from_blob(obs.data(), Shape({n, 4}), DType::f32);
    record.rewards = rewards;
    record.flags = flags;
    return client.step(record, std::span<std::int32_t>(actions)).is_ok();
  });
  client.disconnect();
  return rate;
}

Rate c_abi(const std::string& address, int n, double seconds) {
  seedrl_actor_options o;
  seedrl_actor_options_init(&o);
  o.address = address.c_str();
  o.num_envs = n;
  seedrl_actor* actor = nullptr;
  const std::int64_t dims[] = {4};
  if (seedrl_actor_create(&o, &actor) != SEEDRL_OK ||
      seedrl_actor_observation(actor, SEEDRL_F32, 1, dims) != SEEDRL_OK ||
      seedrl_actor_discrete_actions(actor, 2) != SEEDRL_OK ||
      seedrl_actor_connect(actor, 5000) != SEEDRL_OK)
    fail("bench_actors: the C ABI: ", seedrl_last_error());
  const Rate rate = run_loop(n, seconds, [&](auto& rewards, auto& flags, auto& obs, auto& actions) {
    return seedrl_actor_step(actor, rewards.data(), flags.data(), obs.data(), nullptr,
                             actions.data()) == SEEDRL_OK;
  });
  seedrl_actor_destroy(actor);
  return rate;
}

// A Python actor process for `seconds` of stepping, then SIGINT; its --summary line says how many
// steps it sent in how long connected, and its CPU time then. NaN when it could not run.
Rate python(const std::string& python, const std::string& dir, const std::string& address,
            const std::string& kind, int n, double seconds) {
  int out[2];
  if (::pipe(out) != 0) fail("bench_actors: pipe");
  const std::string examples = dir + "/examples", n_text = std::to_string(n);
  std::vector<std::string> args{python,
                                "-m",
                                "seedrl.actor",
                                "--path",
                                examples,
                                kind == "python" ? "--env" : "--vector-env",
                                kind == "python" ? "cartpole:make" : "cartpole_vector:make",
                                "--num-envs",
                                n_text,
                                "--address",
                                address,
                                "--seed",
                                "1",
                                "--summary"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::setenv("PYTHONPATH", dir.c_str(), 1);
    ::setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  // Startup (the interpreter, the imports, the handshake) is not counted: the summary's seconds
  // are the connected ones.
  ::usleep(static_cast<useconds_t>((seconds + 1.5) * 1e6));
  ::kill(pid, SIGINT);
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(out[0], buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(got));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const auto number = [&](const std::string& key) {
    const std::size_t at = text.find("\"" + key + "\": ");
    return at == std::string::npos ? std::nan("") : std::stod(text.substr(at + key.size() + 4));
  };
  const double steps_per_s = number("steps_per_s"), steps = number("steps");
  return {steps_per_s, 1e6 * number("cpu_seconds") / (steps / n)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? std::nan("") : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  cli::CommandLine app("Actor steps/s by language: C++, the C ABI, Python");
  std::vector<std::int32_t> envs{8, 64};
  double seconds = 3.0;
  std::int32_t repeats = 3;
  std::string python_command = "python3";
  std::string python_dir = std::string(SEEDRL_SOURCE_DIR) + "/python";
  app.option("--envs", envs, "environments per actor").delimiter(',');
  app.option("--seconds", seconds, "measured seconds per line").positive();
  app.option("--repeats", repeats, "rounds of every kind").range(1, 100);
  app.option("--python", python_command, "the Python interpreter (\"\": no Python lines)");
  app.option("--python-dir", python_dir, "the seedrl Python package's directory");
  if (const auto exit = app.parse(argc, argv)) return *exit;
  try {
    std::signal(SIGPIPE, SIG_IGN);
    bench::TrivialEndpoint endpoint(TensorSpec{{4}, DType::f32}, 2, 1024,
                                    std::chrono::microseconds(1000));
    SocketServerOptions options;
    const std::string path = std::filesystem::temp_directory_path().string() +
                             "/seedrl_bench_actors_" + std::to_string(::getpid()) + ".sock";
    options.listen = "unix:" + path;
    SocketServer server(endpoint, options);
    server.start();
    const std::string address = server.address().to_string();
    std::vector<std::string> kinds{"remote_client", "c_abi"};
    if (!python_command.empty()) {
      kinds.push_back("python");
      const std::string probe = python_command + " -c 'import numpy' 2>/dev/null";
      if (std::system(probe.c_str()) == 0) kinds.push_back("python_vector");
    }
    std::map<std::string, std::vector<double>> rates, cpu;
    for (int r = 0; r < repeats; ++r) {
      for (const int n : envs) {
        // Every other round runs the kinds in the reverse order, so that none always follows
        // another (a machine's drift, its caches).
        std::vector<std::string> order = kinds;
        if (r % 2 == 1) std::reverse(order.begin(), order.end());
        for (const std::string& kind : order) {
          const Rate rate = kind == "remote_client" ? remote_client(address, n, seconds)
                            : kind == "c_abi"
                                ? c_abi(address, n, seconds)
                                : python(python_command, python_dir, address, kind, n, seconds);
          rates[kind + "_" + std::to_string(n)].push_back(rate.steps_per_s);
          cpu[kind + "_" + std::to_string(n)].push_back(rate.cpu_us_per_batch);
          std::printf(
              "{\"bench\":\"actors\",\"kind\":\"%s\",\"envs\":%d,\"repeat\":%d,"
              "\"steps_per_s\":%.1f,\"us_per_batch\":%.2f,\"us_per_env_step\":%.3f,"
              "\"actor_cpu_us_per_batch\":%.2f}\n",
              kind.c_str(), n, r, rate.steps_per_s, 1e6 * n / rate.steps_per_s,
              1e6 / rate.steps_per_s, rate.cpu_us_per_batch);
          std::fflush(stdout);
        }
      }
    }
    std::string summary = "{\"bench\":\"actors_summary\",\"repeats\":" + std::to_string(repeats);
    for (const auto& [key, values] : rates)
      summary += ",\"" + key + "_steps_per_s\":" + std::to_string(median(values)) + ",\"" + key +
                 "_cpu_us_per_batch\":" + std::to_string(median(cpu[key]));
    for (const int n : envs) {
      const std::string s = std::to_string(n);
      const double base = median(rates["remote_client_" + s]);
      const double base_cpu = median(cpu["remote_client_" + s]);
      for (const char* kind : {"c_abi", "python", "python_vector"}) {
        const std::string key = std::string(kind) + "_" + s;
        if (rates.count(key) != 0)
          summary += ",\"" + key +
                     "_vs_remote_client\":" + std::to_string(median(rates[key]) / base) + ",\"" +
                     key + "_cpu_vs_remote_client\":" + std::to_string(median(cpu[key]) / base_cpu);
      }
    }
    std::printf("%s}\n", summary.c_str());
    server.stop();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_actors: error: %s\n", e.what());
    return 1;
  }
}
