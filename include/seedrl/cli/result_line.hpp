// The last line a training program writes on stdout (seedrl::cli): one JSON object of the run's
// figures, which scripts and the results registry (scripts/results.py) read. Every example
// program that trains ends with it.
//
//   {"env":"breakout","frames":5000064,"seconds":212.5,"fps":23529.4,"episodes":41003,
//    "mean_return":19.650,"evaluation_mean_return":null,"learner_steps":19520,"seed":1,
//    "ranks":1,"resumed":false,"interrupted":false}
//
// A figure nothing measured (a mean return over no episodes) is null, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seedrl/session/run_report.hpp"

namespace seedrl::cli {

/// A number for a JSON object, with three decimals, or null where nothing was measured.
std::string json_number(const std::optional<double>& value);

/// `text` as a JSON string, quotes included (quote, backslash and control characters escaped).
std::string json_string(std::string_view text);

/// The JSON object of `result` for a run on `env` with `seed`; `extra`: more members for the
/// object, each with its leading comma (",\"key\":value").
std::string result_line(std::string_view env, std::uint64_t seed, const TrainingResult& result,
                        std::string_view extra = {});

/// Writes result_line() and a newline on stdout and flushes it. In a learner group only rank 0
/// writes, with the group's figures ("ranks" is the group's size; 1 alone).
void print_result(std::string_view env, std::uint64_t seed, const TrainingResult& result,
                  std::string_view extra = {});

}  // namespace seedrl::cli
