#include "seedrl/core/error.hpp"

#include <charconv>
#include <cstdio>
#include <utility>

namespace seedrl::detail {

void append_text(std::string& out, std::string_view text) {
  out.append(text);
}

void append_signed(std::string& out, long long value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

void append_unsigned(std::string& out, unsigned long long value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

void append_double(std::string& out, double value) {
  // What libstdc++'s num_put does for a stream's default format and precision.
  char buffer[32];
  const int length = std::snprintf(buffer, sizeof buffer, "%.*g", 6, value);
  out.append(buffer, static_cast<std::size_t>(length));
}

void throw_error(std::string message) {
  throw Error(std::move(message));
}

}  // namespace seedrl::detail
