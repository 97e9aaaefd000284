// A small, strict JSON reader and writer: enough for safetensors headers and metric files.
// Parsing untrusted text is safe: depth and size are bounded, and every malformed input throws
// seedrl::Error with the byte offset of the problem.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "seedrl/core/error.hpp"

namespace seedrl::json {

class Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;  // keeps the file's order

class Value {
 public:
  Value() = default;  // null
  Value(bool b) : data_(b) {}
  Value(double n) : data_(n) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(Array a) : data_(std::make_shared<Array>(std::move(a))) {}
  Value(Object o) : data_(std::make_shared<Object>(std::move(o))) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(data_); }
  bool is_bool() const { return std::holds_alternative<bool>(data_); }
  bool is_number() const { return std::holds_alternative<double>(data_); }
  bool is_string() const { return std::holds_alternative<std::string>(data_); }
  bool is_array() const { return std::holds_alternative<std::shared_ptr<Array>>(data_); }
  bool is_object() const { return std::holds_alternative<std::shared_ptr<Object>>(data_); }

  // Typed access; throws seedrl::Error naming `what` when the type differs.
  bool as_bool(std::string_view what) const;
  double as_number(std::string_view what) const;
  /// A number that is a whole value in [0, 2^53].
  std::uint64_t as_index(std::string_view what) const;
  const std::string& as_string(std::string_view what) const;
  const Array& as_array(std::string_view what) const;
  const Object& as_object(std::string_view what) const;

  /// The member `key` of an object, or nullptr.
  const Value* find(std::string_view key) const;

 private:
  std::variant<std::monostate, bool, double, std::string, std::shared_ptr<Array>,
               std::shared_ptr<Object>>
      data_;
};

/// Parses one JSON value (surrounding white space allowed). `source` names the text in errors.
Value parse(std::string_view text, std::string_view source, std::size_t max_depth = 64);

/// `s` as a JSON string literal, quotes included.
std::string quote(std::string_view s);

}  // namespace seedrl::json
