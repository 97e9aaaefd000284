// selfplay_eval: a self-play checkpoint (examples/selfplay --logdir) against the reference players
// of test/support/board_players.hpp, which are written independently of seedrl's games and agents
// (issue 37's targets). The checkpoint acts through Policy, greedily, with its legal-action mask;
// it plays half the games as player 0 (the first to move) and half as player 1.
//
//   selfplay_eval --checkpoint RUN/checkpoint.safetensors --env tictactoe --opponent perfect
//   selfplay_eval --checkpoint RUN/checkpoint.safetensors --env connect4 --opponent alphabeta
//                 --depth 2 --games 200
//
// The last line of stdout is one JSON object: the checkpoint, the opponent and the wins, draws and
// losses from each side.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "seedrl/env/board_game.hpp"
#include "seedrl/policy/policy.hpp"
#include "support/board_players.hpp"

namespace {

using namespace seedrl;

struct Tally {
  std::int64_t wins = 0, draws = 0, losses = 0;
  std::string json() const {
    return str_cat("{\"wins\":", wins, ",\"draws\":", draws, ",\"losses\":", losses, "}");
  }
};

template <class Game>
int evaluate(const std::string& checkpoint, const std::string& opponent, int depth, int games,
             std::uint64_t seed) {
  Policy<> policy(checkpoint);
  Game game;
  const StepSpec spec{game.observation_spec(), game.action_spec(), game.step_fields()};
  Tensor observation = Tensor::zeros(spec.observation.shape.prepend({1}));
  std::vector<Tensor> fields{Tensor::zeros(spec.fields[0].spec.shape.prepend({1}), DType::u8)};
  const StepRow row(observation[0], spec.fields, fields, 0);
  const std::span<const float> view(observation.data<float>(),
                                    static_cast<std::size_t>(observation.numel()));
  const std::span<const std::uint8_t> mask(fields[0].data<std::uint8_t>(),
                                           static_cast<std::size_t>(fields[0].numel()));
  Rng rng(seed);
  Tally sides[2];
  for (int g = 0; g < games; ++g) {
    const int agent = g % 2;
    game.reset();
    PlayersStepResult step;
    while (!step.episode_over()) {
      std::int32_t actions[2] = {0, 0};
      for (int p = 0; p < 2; ++p) {
        if (!game.acts(p)) continue;
        game.observe(p, row);
        if (p == agent) {
          actions[p] = policy.act(PolicyInput(observation, fields)).at(0);
        } else if (opponent == "random") {
          actions[p] = test::random_player(mask, rng);
        } else if (opponent == "perfect") {
          actions[p] = test::minimax_player(view, mask);
        } else {
          actions[p] = test::alphabeta_player(view, mask, depth);
        }
      }
      step = game.step(actions);
      if (step.episode_over()) {
        const float r = step.rewards[static_cast<std::size_t>(agent)];
        Tally& t = sides[agent];
        (r > 0.0f ? t.wins : r < 0.0f ? t.losses : t.draws) += 1;
      }
    }
  }
  std::fprintf(stderr,
               "selfplay_eval: %s against %s%s, %d games: as player 0 %lld/%lld/%lld, as "
               "player 1 %lld/%lld/%lld (wins/draws/losses)\n",
               checkpoint.c_str(), opponent.c_str(),
               opponent == "alphabeta" ? str_cat(" (depth ", depth, ")").c_str() : "", games,
               static_cast<long long>(sides[0].wins), static_cast<long long>(sides[0].draws),
               static_cast<long long>(sides[0].losses), static_cast<long long>(sides[1].wins),
               static_cast<long long>(sides[1].draws), static_cast<long long>(sides[1].losses));
  std::printf(
      "{\"checkpoint\":\"%s\",\"env\":\"%s\",\"opponent\":\"%s\",\"depth\":%d,"
      "\"games\":%d,\"as_first\":%s,\"as_second\":%s}\n",
      checkpoint.c_str(), spec.observation.shape[1] == 3 ? "tictactoe" : "connect4",
      opponent.c_str(), depth, games, sides[0].json().c_str(), sides[1].json().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A self-play checkpoint against reference players (random, perfect, alpha-beta)"};
  std::string checkpoint, env = "tictactoe", opponent = "random";
  int depth = 2, games = 1000;
  std::uint64_t seed = 1;
  app.add_option("--checkpoint", checkpoint, "the run's checkpoint.safetensors")->required();
  app.add_option("--env", env, "tictactoe or connect4")
      ->check(CLI::IsMember({"tictactoe", "connect4"}));
  app.add_option("--opponent", opponent,
                 "random, perfect (tic-tac-toe) or alphabeta (Connect Four, --depth plies)")
      ->check(CLI::IsMember({"random", "perfect", "alphabeta"}));
  app.add_option("--depth", depth, "the alpha-beta player's search depth")
      ->check(CLI::Range(1, 12));
  app.add_option("--games", games, "games, half from each side")->check(CLI::Range(2, 1000000));
  app.add_option("--seed", seed, "the random player's seed");
  CLI11_PARSE(app, argc, argv);
  try {
    if ((opponent == "perfect") != (env == "tictactoe") && opponent != "random")
      fail("--opponent perfect plays tic-tac-toe, --opponent alphabeta Connect Four");
    return env == "tictactoe" ? evaluate<TicTacToe>(checkpoint, opponent, depth, games, seed)
                              : evaluate<ConnectFour>(checkpoint, opponent, depth, games, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "selfplay_eval: error: %s\n", e.what());
    return 1;
  }
}
