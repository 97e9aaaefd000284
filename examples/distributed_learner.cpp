// distributed_learner: the learner side of SEED RL for actors in other processes or on other
// machines (examples/distributed_actor). It runs the inference server and the V-trace learner and
// listens for actors on TCP and/or Unix-domain sockets.
//
//   distributed_learner [--listen 127.0.0.1:8686]... [--token-file FILE | --token SECRET]
//                       [--tls-cert FILE --tls-key FILE [--tls-ca FILE [--require-client-cert]]
//                        [--tls-version 1.3]]
//                       [--env cartpole|catch|pendulum |
//                        --env custom --observation u8[3,3,2] --actions 9|3,2|box:D[:LOW:HIGH]
//                        [--mask]]
//                       [--frames 500000] [--logdir DIR] [--max-batch 256] [agent options...]
//
// The token is best kept in a file only its owner can read (--token-file; refused when others may
// read it) or in the SEEDRL_TOKEN environment variable: a command line is visible to every user of
// the machine (the learner warns), and the command this program records in its logdir and its
// "run:" line shows it as "***". A TCP address other than loopback needs a token or mutual TLS
// (--tls-ca --require-client-cert) unless --insecure-no-auth says that anyone who can reach it may
// feed the learner. With --tls-cert and --tls-key every TCP
// address speaks TLS (docs/distributed.md, "TLS"); --tls-ca names the CA of actors' certificates
// (mutual TLS), which --require-client-cert makes mandatory. Prints "listening on ADDRESS (MODE)"
// on stderr for every address once it accepts actors (the mode says plain or TLS), progress lines
// on stderr, and at the end the same JSON line on stdout as cartpole_vtrace. With --env pendulum
// the learner serves a Gaussian policy and its actors receive box actions (protocol version 2),
// with pendulum_ppo --agent vtrace's settings for every option the command line does not set.
// With --env custom the learner serves environments it does not know, written in any language
// (python/seedrl, the C ABI; docs/any_language.md): --observation gives their observation (an
// element type and its dimensions), --actions their actions (N discrete, branches of N,M,... or
// a box of D dimensions within [LOW, HIGH], default [-1, 1]), --mask declares a legal-action mask
// u8[actions] (the field action_mask); the policy is an MLP of --hidden on the flattened
// observation.
//
// At the frame budget, actors are told that training is over and exit. On SIGINT or SIGTERM the
// learner tells its actors it is going away (they keep retrying), writes a checkpoint when it has
// a --logdir, and exits; started again with the same --logdir it resumes, and the actors find it
// by themselves. See docs/distributed.md.
//
// Under an MPI launcher (mpirun -np N distributed_learner ...) the N learners train as one
// learner group (docs/scaling.md), and rank R listens on each address with R added to its port
// (a Unix socket path gets the suffix ".R"): start each rank's actors against its own addresses.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/cli/train.hpp"
#include "seedrl/seedrl.hpp"
#include "seedrl/session/training_session.hpp"
#include "seedrl/transport/socket_server.hpp"
#include "seedrl/transport/token.hpp"

namespace {

// Where rank `rank` of a learner group listens: `address` with the rank added to its port, or
// ".rank" after a Unix socket's path; rank 0 listens on `address` itself.
std::string member_address(const std::string& address, int rank) {
  if (rank == 0) return address;
  if (address.rfind("unix:", 0) == 0) return address + "." + std::to_string(rank);
  const std::size_t colon = address.rfind(':');
  SEEDRL_REQUIRE(colon != std::string::npos && colon + 1 < address.size(), "--listen '", address,
                 "' has no port");
  int port = 0;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (const std::exception&) {
    seedrl::fail("--listen '", address, "': the port is not a number");
  }
  SEEDRL_REQUIRE(port > 0 && port + rank <= 65535, "--listen '", address, "': port ", port,
                 " + rank ", rank, " is not a port");
  return address.substr(0, colon + 1) + std::to_string(port + rank);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + 1)
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

template <class T>
T number(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  T value{};
  try {
    if constexpr (std::is_floating_point_v<T>) {
      value = static_cast<T>(std::stod(text, &used));
    } else {
      value = static_cast<T>(std::stoll(text, &used));
    }
  } catch (const std::exception&) {
    used = 0;
  }
  SEEDRL_REQUIRE(!text.empty() && used == text.size(), what, ": '", text, "' is not a number");
  return value;
}

// "u8[3,3,2]": an element type (f32, u8, i32) and the dimensions, outermost first.
seedrl::TensorSpec parse_observation(const std::string& text) {
  const std::string what = "--observation '" + text + "'";
  const std::size_t open = text.find('[');
  SEEDRL_REQUIRE(open != std::string::npos && text.size() > open + 2 && text.back() == ']', what,
                 ": expected TYPE[DIMS], e.g. f32[4] or u8[3,3,2]");
  seedrl::TensorSpec spec;
  const std::string type = text.substr(0, open);
  if (type == "f32") {
    spec.dtype = seedrl::DType::f32;
  } else if (type == "u8") {
    spec.dtype = seedrl::DType::u8;
  } else if (type == "i32") {
    spec.dtype = seedrl::DType::i32;
  } else {
    seedrl::fail(what, ": the element type '", type, "' is not f32, u8 or i32");
  }
  std::vector<std::int64_t> dims;
  for (const std::string& d : split(text.substr(open + 1, text.size() - open - 2), ',')) {
    dims.push_back(number<std::int64_t>(d, what));
    SEEDRL_REQUIRE(dims.back() >= 1, what, ": a dimension of ", dims.back());
  }
  SEEDRL_REQUIRE(dims.size() <= 6, what, ": ", dims.size(), " dimensions, at most 6");
  spec.shape = seedrl::Shape(dims);
  return spec;
}

// "9" (discrete), "3,2" (branches), "box:D" or "box:D:LOW:HIGH" (a box, default [-1, 1]).
seedrl::ActionSpec parse_actions(const std::string& text) {
  const std::string what = "--actions '" + text + "'";
  if (text.rfind("box:", 0) == 0) {
    const std::vector<std::string> parts = split(text.substr(4), ':');
    SEEDRL_REQUIRE(parts.size() == 1 || parts.size() == 3, what,
                   ": expected box:D or box:D:LOW:HIGH");
    const auto dims = number<std::int32_t>(parts[0], what);
    const float low = parts.size() == 3 ? number<float>(parts[1], what) : -1.0f;
    const float high = parts.size() == 3 ? number<float>(parts[2], what) : 1.0f;
    SEEDRL_REQUIRE(dims >= 1 && dims <= 256, what, ": ", dims, " dimensions, 1 to 256");
    SEEDRL_REQUIRE(low < high, what, ": LOW ", low, " is not below HIGH ", high);
    return seedrl::ActionSpec::box(dims, low, high);
  }
  std::vector<std::int32_t> sizes;
  for (const std::string& n : split(text, ',')) {
    sizes.push_back(number<std::int32_t>(n, what));
    SEEDRL_REQUIRE(sizes.back() >= 1, what, ": a choice of ", sizes.back(), " actions");
  }
  return sizes.size() == 1 ? seedrl::ActionSpec::discrete(sizes[0])
                           : seedrl::ActionSpec::branched(sizes);
}

seedrl::StepSpec custom_spec(const std::string& observation, const std::string& actions,
                             bool mask) {
  seedrl::StepSpec spec{parse_observation(observation), parse_actions(actions), {}};
  if (mask) {
    SEEDRL_REQUIRE(!spec.action.is_box(), "--mask: a box of actions has no legal-action mask");
    spec.fields.push_back(
        {seedrl::kActionMaskField, {seedrl::Shape({spec.action.num_actions}), seedrl::DType::u8}});
  }
  spec.validate("--env custom");
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace seedrl;
  using Backend = cpu::Backend;

  seedrl::cli::CommandLine app(
      "SEED RL V-trace learner serving actors over TCP or Unix-domain sockets");
  cli::VTraceCli cli;
  TrainingSessionOptions run;
  run.checkpoint_seconds = 300;
  run.server.unroll_length = 20;
  run.server.max_batch = 256;
  std::vector<std::string> listen;
  std::string token;
  SocketServerOptions socket;
  double idle_timeout_s = 60.0;
  bool log_connections = true;
  cli.environments.push_back("pendulum");  // box actions over protocol version 2
  cli.environments.push_back("custom");    // --observation, --actions, --mask
  std::string observation_text, actions_text;
  bool mask = false;
  cli.add_options(app, run);
  app.option("--listen", listen,
             "address to accept actors on (host:port, [v6]:port or unix:/path); repeatable; "
             "default 127.0.0.1:8686");
  std::string token_file;
  app.option("--token", token,
             "shared secret actors must present (visible to other users: prefer "
             "--token-file or SEEDRL_TOKEN)");
  app.option("--token-file", token_file,
             "file holding the shared secret (first line; must not be readable by others)");
  app.flag("--insecure-no-auth", socket.allow_unauthenticated,
           "listen on a non-loopback TCP address without a token or mutual TLS");
  std::string tls_version = "1.3";
  app.option("--tls-cert", socket.tls.certificate,
             "PEM certificate: TCP addresses speak TLS with it");
  app.option("--tls-key", socket.tls.private_key, "PEM private key of --tls-cert");
  app.option("--tls-ca", socket.tls.client_ca, "PEM CA of actors' certificates (mutual TLS)");
  app.flag("--require-client-cert", socket.tls.require_client_certificate,
           "refuse actors without a certificate from --tls-ca");
  app.option("--tls-version", tls_version, "lowest TLS version: 1.3, or 1.2")
      .one_of({"1.2", "1.3"});
  app.option("--max-pending-handshakes,--tls-max-pending", socket.max_pending_handshakes,
             "connections awaiting their handshake at most; more are closed at accept (0: no "
             "cap; default 64)")
      .non_negative();
  app.option("--handshakes-per-second,--tls-handshakes-per-second", socket.handshakes_per_second,
             "new connections a second per peer address after a burst of --handshake-burst; "
             "more are closed at accept (0: no limit; default 20)")
      .non_negative();
  app.option("--handshake-burst,--tls-handshake-burst", socket.handshake_burst,
             "new connections per peer address at once (default 64)")
      .positive();
  app.option("--max-batch", run.server.max_batch, "largest inference batch, in environments")
      .range(1, 1 << 16);
  app.option("--max-slots", run.server.max_slots, "environments that can be connected at once")
      .range(1, 1 << 20);
  app.option("--max-connections", socket.max_connections, "actor connections at once")
      .range(1, 1 << 20);
  app.option("--idle-timeout", idle_timeout_s, "close actors silent for this many seconds")
      .positive();
  app.option("--io-threads", socket.io_threads, "network threads").range(1, 64);
  app.option("--log-connections", log_connections,
             "print a line when an actor connects, leaves or is refused");
  app.option("--observation", observation_text,
             "with --env custom: the actors' observation, TYPE[DIMS] (f32, u8 or i32), e.g. "
             "u8[3,3,2]");
  app.option("--actions", actions_text,
             "with --env custom: N discrete actions, branches N,M,..., or box:D[:LOW:HIGH]");
  app.flag("--mask", mask,
           "with --env custom: the actors declare a legal-action mask (u8[actions], the field "
           "action_mask)");
  if (const auto exit = app.parse(argc, argv)) return *exit;
  if (cli.env_name == "pendulum") cli.use_pendulum_defaults(app, run);

  try {
    cli.finish(run, cli::learner_group());
    if (listen.empty()) listen.push_back("127.0.0.1:8686");
    if (!token.empty())
      std::fprintf(stderr,
                   "distributed_learner: warning: --token puts the secret in the process list, "
                   "where every user of this machine can read it; use --token-file or "
                   "SEEDRL_TOKEN\n");
    token = resolve_token({.given = token, .file = token_file});
    socket.token = token;
    socket.tls.min_version = parse_tls_version(tls_version, "--tls-version");
    socket.idle_timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(idle_timeout_s * 1e3));
    std::mutex log_mutex;
    socket.log = [&](const std::string& line) {
      if (!log_connections && line.rfind("listening on ", 0) != 0) return;
      std::lock_guard lock(log_mutex);
      std::fprintf(stderr, "distributed_learner: %s\n", line.c_str());
      std::fflush(stderr);
    };
    run.interrupt = cli::stop_on_signals();
    std::signal(SIGPIPE, SIG_IGN);

    const bool custom = cli.env_name == "custom";
    SEEDRL_REQUIRE(
        custom == !observation_text.empty() && custom == !actions_text.empty() && (custom || !mask),
        "--observation, --actions and --mask go with --env custom, which needs the "
        "first two");
    auto train = [&](const StepSpec& spec) {
      // A softmax policy over discrete actions (one a branch), or a Gaussian over a box.
      nn::NetworkOptions network = nn::NetworkOptions::mlp(spec.observation.shape.numel(),
                                                           spec.action.num_actions, cli.hidden);
      network.observation_shape = spec.observation.shape;  // flattened by the MLP
      if (spec.action.is_box()) network.gaussian(spec.action.dims());
      if (spec.action.is_branched())
        network.branches({spec.action.branches.begin(), spec.action.branches.end()});
      const VTraceAgent agent = cli.make_agent(network, run.server.unroll_length);
      TrainingSession<VTraceAgent, Backend> session(agent, spec, run);
      std::vector<std::unique_ptr<SocketServer>> servers;
      for (const std::string& address : listen) {
        SocketServerOptions o = socket;
        o.listen = member_address(address, cli::group_rank());
        if (SocketAddress::parse(o.listen).is_unix()) o.tls = {};  // a Unix socket stays local
        servers.push_back(std::make_unique<SocketServer>(session.server(), o));
        servers.back()->start();
      }
      std::fprintf(stderr,
                   "distributed_learner: %s, unroll %lld, batch %lld, max inference batch %d, "
                   "seed %llu%s\n",
                   cli.env_name.c_str(), static_cast<long long>(run.server.unroll_length),
                   static_cast<long long>(cli.batch), run.server.max_batch,
                   static_cast<unsigned long long>(cli.seed),
                   token.empty() ? ", no token (any local actor may connect)" : "");
      TrainingHooks hooks;
      hooks.stop_sources = [&](bool finished) {
        for (auto& s : servers)
          s->stop(finished ? protocol::ErrorCode::finished : protocol::ErrorCode::shutting_down);
      };
      hooks.progress_suffix = [&] {
        std::int64_t active = 0;
        for (auto& s : servers) active += s->stats().active;
        return " | actors " + std::to_string(active);
      };
      return session.run(hooks);
    };
    const auto result =
        custom ? train(custom_spec(observation_text, actions_text, mask))
               : seedrl::with_environment_or_pendulum(
                     cli.env_name, [&](auto make_env) { return train(step_spec(make_env(0))); });
    cli::print_result(cli.env_name, cli.seed, result);
    return 0;
  } catch (const std::exception& e) {
    return cli::end_with_error("distributed_learner", e);
  }
}
