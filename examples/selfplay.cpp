// selfplay: V-trace trained by self-play against a league of its past selves (issue 37), on
// tic-tac-toe, Connect Four or Standoff (a duel of simultaneous moves).
//
//   selfplay --env tictactoe|connect4|standoff [--frames N] [--seed S] [--logdir DIR]
//            [--export-onnx FILE] [--snapshot-every STEPS] [--window K] [--play-latest P]
//            [--play-fixed P]
//            [--no-random-opponent] [--search-opponents DEPTH... | --no-search-opponents]
//            [--opening-moves K]
//            [--torso mlp|board] [--conv-channels C...] [V-trace options...]
//
// Every game seats the learner against an opponent drawn from the league (session/self_play.hpp):
// its latest self with probability --play-latest, else one of its last --window snapshots (one
// every --snapshot-every learner steps) or a fixed player: the random one, and on the board games
// a player searching DEPTH moves ahead for each --search-opponents DEPTH (acting/board_search.hpp;
// in the league as "search<DEPTH>"). With --opening-moves K every training game of a board game
// starts after 0 - K random moves (env/random_openings.hpp), so that the policy meets many
// positions, not the few games its deterministic opponents lead to. The network is an MLP on the
// flattened board (or the duel's features), or with --torso board 3x3 convolutions on the board's
// planes, then the --hidden layers. Every default is the game's recipe (recipes::selfplay(game):
// Connect Four's has the board torso, search players of depth 2 and 4 and 120 M frames, the
// others an MLP; --help after --env shows that game's). Frames are the learner's moves. Progress
// lines carry its ELO
// rating and its win/draw/loss rates of the last 100 games against each kind of opponent. At the
// end the final policy plays 1,000 games greedily against a random player, half as each side; the
// last line of stdout is one JSON object with the rating, the tallies of the league and those
// games, and the opponent networks' loads and builds at the inference server.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/acting/board_search.hpp"
#include "seedrl/cli/train.hpp"
#include "seedrl/env/board_game.hpp"
#include "seedrl/env/random_openings.hpp"
#include "seedrl/env/standoff.hpp"
#include "seedrl/recipes/games.hpp"
#include "seedrl/session/match.hpp"
#include "seedrl/session/self_play.hpp"

namespace {

using namespace seedrl;

// What the league holds beside the snapshots, and the network's torso: the recipe's unless a
// flag says otherwise.
struct Setup {
  bool random = true;
  std::vector<int> search_depths;  // a search player per depth (board games)
  int opening_moves = 0;           // training games of a board game open with 0 - K random moves
  std::string torso = "mlp";
  std::vector<std::int64_t> conv_channels{32, 32};

  explicit Setup(const recipes::SelfPlayRecipe& recipe)
      : search_depths(recipe.search_depths),
        opening_moves(recipe.opening_moves),
        torso(recipe.agent.network.torso == nn::Torso::board ? "board" : "mlp"),
        conv_channels(recipe.agent.network.conv_channels) {}
};

template <class Game>
void add_search_players(std::map<std::string, ScriptedPlayer<Game>>& fixed,
                        const std::vector<int>& depths) {
  if constexpr (std::is_base_of_v<BoardGame, Game>) {
    for (int depth : depths) fixed.emplace(str_cat("search", depth), search_player<Game>(depth));
  } else if (!depths.empty()) {
    fail("--search-opponents: the search player plays the board games (tictactoe, connect4)");
  }
}

// A game of the run: a board game behind its random openings (none for opening_moves 0), the duel
// as it is.
template <class Game>
auto make_game(int opening_moves, std::uint64_t seed) {
  if constexpr (std::is_base_of_v<BoardGame, Game>) {
    return RandomOpenings<Game>(Game(), opening_moves, seed);
  } else {
    if (opening_moves > 0)
      fail("--opening-moves: random openings are for the board games (tictactoe, connect4)");
    return Game();
  }
}

template <class Game>
int train(const cli::VTraceCli& cli, SelfPlayOptions run, const Setup& setup) {
  using Env = decltype(make_game<Game>(0, 0));
  const Env probe = make_game<Game>(setup.opening_moves, 0);
  const StepSpec spec{probe.observation_spec(), probe.action_spec(), probe.step_fields()};
  // --backend comes with the shared options; self-play's opponents have not run on a GPU yet.
  if (cli.backend != "cpu")
    fail("--backend ", cli.backend,
         ": self-play computes on the CPU for now (its opponent sets have not been checked on a "
         "GPU)");
  std::map<std::string, ScriptedPlayer<Env>> fixed;
  if (setup.random) fixed.emplace("random", random_legal_player<Env>());
  add_search_players(fixed, setup.search_depths);
  run.league.validate();
  cli.finish(run, cli::learner_group());
  run.interrupt = cli::stop_on_signals();
  run.seed = cli.seed;
  // An MLP on the flattened board (or the duel's features), or convolutions on the planes.
  nn::NetworkOptions network =
      nn::NetworkOptions::mlp(spec.observation.shape.numel(), spec.action.num_actions, cli.hidden);
  network.observation_shape = spec.observation.shape;
  if (setup.torso == "board") {
    if (spec.observation.shape.rank() != 3)
      fail("--torso board: ", cli.env_name, " observes ", spec.observation.shape,
           ", not a board's planes [C, H, W]");
    network = nn::NetworkOptions::board(spec.observation.shape, spec.action.num_actions,
                                        setup.conv_channels, cli.hidden);
  }
  const VTraceAgent agent = cli.make_agent(std::move(network), run.server.unroll_length);
  std::string search_names;
  for (int depth : setup.search_depths) search_names += str_cat(", search", depth);
  if (run.league.play_fixed >= 0.0)
    search_names += str_cat(" (", run.league.play_fixed, " of the games against fixed players)");
  std::string layers;
  for (std::int64_t c : setup.torso == "board" ? setup.conv_channels : std::vector<std::int64_t>{})
    layers += str_cat(layers.empty() ? "" : " ", "conv", c);
  for (std::int64_t h : cli.hidden) layers += str_cat(layers.empty() ? "" : " ", h);
  const std::string openings =
      setup.opening_moves > 0 ? str_cat(", openings of 0 - ", setup.opening_moves, " random moves")
                              : std::string();
  std::fprintf(
      stderr,
      "selfplay: %s, V-trace, %d actors x %d games, unroll %lld, batch %lld, league: a "
      "snapshot every %lld steps, window %d, latest self %.2f%s%s%s, %s torso (%s), %lld frames, "
      "seed %llu\n",
      cli.env_name.c_str(), run.num_actors, run.games_per_actor,
      static_cast<long long>(run.server.unroll_length), static_cast<long long>(cli.batch),
      static_cast<long long>(run.league.snapshot_every), run.league.window, run.league.play_latest,
      setup.random ? ", the random player" : "", search_names.c_str(), openings.c_str(),
      setup.torso.c_str(), layers.c_str(), static_cast<long long>(cli.frames),
      static_cast<unsigned long long>(cli.seed));
  // Each game draws its openings from its own stream.
  const auto make = [&](std::int32_t actor, std::int32_t game) {
    return make_game<Game>(setup.opening_moves, cli.seed * 1'000'003ULL +
                                                    static_cast<std::uint64_t>(actor) * 4096 +
                                                    static_cast<std::uint64_t>(game));
  };
  const SelfPlayResult result = train_self_play<VTraceAgent, cpu::Backend>(agent, make, run, fixed);
  const MatchResult match =
      play_match(agent.network_config(), result.parameters, make_game<Game>(0, 0),
                 random_legal_player<Env>(), 1000, cli.seed + 7);
  std::fprintf(
      stderr,
      "selfplay: greedy against a random player, 1000 games: as player 0 %lld/%lld/%lld, "
      "as player 1 %lld/%lld/%lld (wins/draws/losses)\n",
      static_cast<long long>(match.as_first.wins), static_cast<long long>(match.as_first.draws),
      static_cast<long long>(match.as_first.losses), static_cast<long long>(match.as_second.wins),
      static_cast<long long>(match.as_second.draws),
      static_cast<long long>(match.as_second.losses));
  std::string tallies;
  for (const auto& [kind, t] : result.league.tallies())
    tallies += str_cat(tallies.empty() ? "" : ",", "\"", kind, "\":", t.to_json());
  cli::print_result(
      cli.env_name, cli.seed, result.training,
      str_cat(",\"rating\":", cli::json_number(result.league.rating()), ",\"league\":{", tallies,
              "},\"vs_random_as_first\":", match.as_first.to_json(), ",\"vs_random_as_second\":",
              match.as_second.to_json(), ",\"opponent_loads\":", result.opponent_loads,
              ",\"opponent_networks_built\":", result.opponent_networks_built));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  seedrl::cli::CommandLine app(
      "Self-play with a league: V-trace on tic-tac-toe, Connect Four or Standoff");
  // The game's recipe, the one docs/results.md measures (seedrl/recipes/games.hpp), unless flags
  // change it: --env is read first, since every other default is the game's (a name the recipes
  // do not know is the parse's to refuse).
  const std::vector<std::string> games{"tictactoe", "connect4", "standoff"};
  std::string game = cli::given_value(argc, argv, "--env").value_or("tictactoe");
  if (std::find(games.begin(), games.end(), game) == games.end()) game = "tictactoe";
  const recipes::SelfPlayRecipe recipe = recipes::selfplay(game);
  cli::VTraceCli cli(recipe);
  cli.environments = games;
  cli.env_name = game;
  SelfPlayOptions run = recipe.run;
  cli.add_options(app, run);
  app.option("--actors", run.num_actors, "actor threads").range(1, 256);
  app.option("--games-per-actor", run.games_per_actor, "games each actor plays at once")
      .range(1, 4096);
  app.option("--snapshot-every", run.league.snapshot_every,
             "learner steps between snapshots of the learner in the league")
      .positive();
  app.option("--window", run.league.window, "snapshots the league keeps").range(1, 1000);
  app.option("--play-latest", run.league.play_latest,
             "probability of a game against the latest self")
      .range(0.0, 1.0);
  app.option("--play-fixed", run.league.play_fixed,
             "probability of a game against a fixed player (the random one, the search "
             "players), the rest going to the snapshots; unset: drawn with the snapshots, "
             "uniformly among them all")
      .range(0.0, 1.0);
  bool no_random = false;
  app.flag("--no-random-opponent", no_random,
           "leave the random player out of the league (snapshots and the latest self only)");
  Setup setup(recipe);
  app.option("--search-opponents", setup.search_depths,
             "fixed opponents in the league that search this many moves ahead (board games; "
             "one per depth, named search<DEPTH>)")
      .range(1, 8);
  bool no_search = false;
  app.flag("--no-search-opponents", no_search,
           "leave the search players out of the league (Connect Four's recipe has depth 2 and 4)");
  app.option("--opening-moves", setup.opening_moves,
             "board games: every training game starts after 0 to K uniformly random legal "
             "moves (the final games against the random player have none)")
      .range(0, 40);
  app.option("--torso", setup.torso,
             "mlp: the --hidden layers on the flattened observation; board: 3x3 convolutions "
             "(--conv-channels) on the board's planes, then the --hidden layers")
      .one_of({"mlp", "board"});
  app.option("--conv-channels", setup.conv_channels,
             "the board torso's convolutions, their output channels")
      .range(1, 1024);
  if (const auto exit = app.parse(argc, argv)) return *exit;
  setup.random = !no_random;
  try {
    if (no_search) {
      if (app.count("--search-opponents") > 0)
        fail("--no-search-opponents: --search-opponents also names search players; give one");
      setup.search_depths.clear();
    }
    if (cli.env_name == "tictactoe") return train<TicTacToe>(cli, run, setup);
    if (cli.env_name == "connect4") return train<ConnectFour>(cli, run, setup);
    return train<Standoff>(cli, run, setup);
  } catch (const std::exception& e) {
    return cli::end_with_error("selfplay", e);
  }
}
