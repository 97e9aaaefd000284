// Errors: how seedrl reports a bad configuration, a bad shape or a broken file.
//
// Invalid configuration and caller mistakes throw seedrl::Error at the point where they are
// detected, with a message that names the bad setting and the value that was given. Faults a
// caller can recover from (network, I/O in the runtime) are returned as status values by the
// components that meet them; they do not use this header.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace seedrl {

/// The exception seedrl throws for invalid configuration, mismatched shapes and unreadable files.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// The pieces str_cat is made of, compiled once in the library (src/core/error.cpp): each
// instantiation of str_cat and fail is then a few calls, not an ostringstream of its own (they
// were a fifth of the machine code in some test translation units).
void append_text(std::string& out, std::string_view text);
void append_signed(std::string& out, long long value);
void append_unsigned(std::string& out, unsigned long long value);
/// As an ostream prints a double by default: "%g", six significant digits.
void append_double(std::string& out, double value);
[[noreturn]] void throw_error(std::string message);

template <class T>
void append_streamed(std::string& out, const T& value) {
  std::ostringstream stream;
  stream << value;
  out.append(stream.view());
}

/// Appends `value` as `std::ostream << value` would print it.
template <class T>
void append_one(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    out.push_back(value ? '1' : '0');
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> ||
                       std::is_same_v<T, unsigned char>) {
    out.push_back(static_cast<char>(value));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    append_signed(out, value);
  } else if constexpr (std::is_integral_v<T>) {
    append_unsigned(out, value);
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    append_double(out, value);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view> &&
                       !std::is_null_pointer_v<T>) {
    append_text(out, value);
  } else {
    append_streamed(out, value);
  }
}

}  // namespace detail

/// Concatenates anything printable with operator<< into one string, each argument printed as
/// `std::ostream << argument` prints it.
template <class... Args>
std::string str_cat(const Args&... args) {
  std::string out;
  (detail::append_one(out, args), ...);
  return out;
}

/// Throws seedrl::Error with the concatenation of `args` as its message.
template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  detail::throw_error(str_cat(args...));
}

}  // namespace seedrl

/// Throws seedrl::Error built from the remaining arguments unless `condition` holds.
#define SEEDRL_REQUIRE(condition, ...) \
  do {                                 \
    if (!(condition)) [[unlikely]] {   \
      ::seedrl::fail(__VA_ARGS__);     \
    }                                  \
  } while (false)
