// The league of self-play (issue 37): whom the learning policy plays, and the ratings.
//
// The learner plays its latest self with probability `play_latest`; otherwise an opponent drawn
// uniformly from the league: snapshots of its own parameters, one taken every `snapshot_every`
// learner steps and the `window` most recent kept, and the fixed opponents the host names (a
// scripted player, say). ML-Agents' defaults are a window of 10 and 0.5; ours are the same.
// Snapshots never train: the league holds their parameter values for the inference server.
//
// Every finished game against a snapshot or a fixed opponent moves the learner's ELO rating and
// that opponent's (league/elo.hpp; a snapshot starts at the learner's rating when it is taken).
// Games against the latest self move no rating (the same player on both sides), but every
// game counts in the win/draw/loss tallies of its kind of opponent ("latest", "snapshot", or a
// fixed opponent's name). to_text() and restore() carry the league through a checkpoint; the
// snapshots' values are stored beside it by whoever writes the checkpoint.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/league/elo.hpp"

namespace seedrl {

struct LeagueOptions {
  std::int64_t snapshot_every = 2000;  ///< learner steps between snapshots
  int window = 10;                     ///< snapshots kept (the oldest leaves first)
  double play_latest = 0.5;            ///< probability of a game against the latest self
  /// Probability of a game against a fixed opponent (one drawn uniformly), the rest going to the
  /// snapshots; play_latest + play_fixed <= 1, and a share whose opponents the league does not
  /// hold (yet) goes to the latest self. Negative (the default): the fixed opponents are drawn
  /// with the snapshots, uniformly among them all.
  double play_fixed = -1.0;
  EloOptions elo;

  void validate(const char* owner = "LeagueOptions") const {
    SEEDRL_REQUIRE(snapshot_every >= 1, owner, ".snapshot_every must be >= 1, got ",
                   snapshot_every);
    SEEDRL_REQUIRE(window >= 1 && window <= 1000, owner, ".window must be in [1, 1000], got ",
                   window);
    SEEDRL_REQUIRE(play_latest >= 0.0 && play_latest <= 1.0, owner,
                   ".play_latest must be in [0, 1], got ", play_latest);
    SEEDRL_REQUIRE(play_fixed < 0.0 || play_latest + play_fixed <= 1.0 + 1e-12, owner,
                   ".play_fixed must be negative (drawn with the snapshots) or at most 1 - "
                   "play_latest (",
                   1.0 - play_latest, "), got ", play_fixed);
    elo.validate("LeagueOptions.elo");
  }
};

/// Whom a game is played against.
struct Opponent {
  enum class Kind { latest, snapshot, fixed };
  Kind kind = Kind::latest;
  std::int64_t snapshot = -1;  ///< the snapshot's id (Kind::snapshot)
  std::string name;            ///< the fixed opponent's name (Kind::fixed)

  /// "latest", "snapshot", or the fixed opponent's name: the tally a game counts in.
  std::string tally() const {
    return kind == Kind::latest ? "latest" : kind == Kind::snapshot ? "snapshot" : name;
  }
  bool operator==(const Opponent&) const = default;
};

struct GameTally {
  std::int64_t wins = 0, draws = 0, losses = 0;
  std::int64_t games() const { return wins + draws + losses; }
  double win_rate() const { return games() ? static_cast<double>(wins) / games() : 0.0; }
  double draw_rate() const { return games() ? static_cast<double>(draws) / games() : 0.0; }
  double loss_rate() const { return games() ? static_cast<double>(losses) / games() : 0.0; }
  /// {"wins":W,"draws":D,"losses":L}
  std::string to_json() const {
    return str_cat("{\"wins\":", wins, ",\"draws\":", draws, ",\"losses\":", losses, "}");
  }
};

class League {
 public:
  struct Snapshot {
    std::int64_t id = 0;
    std::int64_t learner_step = 0;
    double rating = 0.0;
    Tensor values;  ///< the learner's parameter values when it was taken
  };

  explicit League(const LeagueOptions& options = {}, std::vector<std::string> fixed = {})
      : options_(options), rating_(options.elo.initial_rating) {
    options.validate();
    for (const std::string& name : fixed) {
      SEEDRL_REQUIRE(!name.empty() && name != "latest" && name != "snapshot" &&
                         name.find_first_of(" \n") == std::string::npos,
                     "League: a fixed opponent's name must be one word other than 'latest' and ",
                     "'snapshot', got '", name, "'");
      SEEDRL_REQUIRE(fixed_.emplace(name, options.elo.initial_rating).second,
                     "League: the fixed opponent '", name, "' is named twice");
    }
  }

  const LeagueOptions& options() const { return options_; }

  /// Whether a snapshot is due at `learner_step` (the first one at any step).
  bool snapshot_due(std::int64_t learner_step) const {
    return last_snapshot_step_ < 0 || learner_step - last_snapshot_step_ >= options_.snapshot_every;
  }

  /// Keeps `values` (a copy is the caller's business) as a new snapshot rated as the learner is
  /// now; the oldest leaves once the window is full. Returns the snapshot's id.
  std::int64_t add_snapshot(std::int64_t learner_step, Tensor values) {
    snapshots_.push_back({next_id_, learner_step, rating_, std::move(values)});
    last_snapshot_step_ = learner_step;
    while (static_cast<int>(snapshots_.size()) > options_.window) snapshots_.pop_front();
    return next_id_++;
  }

  /// The snapshot `id`, or null once it has left the window.
  const Snapshot* snapshot(std::int64_t id) const {
    for (const Snapshot& s : snapshots_)
      if (s.id == id) return &s;
    return nullptr;
  }
  const std::deque<Snapshot>& snapshots() const { return snapshots_; }
  /// Sets the values of snapshot `id` (a resumed run reads them from its checkpoint).
  void set_values(std::int64_t id, Tensor values) {
    for (Snapshot& s : snapshots_) {
      if (s.id == id) {
        s.values = std::move(values);
        return;
      }
    }
    fail("League: no snapshot ", id, " in the window");
  }

  /// The opponent of the next game: the latest self with probability play_latest (always when
  /// the league holds nobody else), else uniformly among the snapshots and fixed opponents; or,
  /// with play_fixed set, a fixed opponent with that probability and a snapshot otherwise.
  Opponent draw(Rng& rng) const {
    const std::size_t others = snapshots_.size() + fixed_.size();
    const double u = others == 0 ? 0.0 : rng.uniform();
    if (others == 0 || u < options_.play_latest) return {};
    if (options_.play_fixed >= 0.0) {
      const bool fixed = u < options_.play_latest + options_.play_fixed;
      const std::size_t among = fixed ? fixed_.size() : snapshots_.size();
      if (among == 0) return {};
      return pick_other(fixed ? snapshots_.size() + rng.below(among) : rng.below(among));
    }
    return pick_other(rng.below(others));
  }

  /// A finished game in which the learner scored `score` (1 a win, 0.5 a draw, 0 a loss).
  /// A game against a snapshot that has left the window since still counts in the tally.
  void record(const Opponent& opponent, double score) {
    double* other = nullptr;
    if (opponent.kind == Opponent::Kind::snapshot) {
      for (Snapshot& s : snapshots_)
        if (s.id == opponent.snapshot) other = &s.rating;
    } else if (opponent.kind == Opponent::Kind::fixed) {
      auto it = fixed_.find(opponent.name);
      SEEDRL_REQUIRE(it != fixed_.end(), "League: no fixed opponent '", opponent.name, "'");
      other = &it->second;
    }
    if (other != nullptr) {
      elo_update(rating_, *other, score, options_.elo.k);
    } else {
      SEEDRL_REQUIRE(score == 0.0 || score == 0.5 || score == 1.0,
                     "League: a game's score is 1, 0.5 or 0, got ", score);
    }
    GameTally& t = tallies_[opponent.tally()];
    (score == 1.0 ? t.wins : score == 0.5 ? t.draws : t.losses) += 1;
  }

  /// The learner's rating.
  double rating() const { return rating_; }
  /// A fixed opponent's rating.
  double rating_of(const std::string& fixed) const {
    auto it = fixed_.find(fixed);
    SEEDRL_REQUIRE(it != fixed_.end(), "League: no fixed opponent '", fixed, "'");
    return it->second;
  }
  /// The games against each kind of opponent so far ("latest", "snapshot", fixed names).
  const std::map<std::string, GameTally>& tallies() const { return tallies_; }
  GameTally tally(const std::string& kind) const {
    auto it = tallies_.find(kind);
    return it == tallies_.end() ? GameTally{} : it->second;
  }

  /// The league without the snapshots' values, as lines of text (for checkpoints).
  std::string to_text() const {
    std::ostringstream out;
    out.precision(17);
    out << "league 1\nlearner " << rating_ << " " << next_id_ << " " << last_snapshot_step_ << "\n";
    for (const Snapshot& s : snapshots_)
      out << "snapshot " << s.id << " " << s.learner_step << " " << s.rating << "\n";
    for (const auto& [name, rating] : fixed_) out << "fixed " << name << " " << rating << "\n";
    for (const auto& [kind, t] : tallies_)
      out << "tally " << kind << " " << t.wins << " " << t.draws << " " << t.losses << "\n";
    return out.str();
  }

  /// Restores to_text() from `source` (a checkpoint's name, for errors). The fixed opponents must
  /// be those this league was built with; the snapshots come back without values (set_values).
  void restore(std::string_view text, std::string_view source) {
    std::istringstream in{std::string(text)};
    std::string word;
    int version = 0;
    auto bad = [&](const std::string& what) {
      fail("League: ", source, ": ", what, " (the league's text is not what this version wrote)");
    };
    if (!(in >> word >> version) || word != "league" || version != 1) bad("no 'league 1' header");
    League restored(options_, {});
    restored.fixed_ = fixed_;
    if (!(in >> word) || word != "learner" ||
        !(in >> restored.rating_ >> restored.next_id_ >> restored.last_snapshot_step_)) {
      bad("no learner line");
    }
    std::size_t fixed_seen = 0;
    while (in >> word) {
      if (word == "snapshot") {
        Snapshot s;
        if (!(in >> s.id >> s.learner_step >> s.rating)) bad("a bad snapshot line");
        restored.snapshots_.push_back(std::move(s));
      } else if (word == "fixed") {
        std::string name;
        double rating = 0.0;
        if (!(in >> name >> rating)) bad("a bad fixed-opponent line");
        auto it = restored.fixed_.find(name);
        if (it == restored.fixed_.end()) bad("fixed opponent '" + name + "' is not in this run");
        it->second = rating;
        ++fixed_seen;
      } else if (word == "tally") {
        std::string kind;
        GameTally t;
        if (!(in >> kind >> t.wins >> t.draws >> t.losses)) bad("a bad tally line");
        restored.tallies_[kind] = t;
      } else {
        bad("an unknown line '" + word + "'");
      }
    }
    if (fixed_seen != fixed_.size()) bad("the fixed opponents differ from this run's");
    if (static_cast<int>(restored.snapshots_.size()) > options_.window) {
      bad("more snapshots than the window of " + std::to_string(options_.window));
    }
    *this = std::move(restored);
  }

 private:
  // The snapshot at `pick`, or past them the fixed opponent at pick - snapshots (in name order).
  Opponent pick_other(std::size_t pick) const {
    if (pick < snapshots_.size()) return {Opponent::Kind::snapshot, snapshots_[pick].id, {}};
    pick -= snapshots_.size();
    auto it = fixed_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick));
    return {Opponent::Kind::fixed, -1, it->first};
  }

  LeagueOptions options_;
  double rating_;
  std::deque<Snapshot> snapshots_;
  std::map<std::string, double> fixed_;
  std::map<std::string, GameTally> tallies_;
  std::int64_t next_id_ = 0;
  std::int64_t last_snapshot_step_ = -1;
};

}  // namespace seedrl
