// distributed_learner and distributed_actor as separate processes on loopback: learning happens
// over the sockets, a killed actor is replaced without disturbing the run, a learner stopped
// with SIGTERM resumes from its checkpoint while the actors wait and find it again, and a learner
// deployed as docs/distributed.md says keeps its secret and its log under a flood.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "io/json.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_certificates.hpp"

using namespace seedrl;
using seedrl::testing::ChildProcess;
using seedrl::testing::wait_until;
using namespace std::chrono_literals;

namespace {

const std::string kLearner = SEEDRL_DISTRIBUTED_LEARNER;
const std::string kActor = SEEDRL_DISTRIBUTED_ACTOR;

using test::TempDir;

std::unique_ptr<ChildProcess> start_learner(const TempDir& dir, const std::string& name,
                                            std::vector<std::string> args) {
  args.insert(args.begin(), kLearner);
  return std::make_unique<ChildProcess>(std::move(args), dir / (name + ".out"),
                                        dir / (name + ".err"));
}

std::unique_ptr<ChildProcess> start_actor(const TempDir& dir, const std::string& name,
                                          const std::string& address, int seed,
                                          const std::string& env = "cartpole",
                                          std::vector<std::string> more = {},
                                          const std::string& envs = "8") {
  std::vector<std::string> args{kActor,
                                "--connect",
                                address,
                                "--env",
                                env,
                                "--envs",
                                envs,
                                "--seed",
                                std::to_string(seed),
                                "--report-seconds",
                                "0.2",
                                "--max-backoff",
                                "0.5"};
  args.insert(args.end(), more.begin(), more.end());
  return std::make_unique<ChildProcess>(std::move(args), dir / (name + ".out"),
                                        dir / (name + ".err"));
}

/// The address a learner prints once it listens ("listening on ADDRESS"), or "" after 20 s.
std::string listening_address(ChildProcess& learner) {
  std::string address;
  wait_until(
      [&] {
        const std::string err = learner.err();
        const auto at = err.find("listening on ");
        if (at == std::string::npos) return !learner.running();
        const auto end = err.find('\n', at);
        if (end == std::string::npos) return false;
        address = err.substr(at + 13, end - at - 13);
        address = address.substr(0, address.find(" ("));  // the listener's mode follows
        return true;
      },
      20s);
  return address;
}

/// The learner's final JSON line.
json::Value result_of(ChildProcess& learner) {
  std::string out = learner.out();
  while (!out.empty() && out.back() == '\n') out.pop_back();
  const auto line_start = out.rfind('\n');
  return json::parse(line_start == std::string::npos ? out : out.substr(line_start + 1),
                     "learner stdout");
}

double number(const json::Value& v, const char* key) {
  const json::Value* member = json::find(v, key);
  REQUIRE_MESSAGE(member != nullptr, key);
  return json::as_number(*member, key);
}

bool flag(const json::Value& v, const char* key) {
  const json::Value* member = json::find(v, key);
  REQUIRE_MESSAGE(member != nullptr, key);
  return json::as_bool(*member, key);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The lines of `text` that hold `what` (once or more: a summary of refusals quotes the last).
std::size_t lines_with(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (std::string_view(text).substr(begin, end - begin).find(what) != std::string_view::npos) ++n;
    begin = end + 1;
  }
  return n;
}

}  // namespace

TEST_CASE("distributed: CartPole's mean return rises with actors in three processes over TCP") {
  TempDir dir("learn");
  auto learner = start_learner(dir, "learner", {"--listen", "127.0.0.1:0", "--frames", "200000"});
  const std::string address = listening_address(*learner);
  REQUIRE_MESSAGE(!address.empty(), learner->err());
  std::vector<std::unique_ptr<ChildProcess>> actors;
  for (int i = 0; i < 3; ++i)
    actors.push_back(start_actor(dir, "actor" + std::to_string(i), address, i + 1));

  REQUIRE_MESSAGE(learner->wait(120s) == 0, learner->err());
  const json::Value result = result_of(*learner);
  MESSAGE(learner->out());
  CHECK(number(result, "frames") >= 200000);
  CHECK(number(result, "episodes") > 100);
  // A random policy scores about 22.
  CHECK(number(result, "mean_return") > 250.0);
  CHECK_FALSE(flag(result, "interrupted"));
  // Told that training is over, every actor exits with 0.
  for (auto& actor : actors) {
    CHECK_MESSAGE(actor->wait(20s) == 0, actor->err());
    CHECK(actor->err().find("the learner finished training") != std::string::npos);
  }
}

TEST_CASE("distributed: CartPole reaches 475 with two actor processes over mutual TLS") {
  TempDir dir("tls");
  const test::TlsFiles tls = test::make_tls_files(dir / "certificates");
  auto learner = start_learner(
      dir, "learner",
      {"--listen", "127.0.0.1:0", "--frames", "500000", "--tls-cert", tls.server_certificate,
       "--tls-key", tls.server_key, "--tls-ca", tls.ca, "--require-client-cert"});
  const std::string address = listening_address(*learner);
  REQUIRE_MESSAGE(!address.empty(), learner->err());
  CHECK(learner->err().find("(TLS 1.3, client certificates required)") != std::string::npos);
  std::vector<std::unique_ptr<ChildProcess>> actors;
  for (int i = 0; i < 2; ++i) {
    actors.push_back(start_actor(dir, "actor" + std::to_string(i), address, i + 1, "cartpole",
                                 {"--tls-ca", tls.ca, "--tls-client-cert", tls.client_certificate,
                                  "--tls-client-key", tls.client_key},
                                 "16"));
  }
  // An actor without a certificate is refused for good and exits with 2, naming why.
  auto anonymous = start_actor(dir, "anonymous", address, 9, "cartpole", {"--tls-ca", tls.ca});
  CHECK_MESSAGE(anonymous->wait(30s) == 2, anonymous->err());
  CHECK(anonymous->err().find("certificate required") != std::string::npos);

  REQUIRE_MESSAGE(learner->wait(180s) == 0, learner->err());
  const json::Value result = result_of(*learner);
  MESSAGE(learner->out());
  CHECK(number(result, "frames") >= 500000);
  CHECK(number(result, "mean_return") >= 475.0);
  for (auto& actor : actors) CHECK_MESSAGE(actor->wait(20s) == 0, actor->err());
}

TEST_CASE("distributed: Pendulum's box actions over TCP (protocol version 2): V-trace learns") {
  TempDir dir("pendulum");
  auto learner = start_learner(
      dir, "learner", {"--env", "pendulum", "--listen", "127.0.0.1:0", "--frames", "300000"});
  const std::string address = listening_address(*learner);
  REQUIRE_MESSAGE(!address.empty(), learner->err());
  std::vector<std::unique_ptr<ChildProcess>> actors;
  for (int i = 0; i < 2; ++i)
    actors.push_back(start_actor(dir, "actor" + std::to_string(i), address, i + 1, "pendulum"));
  REQUIRE_MESSAGE(learner->wait(120s) == 0, learner->err());
  const json::Value result = result_of(*learner);
  MESSAGE(learner->out());
  CHECK(number(result, "frames") >= 300000);
  // Random torques score about -1200; this run reaches about -250.
  CHECK(number(result, "mean_return") > -800.0);
  for (auto& actor : actors) {
    CHECK_MESSAGE(actor->wait(20s) == 0, actor->err());
    CHECK(actor->err().find("the learner finished training") != std::string::npos);
  }
  // An actor of the other kind of actions is refused by name, for good (exit status 2).
  auto learner2 = start_learner(dir, "learner2", {"--listen", "127.0.0.1:0", "--frames", "100000"});
  const std::string cartpole = listening_address(*learner2);
  REQUIRE_MESSAGE(!cartpole.empty(), learner2->err());
  auto wrong = start_actor(dir, "wrong", cartpole, 5, "pendulum");
  CHECK(wrong->wait(30s) == 2);
  CHECK(wrong->err().find("box of 1") != std::string::npos);
  learner2->send(SIGTERM);
  CHECK(learner2->wait(30s) == 0);
}

TEST_CASE("distributed: an actor killed mid-run is replaced, the others carry on") {
  TempDir dir("kill");
  const std::string socket = "unix:" + (dir / "learner.sock");
  auto learner = start_learner(dir, "learner", {"--listen", socket, "--frames", "150000"});
  REQUIRE_MESSAGE(listening_address(*learner) == socket, learner->err());
  auto victim = start_actor(dir, "victim", socket, 1);
  auto survivor = start_actor(dir, "survivor", socket, 2);
  REQUIRE(wait_until([&] { return count(learner->err(), ": connected, run") >= 2; }, 20s));
  // Let the victim be in the middle of its unrolls, then kill it without warning.
  REQUIRE(wait_until([&] { return victim->err().find("frames ") != std::string::npos; }, 20s));
  victim->send(SIGKILL);
  CHECK(victim->wait(10s) == 128 + SIGKILL);
  REQUIRE_MESSAGE(
      wait_until([&] { return learner->err().find("connection lost") != std::string::npos; }, 20s),
      learner->err());
  auto replacement = start_actor(dir, "replacement", socket, 3);

  REQUIRE_MESSAGE(learner->wait(120s) == 0, learner->err());
  const json::Value result = result_of(*learner);
  CHECK(number(result, "frames") >= 150000);
  CHECK(count(learner->err(), ": connected, run") >= 3);
  CHECK_MESSAGE(survivor->wait(20s) == 0, survivor->err());
  CHECK_MESSAGE(replacement->wait(20s) == 0, replacement->err());
  // The survivor never lost its connection.
  CHECK(survivor->err().find("connections 1") != std::string::npos);
  CHECK(survivor->err().find("connections 2") == std::string::npos);
}

TEST_CASE("distributed: the learner restarts from its checkpoint and the waiting actors find it") {
  TempDir dir("restart");
  const std::string logdir = dir / "run";
  auto first = start_learner(dir, "learner1",
                             {"--listen", "127.0.0.1:0", "--frames", "400000", "--logdir", logdir});
  const std::string address = listening_address(*first);
  REQUIRE_MESSAGE(!address.empty(), first->err());
  std::vector<std::unique_ptr<ChildProcess>> actors;
  for (int i = 0; i < 2; ++i)
    actors.push_back(start_actor(dir, "actor" + std::to_string(i), address, i + 1));
  REQUIRE(wait_until([&] { return count(first->err(), ": connected, run") >= 2; }, 20s));
  REQUIRE(wait_until([&] { return actors[0]->err().find("frames ") != std::string::npos; }, 20s));
  std::this_thread::sleep_for(500ms);

  first->send(SIGTERM);
  REQUIRE_MESSAGE(first->wait(60s) == 0, first->err());
  const json::Value stopped = result_of(*first);
  CHECK(flag(stopped, "interrupted"));
  const double frames_before = number(stopped, "frames");
  CHECK(frames_before > 0);
  CHECK(frames_before < 400000);
  CHECK(std::filesystem::exists(logdir + "/checkpoint.safetensors"));

  // The actors keep retrying while no learner is there.
  std::this_thread::sleep_for(1s);
  for (auto& actor : actors) CHECK_MESSAGE(actor->running(), actor->err());

  auto second = start_learner(dir, "learner2",
                              {"--listen", address, "--frames", "400000", "--logdir", logdir});
  REQUIRE_MESSAGE(second->wait(120s) == 0, second->err());
  const json::Value resumed = result_of(*second);
  CHECK(flag(resumed, "resumed"));
  CHECK_FALSE(flag(resumed, "interrupted"));
  CHECK(number(resumed, "frames") >= 400000);
  CHECK(second->err().find("resumed from") != std::string::npos);
  CHECK(count(second->err(), ": connected, run") >= 2);
  for (auto& actor : actors) {
    CHECK_MESSAGE(actor->wait(20s) == 0, actor->err());
    CHECK(actor->err().find("connections 2") != std::string::npos);
  }
}

namespace {

// Every file under `dir` that holds `secret`, and every file or directory there whose mode lets
// anyone but its owner in.
std::vector<std::string> files_holding(const std::string& dir, const std::string& secret) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file() &&
        seedrl::testing::read_text(entry.path().string()).find(secret) != std::string::npos)
      found.push_back(entry.path().string());
  return found;
}
std::vector<std::string> open_to_others(const std::string& dir) {
  std::vector<std::string> found;
  auto check = [&](const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && (info.st_mode & 077) != 0) found.push_back(path);
  };
  check(dir);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    check(entry.path().string());
  return found;
}

void write_private(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text << "\n";
  ::chmod(path.c_str(), mode);
}

// The port of an address "127.0.0.1:PORT".
int port_of(const std::string& address) {
  return std::stoi(address.substr(address.rfind(':') + 1));
}

int open_connection(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

}  // namespace

TEST_CASE("distributed: the token reaches no file of the logdir and no log line") {
  TempDir dir("secret");
  const std::string secret = "sq8k4Ph1-not-for-logs";
  const std::string token_file = dir / "token";
  // A token file others may read is refused, naming it and the fix.
  write_private(token_file, secret, 0644);
  auto refused =
      start_learner(dir, "refused", {"--listen", "127.0.0.1:0", "--token-file", token_file});
  CHECK(refused->wait(30s) != 0);
  CHECK(refused->err().find("may be read or written by other users (mode 0644)") !=
        std::string::npos);
  CHECK(refused->err().find("chmod 600 " + token_file) != std::string::npos);
  ::chmod(token_file.c_str(), 0600);

  // The learner takes it from the file, the actor from the environment; a second learner gives it
  // on the command line (it warns) and shows it as ***.
  const std::string logdir = dir / "run";
  auto learner = start_learner(dir, "learner",
                               {"--listen", "127.0.0.1:0", "--frames", "40000", "--logdir", logdir,
                                "--token-file", token_file, "--checkpoint-seconds", "1"});
  const std::string address = listening_address(*learner);
  REQUIRE_MESSAGE(!address.empty(), learner->err());
  std::vector<std::string> actor_args{"/usr/bin/env",
                                      "SEEDRL_TOKEN=" + secret,
                                      kActor,
                                      "--connect",
                                      address,
                                      "--envs",
                                      "8",
                                      "--report-seconds",
                                      "0.2"};
  auto actor = std::make_unique<ChildProcess>(actor_args, dir / "actor.out", dir / "actor.err");
  // A second run on the logdir in use is refused by name.
  auto second = start_learner(dir, "second",
                              {"--listen", "127.0.0.1:0", "--logdir", logdir, "--token", secret});
  CHECK(second->wait(30s) != 0);
  CHECK(second->err().find(logdir + ": the logdir is in use by process") != std::string::npos);
  REQUIRE_MESSAGE(learner->wait(120s) == 0, learner->err());
  CHECK_MESSAGE(actor->wait(20s) == 0, actor->err());
  auto third = start_learner(
      dir, "third",
      {"--listen", "127.0.0.1:0", "--frames", "50000", "--logdir", logdir, "--token", secret});
  auto third_actor = std::make_unique<ChildProcess>(
      std::vector<std::string>{kActor, "--connect", listening_address(*third), "--token", secret},
      dir / "actor3.out", dir / "actor3.err");
  REQUIRE_MESSAGE(third->wait(120s) == 0, third->err());
  CHECK(third_actor->wait(20s) == 0);
  CHECK(third->err().find("warning: --token puts the secret in the process list") !=
        std::string::npos);
  CHECK(third->err().find("--token ***") != std::string::npos);  // the "run:" line
  CHECK(seedrl::testing::read_text(logdir + "/run_info.json").find("--token ***") !=
        std::string::npos);
  for (const auto* process : {learner.get(), second.get(), third.get()}) {
    CHECK(process->err().find(secret) == std::string::npos);
    CHECK(process->out().find(secret) == std::string::npos);
  }
  CHECK(files_holding(logdir, secret).empty());
  const std::vector<std::string> open = open_to_others(logdir);
  CHECK_MESSAGE(open.empty(), open.front());
}

TEST_CASE("distributed: a learner on an address other machines reach needs a token or mTLS") {
  TempDir dir("exposed");
  auto exposed = start_learner(dir, "exposed", {"--listen", "0.0.0.0:0", "--frames", "1000"});
  CHECK(exposed->wait(30s) != 0);
  CHECK(exposed->err().find("will not listen on 0.0.0.0:0") != std::string::npos);
  CHECK(exposed->err().find("--insecure-no-auth") != std::string::npos);
  auto allowed = start_learner(dir, "allowed",
                               {"--listen", "0.0.0.0:0", "--frames", "1000", "--insecure-no-auth"});
  CHECK_FALSE(listening_address(*allowed).empty());
  allowed->send(SIGTERM);
  CHECK(allowed->wait(30s) == 0);
}

TEST_CASE(
    "distributed: 1100 idle connections from one address: the actors train, the run "
    "checkpoints and ends, the log stays within its rate") {
  rlimit limit{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < 1400) {
    MESSAGE("the open-file hard limit of ", limit.rlim_max, " is below 1,400: nothing to test");
    return;
  }
  limit.rlim_cur = limit.rlim_max;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &limit) == 0);
  TempDir dir("flood");
  const std::string logdir = dir / "run";
  auto learner = start_learner(dir, "learner",
                               {"--listen", "127.0.0.1:0", "--frames", "300000", "--logdir", logdir,
                                "--checkpoint-seconds", "2", "--token", "flood-token"});
  const std::string address = listening_address(*learner);
  REQUIRE_MESSAGE(!address.empty(), learner->err());
  std::vector<std::unique_ptr<ChildProcess>> actors;
  for (int i = 0; i < 2; ++i)
    actors.push_back(start_actor(dir, "actor" + std::to_string(i), address, i + 1, "cartpole",
                                 {"--token", "flood-token"}));
  REQUIRE(wait_until([&] { return count(learner->err(), ": connected, run") >= 2; }, 20s));
  // 1,100 connections that never send a byte, each one the learner closes opened again, until the
  // learner ends.
  const int port = port_of(address);
  std::vector<pollfd> flood;
  const auto start = std::chrono::steady_clock::now();
  std::int64_t opened = 0;
  while (learner->running()) {
    while (flood.size() < 1100) {
      const int fd = open_connection(port);
      if (fd < 0) break;
      flood.push_back({fd, POLLIN, 0});
      ++opened;
    }
    ::poll(flood.data(), flood.size(), 100);
    for (std::size_t i = 0; i < flood.size();) {
      char byte;
      if ((flood[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
          ::recv(flood[i].fd, &byte, 1, MSG_DONTWAIT) <= 0) {
        ::close(flood[i].fd);
        flood[i] = flood.back();
        flood.pop_back();
        continue;
      }
      flood[i].revents = 0;
      ++i;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const pollfd& p : flood) ::close(p.fd);
  const std::string err = learner->err();
  MESSAGE("flood of ", opened, " connections over ", seconds, " s");
  CHECK_MESSAGE(learner->wait(10s) == 0, err);
  CHECK(opened >= 1100);
  const json::Value result = result_of(*learner);
  CHECK(number(result, "frames") >= 300000);
  CHECK(std::filesystem::exists(logdir + "/checkpoint.safetensors"));
  for (auto& actor : actors) CHECK_MESSAGE(actor->wait(20s) == 0, actor->err());
  // At most 10 refusals said a second and a line summing up the rest (which quotes the last
  // refusal, so lines are counted, not words); before, every reopened connection wrote a line.
  const std::size_t lines = lines_with(err, "refused");
  CAPTURE(lines);
  CHECK(lines <= static_cast<std::size_t>(11 * (seconds + 2)));
  CHECK(count(err, " more connections were refused in a second") >= 1);
}
