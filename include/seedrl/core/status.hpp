// Status: how seedrl reports faults a caller can recover from (a closed server, a lost peer, a
// timeout), as values with named predicates. Invalid configuration throws seedrl::Error instead.
//
// One convention throughout seedrl: a result is asked whether it `is_ok()`; nothing converts to
// bool (the wire decoders' protocol::Verdict reads the same way). Status is [[nodiscard]]:
// dropping one on the floor is a compiler warning (an error in seedrl's own build).
#pragma once

#include <ostream>
#include <string>
#include <utility>

namespace seedrl {

class [[nodiscard]] Status {
 public:
  enum class Code {
    ok = 0,
    closed,             ///< the other side shut down in an orderly way
    unavailable,        ///< cannot reach the other side now; retrying may help
    invalid_argument,   ///< the request itself is wrong (a peer's bad input)
    deadline_exceeded,  ///< took longer than allowed
    internal,           ///< a broken invariant on the other side
  };

  Status() = default;
  static Status ok() { return {}; }
  static Status closed(std::string message) { return {Code::closed, std::move(message)}; }
  static Status unavailable(std::string message) { return {Code::unavailable, std::move(message)}; }
  static Status invalid_argument(std::string message) {
    return {Code::invalid_argument, std::move(message)};
  }
  static Status deadline_exceeded(std::string message) {
    return {Code::deadline_exceeded, std::move(message)};
  }
  static Status internal(std::string message) { return {Code::internal, std::move(message)}; }

  bool is_ok() const { return code_ == Code::ok; }
  bool is_closed() const { return code_ == Code::closed; }
  bool is_unavailable() const { return code_ == Code::unavailable; }
  bool is_invalid_argument() const { return code_ == Code::invalid_argument; }
  bool is_deadline_exceeded() const { return code_ == Code::deadline_exceeded; }

  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::ok;
  std::string message_;
};

inline const char* name(Status::Code code) {
  switch (code) {
    case Status::Code::ok:
      return "ok";
    case Status::Code::closed:
      return "closed";
    case Status::Code::unavailable:
      return "unavailable";
    case Status::Code::invalid_argument:
      return "invalid argument";
    case Status::Code::deadline_exceeded:
      return "deadline exceeded";
    case Status::Code::internal:
      return "internal";
  }
  return "unknown";
}

inline std::string Status::to_string() const {
  return is_ok() ? "ok" : std::string(name(code_)) + ": " + message_;
}

inline std::ostream& operator<<(std::ostream& out, const Status& status) {
  return out << status.to_string();
}

}  // namespace seedrl
