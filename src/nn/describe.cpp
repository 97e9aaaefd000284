// nn::parse_description: reads back what nn::describe() wrote (checkpoints record it).
#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/nn/network.hpp"

namespace seedrl::nn {
namespace {

// Reads describe()'s tokens left to right; every error names the source and the whole text.
class Reader {
 public:
  Reader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  bool done() {
    skip_spaces();
    return pos_ == text_.size();
  }
  std::string_view word() {
    skip_spaces();
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '[') ++pos_;
    return text_.substr(begin, pos_ - begin);
  }
  void expect(std::string_view w) {
    const std::string_view got = word();
    if (got != w) fail("expected '", w, "', found '", got, "'");
  }
  std::int64_t number() {
    skip_spaces();
    std::int64_t value = 0;
    const char* begin = text_.data() + pos_;
    const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), value);
    if (ec != std::errc() || end == begin) fail("expected a number at offset ", pos_);
    pos_ += static_cast<std::size_t>(end - begin);
    return value;
  }
  /// "[a, b, c]" or "[a,b,c]" (possibly empty).
  std::vector<std::int64_t> list() {
    skip_spaces();
    if (pos_ >= text_.size() || text_[pos_] != '[') fail("expected '[' at offset ", pos_);
    ++pos_;
    std::vector<std::int64_t> values;
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return values;
    }
    for (;;) {
      values.push_back(number());
      skip_spaces();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return values;
      }
      fail("expected ',' or ']' at offset ", pos_);
    }
  }
  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw Error(
        str_cat(source_, ": network '", text_, "' is not a network description: ", args...));
  }

 private:
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  std::string_view text_, source_;
  std::size_t pos_ = 0;
};

}  // namespace

NetworkOptions parse_description(std::string_view text, std::string_view source) {
  Reader r(text, source);
  NetworkOptions c;
  const std::string_view torso = r.word();
  if (torso == "mlp") {
    c.torso = Torso::mlp;
  } else if (torso == "minatar") {
    c.torso = Torso::minatar;
  } else if (torso == "nature") {
    c.torso = Torso::nature;
  } else {
    r.fail("unknown torso '", torso, "' (mlp, minatar or nature)");
  }
  r.expect("observation");
  const std::vector<std::int64_t> dims = r.list();
  if (dims.empty() || dims.size() > static_cast<std::size_t>(Shape::kMaxRank))
    r.fail("observation shape of rank ", dims.size());
  c.observation_shape = Shape(std::span<const std::int64_t>(dims));
  const std::string_view kind = r.word();
  if (kind == "actions") {
    c.num_actions = r.number();
  } else if (kind == "box") {
    c.gaussian(r.number());
  } else {
    r.fail("expected 'actions' or 'box', found '", kind, "'");
  }
  r.expect("lstm");
  c.lstm_size = r.number();
  if (c.torso == Torso::mlp) {
    r.expect("hidden");
    c.mlp_hidden = r.list();
  }
  while (!r.done()) {
    const std::string_view flag = r.word();
    if (flag == "dueling") {
      c.dueling = true;
      c.q_head = true;
      c.policy_value_heads = false;
    } else if (flag == "log_std_head") {
      c.state_dependent_log_std = true;
    } else if (flag == "tanh") {
      c.mlp_activation = Activation::tanh;
    } else if (flag == "value_torso") {
      c.separate_value_torso = true;
    } else {
      r.fail("unknown part '", flag, "'");
    }
  }
  try {
    c.validate();
  } catch (const Error& e) {
    r.fail(e.what());
  }
  return c;
}

}  // namespace seedrl::nn
