// The training programs' last line (cli/result_line.hpp).
#include "seedrl/cli/result_line.hpp"

#include <cstdio>

namespace seedrl::cli {

std::string json_number(const std::optional<double>& value) {
  if (!value) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", *value);
  return text;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string result_line(std::string_view env, std::uint64_t seed, const TrainingResult& result,
                        std::string_view extra) {
  char figures[512];
  std::snprintf(figures, sizeof figures,
                ",\"frames\":%lld,\"seconds\":%.3f,\"fps\":%.1f,\"episodes\":%lld,"
                "\"mean_return\":%s,\"evaluation_mean_return\":%s,\"learner_steps\":%lld,"
                "\"seed\":%llu,\"ranks\":%d,\"resumed\":%s,\"interrupted\":%s",
                static_cast<long long>(result.frames), result.seconds, result.fps,
                static_cast<long long>(result.episodes), json_number(result.mean_return).c_str(),
                json_number(result.evaluation_mean_return).c_str(),
                static_cast<long long>(result.learner_steps), static_cast<unsigned long long>(seed),
                result.ranks, result.resumed ? "true" : "false",
                result.interrupted ? "true" : "false");
  return "{\"env\":" + json_string(env) + figures + std::string(extra) + "}";
}

void print_result(std::string_view env, std::uint64_t seed, const TrainingResult& result,
                  std::string_view extra) {
  if (result.rank != 0) return;
  std::printf("%s\n", result_line(env, seed, result, extra).c_str());
  std::fflush(stdout);
}

}  // namespace seedrl::cli
