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

namespace seedrl {

/// The exception seedrl throws for invalid configuration, mismatched shapes and unreadable files.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Concatenates anything printable with operator<< into one string.
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

/// Throws seedrl::Error with the concatenation of `args` as its message.
template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(str_cat(args...));
}

}  // namespace seedrl

/// Throws seedrl::Error built from the remaining arguments unless `condition` holds.
#define SEEDRL_REQUIRE(condition, ...) \
  do {                                 \
    if (!(condition)) [[unlikely]] {   \
      ::seedrl::fail(__VA_ARGS__);     \
    }                                  \
  } while (false)
