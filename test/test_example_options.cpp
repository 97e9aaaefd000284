// The example programs' options: the command a program records in run_info.json is the one that
// ran, so that pasting it into a shell parses to the same settings (flags, negated flags, quoting;
// examples/command_line.hpp); the SAC programs' --lr-decay decays all three rates over the run's
// learner steps (examples/sac_cli.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "sac_cli.hpp"
#include "seedrl/env/pendulum.hpp"

namespace {

struct Parsed {
  std::string env = "cartpole", logdir;
  int frames = 10;
  std::vector<std::int64_t> hidden{64, 64};
  bool replay = false, graphs = true;
  std::string command;
};

// The options as a program declares them; `args` parsed as argv (the program's path first).
void declare(seedrl::examples::CommandLine& app, Parsed& p) {
  app.option("--env", p.env, "environment");
  app.option("--frames", p.frames, "budget");
  app.option("--hidden", p.hidden, "sizes");
  app.option("--logdir", p.logdir, "where");
  app.flag("--checkpoint-replay", p.replay, "a flag");
  app.flag("!--no-cuda-graphs", p.graphs, "a negated flag");
  app.on_parsed([&app, &p] { p.command = app.given_command(); });
}

Parsed parse(std::vector<std::string> args) {
  Parsed p;
  seedrl::examples::CommandLine app("test");
  declare(app, p);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  REQUIRE_FALSE(app.parse(static_cast<int>(argv.size()), argv.data()).has_value());
  return p;
}

// Splits a command the way a POSIX shell does for the quoting given_command writes (words
// separated by spaces, single-quoted spans taken as they are).
std::vector<std::string> shell_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false, escaped = false;
  for (char c : command) {
    if (escaped) {
      word += c;
      escaped = false;
    } else if (quoted) {
      if (c == '\'')
        quoted = false;
      else
        word += c;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\') {
      escaped = in_word = true;  // given_command escapes only a quote, as '\''
    } else if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace

TEST_CASE("the recorded command: the program's name and the options given, in declaration order") {
  const Parsed p = parse({"/opt/bin/mujoco_sac", "--frames=300", "--env", "hopper", "--hidden",
                          "32", "16", "--checkpoint-replay", "--no-cuda-graphs"});
  CHECK(p.command ==
        "mujoco_sac --env hopper --frames 300 --hidden 32 16 --checkpoint-replay --no-cuda-graphs");
  CHECK(parse({"selfplay"}).command == "selfplay");  // defaults are not repeated
}

TEST_CASE("flags given a value are recorded with the value that sets the same") {
  CHECK(parse({"p", "--checkpoint-replay=false"}).command == "p --checkpoint-replay=false");
  // "!--no-cuda-graphs=false" sets graphs to true: the negation is not applied twice.
  const Parsed p = parse({"p", "--no-cuda-graphs=false"});
  CHECK(p.graphs);
  CHECK(p.command == "p --no-cuda-graphs=false");
}

TEST_CASE("the recorded command parses back to the same settings, quoting included") {
  const std::vector<std::string> logdirs{"runs/a b", "it's", "$HOME/x", "a\"b", "", "plain"};
  for (const std::string& logdir : logdirs) {
    CAPTURE(logdir);
    const Parsed first = parse({"p", "--logdir", logdir, "--env", "x;y", "--no-cuda-graphs"});
    const Parsed again = parse(shell_words(first.command));
    CHECK(again.logdir == logdir);
    CHECK(again.env == "x;y");
    CHECK_FALSE(again.graphs);
    CHECK(again.command == first.command);
  }
}

namespace {

// SacCli's agent for Pendulum after parsing `args` (the program's name first).
seedrl::SacAgentOptions sac_options(std::vector<std::string> args) {
  seedrl::examples::SacCli cli;
  seedrl::LocalTrainerOptions run = seedrl::examples::SacCli::default_run();
  seedrl::examples::CommandLine app("test");
  cli.add_options(app, run);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  // A command line CLI11 refuses (it says why on stderr) is an error here, as for the programs.
  if (app.parse(static_cast<int>(argv.size()), argv.data()))
    throw seedrl::Error("the command line was refused");
  const seedrl::Pendulum env(1);
  return cli.make_agent(env.observation_spec(), env.action_spec(), run).options();
}

}  // namespace

TEST_CASE("SAC's rates are constant unless --lr-decay, which decays all three over the updates") {
  const seedrl::SacAgentOptions constant = sac_options({"sac"});
  CHECK(constant.learning_rate.decay_steps == 0);
  CHECK(constant.critic_learning_rate.decay_steps == 0);
  CHECK(constant.temperature_learning_rate.decay_steps == 0);
  CHECK(constant.critic_learning_rate.at(1'000'000) == doctest::Approx(1e-3));

  // 105,000 steps, 5,000 of them random: 100,000 updates of one batch each.
  const seedrl::SacAgentOptions decayed =
      sac_options({"sac", "--frames", "105000", "--lr-decay", "true", "--lr-floor", "0.25"});
  for (const seedrl::nn::LinearDecay* rate : {&decayed.learning_rate, &decayed.critic_learning_rate,
                                              &decayed.temperature_learning_rate}) {
    CHECK(rate->decay_steps == 100'000);
    CHECK(rate->final_value == doctest::Approx(0.25 * rate->initial));
  }
  CHECK(decayed.learning_rate.initial == doctest::Approx(3e-4));
  CHECK(decayed.critic_learning_rate.at(50'000) == doctest::Approx(0.625e-3));

  // Two batches per transition decay over twice the steps; a budget inside the random steps
  // still gets one.
  CHECK(sac_options({"sac", "--frames", "105000", "--lr-decay", "true", "--replay-ratio", "512"})
            .critic_learning_rate.decay_steps == 200'000);
  CHECK(sac_options({"sac", "--frames", "100", "--lr-decay", "true"}).learning_rate.decay_steps ==
        1);
}

TEST_CASE("SAC's target entropy anneals over fractions of the updates (--final-target-entropy)") {
  const seedrl::SacAgentOptions constant = sac_options({"sac"});
  CHECK_FALSE(constant.final_target_entropy.has_value());
  CHECK(seedrl::SacAgent(constant).target_entropy(1'000'000) == -1.0);  // Pendulum: 1 dim

  // 105,000 steps, 5,000 of them random: 100,000 updates; 0.5 - 0.8 of them is 50,000 - 80,000.
  const seedrl::SacAgentOptions annealed =
      sac_options({"sac", "--frames", "105000", "--final-target-entropy", "-3",
                   "--target-entropy-anneal", "0.5", "0.8"});
  REQUIRE(annealed.final_target_entropy.has_value());
  CHECK(*annealed.final_target_entropy == -3.0);
  CHECK(annealed.target_entropy_anneal_begin == 50'000);
  CHECK(annealed.target_entropy_anneal_end == 80'000);
  CHECK(seedrl::SacAgent(annealed).target_entropy(65'000) == doctest::Approx(-2.0));
  // By default the anneal runs from half the updates to the end.
  const seedrl::SacAgentOptions defaults =
      sac_options({"sac", "--frames", "105000", "--final-target-entropy", "-2"});
  CHECK(defaults.target_entropy_anneal_begin == 50'000);
  CHECK(defaults.target_entropy_anneal_end == 100'000);
  // A begin after the end, or a fraction outside [0, 1], is refused by name.
  CHECK_THROWS_WITH(
      sac_options({"sac", "--final-target-entropy", "-2", "--target-entropy-anneal", "0.8", "0.5"}),
      doctest::Contains("--target-entropy-anneal: the begin (0.8)"));
  CHECK_THROWS(sac_options({"sac", "--target-entropy-anneal", "0.5", "1.5"}));
}
