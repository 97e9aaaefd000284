// distributed_learner and distributed_actor as separate processes on loopback: learning happens
// over the sockets, a killed actor is replaced without disturbing the run, and a learner stopped
// with SIGTERM resumes from its checkpoint while the actors wait and find it again.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <memory>
#include <string>

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
