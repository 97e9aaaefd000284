// DescriptionReader: reads the words of a network's description (nn::describe) left to right,
// for parse_description and the head kinds that read their own words (nn/heads/).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <vector>

#include "seedrl/core/error.hpp"

namespace seedrl::nn {

/// Reads describe()'s tokens left to right; every error names the source and the whole text.
class DescriptionReader {
 public:
  DescriptionReader(std::string_view text, std::string_view source)
      : text_(text), source_(source) {}

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
  /// The largest number a description holds: a size, a count, a dimension (a text from a file
  /// may not ask for more).
  static constexpr std::int64_t kMaxNumber = std::int64_t{1} << 30;
  /// Lists hold at most this many numbers (layers, dimensions, branches).
  static constexpr std::size_t kMaxList = 256;

  std::int64_t number() {
    skip_spaces();
    std::int64_t value = 0;
    const char* begin = text_.data() + pos_;
    const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), value);
    if (ec != std::errc() || end == begin) fail("expected a number at offset ", pos_);
    if (value < 0 || value > kMaxNumber)
      fail("the number at offset ", pos_, " is outside [0, ", kMaxNumber, "]");
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
      if (values.size() == kMaxList) fail("a list of more than ", kMaxList, " numbers");
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

}  // namespace seedrl::nn
