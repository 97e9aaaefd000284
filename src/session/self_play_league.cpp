// SelfPlayOptions and SelfPlayLeague's members (declared in session/self_play_league.hpp).
#include "seedrl/session/self_play_league.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "seedrl/core/error.hpp"
#include "seedrl/io/safetensors.hpp"

namespace seedrl {

void SelfPlayOptions::validate(int players, std::string_view owner) const {
  SEEDRL_REQUIRE(num_actors >= 1, owner, ".num_actors must be >= 1, got ", num_actors);
  SEEDRL_REQUIRE(games_per_actor >= 1, owner, ".games_per_actor must be >= 1, got ",
                 games_per_actor);
  league.validate();
  session(players).validate(owner);
}

TrainingSessionOptions SelfPlayOptions::session(int players) const {
  TrainingSessionOptions s = *this;
  const std::int32_t slots = num_actors * games_per_actor * players;
  if (s.server.max_batch <= 0) s.server.max_batch = slots;
  s.server.max_slots = std::max(s.server.max_slots, slots);
  return s;
}

Opponent SelfPlayLeague::start_game(std::span<const std::int32_t> opponent_slots) {
  MutexLock lock(mutex_);
  Opponent opponent = league_.draw(rng_);
  // Against its latest self both sides are the learner, and both sides' moves train. A
  // snapshot's set is snapshot id + 1 (set 0 is the learner's); one that has just been retired
  // is not started against: the game is the latest self's instead. A fixed opponent's moves are
  // its scripted player's: its seats' rows are answered (kLatest) and kept by nobody.
  auto policy_of = [](const Opponent& o) {
    return o.kind == Opponent::Kind::snapshot ? static_cast<std::int32_t>(o.snapshot + 1)
           : o.kind == Opponent::Kind::latest ? policy_ids::kLearner
                                              : policy_ids::kLatest;
  };
  bool assigned = true;
  for (std::int32_t slot : opponent_slots)
    assigned = table_->assign(slot, policy_of(opponent)) && assigned;
  if (!assigned) {
    opponent = {};
    for (std::int32_t slot : opponent_slots) (void)table_->assign(slot, policy_ids::kLearner);
  }
  return opponent;
}

void SelfPlayLeague::end_game(const Opponent& opponent, double score) {
  MutexLock lock(mutex_);
  league_.record(opponent, score);
  std::deque<double>& recent = recent_[opponent.tally()];
  recent.push_back(score);
  if (recent.size() > kRecentGames) recent.pop_front();
}

void SelfPlayLeague::save(const std::string& path) const {
  MutexLock lock(mutex_);
  std::vector<io::NamedTensor> tensors;
  for (const League::Snapshot& s : league_.snapshots())
    tensors.push_back({str_cat("snapshot/", s.id), s.values});
  io::write_safetensors(path, tensors, {{"league", league_.to_text()}});
}

void SelfPlayLeague::restore(const std::string& path, std::int64_t values_per_snapshot) {
  const io::SafetensorsFile file = io::SafetensorsFile::read(path);
  auto text = file.metadata().find("league");
  SEEDRL_REQUIRE(text != file.metadata().end(), path, ": no league in it");
  MutexLock lock(mutex_);
  League restored = league_;
  restored.restore(text->second, path);
  std::vector<std::pair<std::int64_t, Tensor>> values;
  for (const League::Snapshot& s : restored.snapshots()) {
    const std::string name = str_cat("snapshot/", s.id);
    SEEDRL_REQUIRE(file.find(name) != nullptr, path, ": no values for snapshot ", s.id);
    Tensor v = file.tensor(name);
    SEEDRL_REQUIRE(v.numel() == values_per_snapshot, path, ": snapshot ", s.id, " holds ",
                   v.numel(), " values, the network has ", values_per_snapshot);
    values.emplace_back(s.id, std::move(v));
  }
  for (auto& [id, v] : values) {
    restored.set_values(id, v);
    table_->put(static_cast<std::int32_t>(id + 1), v);
  }
  for (std::int64_t old : held_) table_->retire(static_cast<std::int32_t>(old + 1));
  held_.clear();
  for (const auto& [id, v] : values) held_.push_back(id);
  league_ = std::move(restored);
}

League SelfPlayLeague::league() const {
  MutexLock lock(mutex_);
  return league_;
}

std::vector<Metric> SelfPlayLeague::metrics() {
  MutexLock lock(mutex_);
  std::vector<Metric> out{{{"rating", Reduce::last, nullptr}, league_.rating()},
                          {{"league_snapshots", Reduce::last, nullptr},
                           static_cast<double>(league_.snapshots().size())}};
  for (const auto& [kind, recent] : recent_) {
    const std::array<double, 3> rates = rates_of(recent);
    const char* names[] = {"win_rate/", "draw_rate/", "loss_rate/"};
    for (std::size_t k = 0; k < 3; ++k)
      out.push_back({{name(str_cat(names[k], kind)), Reduce::last, nullptr}, rates[k]});
  }
  return out;
}

std::string SelfPlayLeague::progress() {
  MutexLock lock(mutex_);
  std::string line = str_cat(" | rating ", static_cast<long>(std::lround(league_.rating())));
  for (const auto& [kind, recent] : recent_) {
    const std::array<double, 3> r = rates_of(recent);
    line += str_cat(" | vs ", kind, " ", std::lround(100 * r[0]), "/", std::lround(100 * r[1]), "/",
                    std::lround(100 * r[2]), "%");
  }
  return line;
}

std::array<double, 3> SelfPlayLeague::rates_of(const std::deque<double>& recent) {
  std::array<double, 3> counts{};
  for (double s : recent) counts[s == 1.0 ? 0 : s == 0.5 ? 1 : 2] += 1.0;
  for (double& c : counts) c /= static_cast<double>(std::max<std::size_t>(recent.size(), 1));
  return counts;
}

std::string_view SelfPlayLeague::name(const std::string& text) {
  for (const std::string& n : names_)
    if (n == text) return n;
  return names_.emplace_back(text);
}

}  // namespace seedrl
