// distributed_actor: actors in their own process, stepping CartPole or Catch for a
// distributed_learner that may run on another machine.
//
//   distributed_actor [--connect 127.0.0.1:8686] [--token-file FILE | --token SECRET]
//                     [--tls-ca FILE [--tls-server-name NAME]
//                      [--tls-client-cert FILE --tls-client-key FILE]]
//                     [--env cartpole|catch|pendulum]
//                     [--envs 8] [--actors 1] [--seed S] [--eval]
//
// The token is best kept in a file only its owner can read (--token-file) or in the SEEDRL_TOKEN
// environment variable: a command line is visible to every user of the machine. With --tls-ca the
// connection is TLS: the learner's certificate must verify against that CA and name the --connect
// host (or --tls-server-name); --tls-client-cert and --tls-client-key present this actor's
// certificate where the learner requires one (mutual TLS). Each actor thread opens its own
// connection with --envs environments. A lost connection or a learner that restarts is
// retried with capped exponential back-off (and a new run id), for as long as it takes.
// Progress goes to stderr.
//
// Exit status: 0 when the learner says training is over or on SIGINT/SIGTERM; 2 when the
// learner refuses the actor for good (wrong token, other environment, other protocol version);
// 1 on any other error.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "seedrl/acting/actor.hpp"
#include "seedrl/cli/train.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/token.hpp"

int main(int argc, char** argv) {
  using namespace seedrl;

  seedrl::cli::CommandLine app("SEED RL actors for a distributed_learner");
  std::string env_name = "cartpole";
  RemoteClientOptions client;
  std::int32_t envs = 8, threads = 1;
  std::uint64_t seed = 0;
  bool evaluation = false;
  double report_seconds = 10.0, max_backoff_s = 5.0;
  cli::add_environment_option(app, env_name, {"cartpole", "catch", "pendulum"});
  app.option("--connect", client.address, "learner address (host:port, [v6]:port or unix:/path)");
  std::string token_file;
  app.option("--token", client.token,
             "the learner's shared secret (visible to other users: prefer --token-file or "
             "SEEDRL_TOKEN)");
  app.option("--token-file", token_file,
             "file holding the learner's shared secret (first line; must not be readable by "
             "others)");
  std::string tls_version = "1.3";
  app.option("--tls-ca", client.tls.ca, "PEM CA to verify the learner's certificate (TLS)");
  app.option("--tls-server-name", client.tls.server_name,
             "name the learner's certificate must hold (default: the --connect host)");
  app.option("--tls-client-cert", client.tls.certificate,
             "PEM certificate of this actor (mutual TLS)");
  app.option("--tls-client-key", client.tls.private_key, "PEM private key of --tls-client-cert");
  app.option("--tls-version", tls_version, "lowest TLS version: 1.3, or 1.2")
      .one_of({"1.2", "1.3"});
  app.option("--envs", envs, "environments per actor thread").range(1, 65535);
  app.option("--actors", threads, "actor threads, one connection each").range(1, 1024);
  app.option("--seed", seed, "environment seed (0: a random one)");
  app.flag("--eval", evaluation, "act greedily and send no training data");
  app.option("--report-seconds", report_seconds, "progress period").positive();
  app.option("--max-backoff", max_backoff_s, "longest wait between reconnection attempts (s)")
      .positive();
  if (const auto exit = app.parse(argc, argv)) return *exit;

  try {
    if (!client.token.empty())
      std::fprintf(stderr,
                   "distributed_actor: warning: --token puts the secret in the process list, "
                   "where every user of this machine can read it; use --token-file or "
                   "SEEDRL_TOKEN\n");
    client.token = resolve_token({.given = client.token, .file = token_file});
    client.tls.min_version = parse_tls_version(tls_version, "--tls-version");
    client.validate();
    if (seed == 0) seed = std::random_device{}() | 1u;
    const std::atomic<bool>& interrupted = *cli::stop_on_signals();
    std::signal(SIGPIPE, SIG_IGN);

    return seedrl::with_environment_or_pendulum(env_name, [&](auto make_env) -> int {
      using Env = decltype(make_env(0));
      using RemoteActor = Actor<Env, RemoteClient>;
      ActorOptions options;
      options.evaluation = evaluation;
      options.max_backoff =
          std::chrono::milliseconds(static_cast<std::int64_t>(max_backoff_s * 1e3));
      std::vector<std::unique_ptr<RemoteActor>> actors;
      for (std::int32_t a = 0; a < threads; ++a) {
        std::vector<Env> batch;
        for (std::int32_t e = 0; e < envs; ++e)
          batch.push_back(make_env(seedrl::environment_seed(seed, a, e)));
        actors.push_back(
            std::make_unique<RemoteActor>(std::move(batch), RemoteClient(client), options));
      }

      std::vector<Status> outcomes(actors.size());
      std::atomic<std::int32_t> running{threads};
      std::atomic<bool> any_failed{false};
      std::vector<std::thread> workers;
      for (std::size_t a = 0; a < actors.size(); ++a) {
        workers.emplace_back([&, a] {
          try {
            outcomes[a] = actors[a]->run();
          } catch (const std::exception& e) {
            outcomes[a] = Status::internal(e.what());
          }
          if (!outcomes[a].is_ok() && !outcomes[a].is_closed()) any_failed = true;
          --running;
        });
      }
      std::fprintf(stderr, "distributed_actor: %d actor%s x %d %s envs -> %s%s\n", threads,
                   threads == 1 ? "" : "s", envs, env_name.c_str(), client.address.c_str(),
                   evaluation ? " (evaluation)" : "");

      auto last_report = std::chrono::steady_clock::now();
      bool stopped = false;
      while (running > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        // One actor refused for good (or failing) stops the others: they would fail alike.
        if ((interrupted || any_failed) && !stopped) {
          for (auto& actor : actors) actor->stop();
          stopped = true;
        }
        if (std::chrono::steady_clock::now() - last_report >=
            std::chrono::duration<double>(report_seconds)) {
          last_report = std::chrono::steady_clock::now();
          std::int64_t frames = 0, episodes = 0, connections = 0;
          double mean_return = 0.0;
          for (auto& actor : actors) {
            const ActorStats s = actor->stats();
            frames += s.frames;
            episodes += s.episodes;
            connections += s.connections;
            mean_return += s.mean_return;
          }
          std::fprintf(stderr,
                       "distributed_actor: frames %lld | episodes %lld | return %.2f | "
                       "connections %lld\n",
                       static_cast<long long>(frames), static_cast<long long>(episodes),
                       mean_return / static_cast<double>(actors.size()),
                       static_cast<long long>(connections));
        }
      }
      for (std::thread& t : workers) t.join();

      int exit_code = 0;
      for (const Status& status : outcomes) {
        if (status.is_ok() || status.is_closed()) continue;
        std::fprintf(stderr, "distributed_actor: %s\n", status.to_string().c_str());
        exit_code = std::max(exit_code, status.is_invalid_argument() ? 2 : 1);
      }
      if (exit_code == 0)
        std::fprintf(stderr, "distributed_actor: %s\n",
                     interrupted ? "stopped by signal" : "the learner finished training");
      return exit_code;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_actor: error: %s\n", e.what());
    return 1;
  }
}
