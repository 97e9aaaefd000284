#include "seedrl/experience/normalization.hpp"

#include <charconv>
#include <cstdio>
#include <sstream>

namespace seedrl {
namespace {

// Text of a double that reads back to the same value.
std::string exact(double v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, result.ptr);
}

// Appends ' ' and then `word` (one append each: GCC 12 misreads `" " + string` here as an
// overlapping copy).
void append_word(std::string& out, const std::string& word) {
  out += ' ';
  out += word;
}

void write_moments(std::string& out, const math::RunningMoments& m) {
  append_word(out, exact(m.count()));
  append_word(out, std::to_string(m.size()));
  for (Eigen::Index i = 0; i < m.mean().size(); ++i) append_word(out, exact(m.mean()(i)));
  for (Eigen::Index i = 0; i < m.variance().size(); ++i) append_word(out, exact(m.variance()(i)));
}

// Reads the tokens of one text; errors name the source.
class Tokens {
 public:
  Tokens(std::string_view text, std::string_view source) : source_(source) {
    std::istringstream in{std::string(text)};
    for (std::string t; in >> t;) tokens_.push_back(std::move(t));
  }
  bool done() const { return next_ >= tokens_.size(); }
  std::string word(const char* what) {
    SEEDRL_REQUIRE(!done(), source_, ": normalization statistics end before the ", what);
    return tokens_[next_++];
  }
  double number(const char* what) {
    const std::string t = word(what);
    double v = 0.0;
    const auto result = std::from_chars(t.data(), t.data() + t.size(), v);
    SEEDRL_REQUIRE(
        result.ec == std::errc() && result.ptr == t.data() + t.size() && std::isfinite(v), source_,
        ": normalization statistics: ", what, " '", t, "' is not a number");
    return v;
  }
  // count, size, size means, size variances
  void moments(std::int64_t expected_size, const char* what, double* count, Eigen::VectorXd* mean,
               Eigen::VectorXd* variance) {
    *count = number(what);
    const double size = number(what);
    SEEDRL_REQUIRE(size == static_cast<double>(expected_size), source_, ": ", what,
                   " statistics are of ", size, " values, this run has ", expected_size);
    mean->resize(expected_size);
    variance->resize(expected_size);
    for (std::int64_t i = 0; i < expected_size; ++i) (*mean)(i) = number(what);
    for (std::int64_t i = 0; i < expected_size; ++i) (*variance)(i) = number(what);
  }
  // The number `ahead` tokens on, without consuming anything.
  double peek_number(const char* what, std::size_t ahead) {
    const std::size_t saved = next_;
    next_ += ahead;
    const double v = number(what);
    next_ = saved;
    return v;
  }

 private:
  std::string_view source_;
  std::vector<std::string> tokens_;
  std::size_t next_ = 0;
};

constexpr const char* kHeader = "normalization-v1";

}  // namespace

std::string ExperienceNormalizer::to_text() const {
  std::string out = kHeader;
  if (options_.observations) {
    out += " observations";
    write_moments(out, observations_);
    append_word(out, exact(options_.observation_clip));
  }
  if (options_.rewards) {
    out += " returns";
    write_moments(out, returns_);
  }
  return out;
}

void ExperienceNormalizer::restore(std::string_view text, std::string_view source) {
  Tokens in(text, source);
  SEEDRL_REQUIRE(in.word("header") == kHeader, source,
                 ": normalization statistics do not start with ", kHeader);
  bool observations = false, rewards = false;
  while (!in.done()) {
    const std::string part = in.word("part");
    double count = 0.0;
    Eigen::VectorXd mean, variance;
    if (part == "observations") {
      SEEDRL_REQUIRE(options_.observations, source,
                     " has observation statistics but this run does not normalise observations");
      in.moments(observations_.size(), "observation", &count, &mean, &variance);
      in.number("observation clip");
      observations_.restore(count, mean, variance);
      observations = true;
    } else if (part == "returns") {
      SEEDRL_REQUIRE(options_.rewards, source,
                     " has return statistics but this run does not scale rewards");
      in.moments(1, "return", &count, &mean, &variance);
      returns_.restore(count, mean, variance);
      rewards = true;
    } else {
      SEEDRL_REQUIRE(false, source, ": unknown part '", part, "' in the normalization statistics");
    }
  }
  SEEDRL_REQUIRE(observations == options_.observations && rewards == options_.rewards, source,
                 " lacks the ", !observations && options_.observations ? "observation" : "return",
                 " statistics this run normalises with");
}

ObservationNormalization ObservationNormalization::parse(std::string_view text,
                                                         std::string_view source) {
  ObservationNormalization n;
  if (text.empty()) return n;
  Tokens in(text, source);
  SEEDRL_REQUIRE(in.word("header") == kHeader, source,
                 ": normalization statistics do not start with ", kHeader);
  while (!in.done()) {
    const std::string part = in.word("part");
    double count = 0.0;
    Eigen::VectorXd mean, variance;
    if (part == "returns") {  // rewards are the learner's business
      in.moments(1, "return", &count, &mean, &variance);
      continue;
    }
    SEEDRL_REQUIRE(part == "observations", source, ": unknown part '", part,
                   "' in the normalization statistics");
    const double size = in.peek_number("observation size", 1);
    SEEDRL_REQUIRE(size >= 1 && size <= 1e8 && size == std::floor(size), source,
                   ": observation statistics of size ", size);
    in.moments(static_cast<std::int64_t>(size), "observation", &count, &mean, &variance);
    n.moments.emplace(mean.size());
    n.moments->restore(count, mean, variance);
    n.clip = static_cast<float>(in.number("observation clip"));
    SEEDRL_REQUIRE(n.clip > 0.0f, source, ": observation clip ", n.clip, " must be > 0");
  }
  return n;
}

void ObservationNormalization::apply(math::MatrixRef batch) const {
  if (!active()) return;
  SEEDRL_REQUIRE(batch.cols() == moments->size(), "ObservationNormalization: observations of ",
                 batch.cols(), " values, the statistics have ", moments->size());
  moments->normalize(batch, batch, clip);
}

std::string normalization_text(const std::optional<ExperienceNormalizer>& normalizer) {
  return normalizer ? normalizer->to_text() : std::string();
}

void restore_normalization(std::optional<ExperienceNormalizer>& normalizer, std::string_view text,
                           std::string_view source) {
  if (!normalizer) {
    SEEDRL_REQUIRE(text.empty(), source,
                   " has normalization statistics but the agent normalises nothing");
    return;
  }
  SEEDRL_REQUIRE(!text.empty(), source,
                 " has no normalization statistics but the agent normalises its experience");
  normalizer->restore(text, source);
}

}  // namespace seedrl
