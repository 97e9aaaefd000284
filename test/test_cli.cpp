// seedrl::cli's command line (cli/command_line.hpp): the command a program records in
// run_info.json is the one that ran, so that pasting it into a shell parses to the same settings
// (flags, negated flags, quoting); options with their checks; --help and a refused command line
// end the program with a status; the result line a training program ends with
// (cli/result_line.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seedrl/cli/command_line.hpp"
#include "seedrl/cli/result_line.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_cli {

struct Parsed {
  std::string env = "cartpole", logdir;
  int frames = 10;
  std::vector<std::int64_t> hidden{64, 64};
  bool replay = false, graphs = true;
  std::string command;
};

// The options as a program declares them; `args` parsed as argv (the program's path first).
void declare(seedrl::cli::CommandLine& app, Parsed& p) {
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
  seedrl::cli::CommandLine app("test");
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

TEST_CASE("the recorded command: the program's name and the options given, in declaration order") {
  const Parsed p = parse({"/opt/bin/mujoco_sac", "--frames=300", "--env", "hopper", "--hidden",
                          "32", "16", "--checkpoint-replay", "--no-cuda-graphs"});
  CHECK(p.command ==
        "mujoco_sac --env hopper --frames 300 --hidden 32 16 --checkpoint-replay --no-cuda-graphs");
  CHECK(parse({"selfplay"}).command == "selfplay");  // defaults are not repeated
}

TEST_CASE("a flag on by default with a negated name: either name sets it, recorded by the first") {
  auto parse_flag = [](std::vector<std::string> args) {
    bool on = true;
    std::string command;
    seedrl::cli::CommandLine app("test");
    app.flag("--checkpoint-replay,!--no-checkpoint-replay", on, "on by default");
    app.on_parsed([&] { command = app.given_command(); });
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    REQUIRE_FALSE(app.parse(static_cast<int>(argv.size()), argv.data()).has_value());
    return std::pair(on, command);
  };
  CHECK(parse_flag({"p"}) == std::pair(true, std::string("p")));
  CHECK(parse_flag({"p", "--checkpoint-replay"}) ==
        std::pair(true, std::string("p --checkpoint-replay")));
  // The recorded command sets the same when it is run again.
  CHECK(parse_flag({"p", "--no-checkpoint-replay"}) ==
        std::pair(false, std::string("p --checkpoint-replay=false")));
  CHECK(parse_flag({"p", "--checkpoint-replay=false"}).first == false);
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

// Parses `args` (the program's name first) with `app`; the exit status where the command line
// ends the program.
std::optional<int> run(seedrl::cli::CommandLine& app, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return app.parse(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE("a value outside an option's check ends the program with status 1; --help with 0") {
  for (const char* frames : {"-5", "0", "abc"}) {
    CAPTURE(frames);
    std::int64_t value = 7;
    seedrl::cli::CommandLine app("test");
    app.option("--frames", value, "budget").positive();
    const std::optional<int> status = run(app, {"p", "--frames", frames});
    REQUIRE(status.has_value());
    CHECK(*status != 0);
  }
  double rate = 0.5;
  seedrl::cli::CommandLine ranged("test");
  ranged.option("--rate", rate, "a fraction").range(0.0, 1.0);
  CHECK(run(ranged, {"p", "--rate", "1.5"}).value_or(0) != 0);
  std::string game = "breakout";
  seedrl::cli::CommandLine words("test");
  words.option("--game", game, "game").one_of({"breakout", "freeway"});
  CHECK(run(words, {"p", "--game", "pong"}).value_or(0) != 0);
  seedrl::cli::CommandLine help("test");
  help.option("--game", game, "game");
  CHECK(run(help, {"p", "--help"}) == std::optional<int>(0));
  CHECK(game == "breakout");
}

TEST_CASE("count says whether the command line gave an option; a secret's value is not recorded") {
  std::int64_t frames = 10;
  std::string token = "unset";
  seedrl::cli::CommandLine app("test");
  const seedrl::cli::Option given = app.option("--frames", frames, "budget");
  app.option("--token", token, "a secret");
  std::string missing;
  app.option("--missing", missing, "never given");
  REQUIRE_FALSE(run(app, {"p", "--frames", "3", "--token", "s3cr3t"}).has_value());
  CHECK(frames == 3);
  CHECK(token == "s3cr3t");
  CHECK(given.count() == 1);
  CHECK(app.count("--missing") == 0);
  const std::string command = app.given_command();
  CHECK(command == "p --frames 3 --token ***");
  CHECK(command.find("s3cr3t") == std::string::npos);
}

TEST_CASE("given_value reads an option before the parse as the parse reads it") {
  const std::vector<std::vector<std::string>> commands{
      {"p", "--env", "connect4"},
      {"p", "--frames", "3", "--env=standoff", "--hidden", "8"},
      {"p", "--frames", "2"},                        // not given: the default
      {"p", "--logdir", "x=--env=y", "--env", "z"},  // an option's value is not --env
  };
  for (std::vector<std::string> args : commands) {
    CAPTURE(args.size());
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    const std::optional<std::string> peeked =
        seedrl::cli::given_value(static_cast<int>(argv.size()), argv.data(), "--env");
    const Parsed parsed = parse(args);
    CHECK(peeked.value_or("cartpole") == parsed.env);
  }
  // Not given, given without a value (the parse refuses it), or after "--": nothing.
  const char* bare[] = {"p", "--frames", "3"};
  CHECK_FALSE(seedrl::cli::given_value(3, bare, "--env").has_value());
  const char* last[] = {"p", "--env"};
  CHECK_FALSE(seedrl::cli::given_value(2, last, "--env").has_value());
  const char* next_option[] = {"p", "--env", "--frames", "3"};
  CHECK_FALSE(seedrl::cli::given_value(4, next_option, "--env").has_value());
  const char* empty[] = {"p", "--env="};  // given empty: the parse refuses it
  CHECK(seedrl::cli::given_value(2, empty, "--env") == std::optional<std::string>(""));
  const char* after_end[] = {"p", "--", "--env", "x"};
  CHECK_FALSE(seedrl::cli::given_value(4, after_end, "--env").has_value());
}

TEST_CASE(
    "the result line: the run's figures as one JSON object, null where nothing was measured") {
  seedrl::TrainingResult r;
  r.frames = 5000064;
  r.seconds = 212.5;
  r.fps = 23529.41;
  r.episodes = 41003;
  r.mean_return = 19.65;
  r.learner_steps = 19520;
  CHECK(seedrl::cli::result_line("breakout", 7, r) ==
        "{\"env\":\"breakout\",\"frames\":5000064,\"seconds\":212.500,\"fps\":23529.4,"
        "\"episodes\":41003,\"mean_return\":19.650,\"evaluation_mean_return\":null,"
        "\"learner_steps\":19520,\"seed\":7,\"ranks\":1,\"resumed\":false,"
        "\"interrupted\":false}");
  r.mean_return.reset();
  r.evaluation_mean_return = -1.0;
  r.ranks = 4;
  r.resumed = r.interrupted = true;
  const std::string line = seedrl::cli::result_line("a\"b\\c\n", 1, r, ",\"x\":1");
  CHECK(line.find("{\"env\":\"a\\\"b\\\\c\\u000a\",") == 0);
  CHECK(line.find("\"mean_return\":null,\"evaluation_mean_return\":-1.000,") != std::string::npos);
  CHECK(line.find("\"ranks\":4,\"resumed\":true,\"interrupted\":true,\"x\":1}") !=
        std::string::npos);
  CHECK(seedrl::cli::json_number(std::nullopt) == "null");
  CHECK(seedrl::cli::json_string("plain") == "\"plain\"");
}

}  // namespace test_cli
