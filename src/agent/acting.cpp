#include "seedrl/agent/acting.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "seedrl/core/error.hpp"

namespace seedrl {

std::string_view name(ActionMode mode) {
  switch (mode) {
    case ActionMode::greedy:
      return "greedy";
    case ActionMode::sample:
      return "sample";
    case ActionMode::epsilon_greedy:
      return "epsilon_greedy";
  }
  return "unknown";
}

void ActingSettings::validate() const {
  SEEDRL_REQUIRE(std::isfinite(epsilon) && epsilon >= 0.0 && epsilon <= 1.0,
                 "ActingSettings.epsilon must be in [0, 1], got ", epsilon);
}

std::string ActingSettings::to_text() const {
  std::string text(name(mode));
  if (mode == ActionMode::epsilon_greedy) {
    char number[32];  // the shortest text that reads back as the same double
    const auto [end, ec] = std::to_chars(number, number + sizeof number, epsilon);
    SEEDRL_REQUIRE(ec == std::errc(), "ActingSettings: cannot format epsilon ", epsilon);
    text.push_back(' ');
    text.append(number, end);
  }
  return text;
}

ActingSettings ActingSettings::parse(std::string_view text, std::string_view source) {
  ActingSettings s;
  const std::size_t space = text.find(' ');
  const std::string_view mode = text.substr(0, space);
  if (mode == "greedy" || mode == "sample") {
    SEEDRL_REQUIRE(space == std::string_view::npos, source, ": acting '", text,
                   "' has more than a mode");
    s.mode = mode == "greedy" ? ActionMode::greedy : ActionMode::sample;
    return s;
  }
  SEEDRL_REQUIRE(mode == "epsilon_greedy" && space != std::string_view::npos, source, ": acting '",
                 text, "' is not 'greedy', 'sample' or 'epsilon_greedy <epsilon>'");
  s.mode = ActionMode::epsilon_greedy;
  const std::string_view number = text.substr(space + 1);
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), s.epsilon);
  SEEDRL_REQUIRE(ec == std::errc() && end == number.data() + number.size() &&
                     std::isfinite(s.epsilon) && s.epsilon >= 0.0 && s.epsilon <= 1.0,
                 source, ": acting '", text, "': epsilon must be a number in [0, 1]");
  return s;
}

}  // namespace seedrl
