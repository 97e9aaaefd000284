// JSON for seedrl's own files (safetensors headers, run_info.json) on nlohmann-json, which does
// the lexing, escapes, unicode and number conversion. What this adds is what seedrl promises
// about untrusted text: every malformed input throws seedrl::Error naming the source and the
// byte offset ("<source>: invalid JSON at byte N: ..."), nesting depth is bounded, and the typed
// accessors throw seedrl::Error naming what the caller expected.
//
// Private to src/ (and the tests): nlohmann-json is a build-only dependency of seedrl.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "seedrl/core/error.hpp"

namespace seedrl::json {

/// A parsed document. Objects keep every member in the file's order, duplicate names included
/// (find() returns the first), as seedrl's readers always have.
using Value = nlohmann::ordered_json;
using Array = Value::array_t;
using Object = Value::object_t;

/// Parses one JSON value (surrounding white space allowed). `source` names the text in errors.
/// A value nested in more than `max_depth` arrays or objects is an error.
Value parse(std::string_view text, std::string_view source, std::size_t max_depth = 64);

// Typed access; throws seedrl::Error naming `what` when the type differs.
bool as_bool(const Value& value, std::string_view what);
double as_number(const Value& value, std::string_view what);
/// A number that is a whole value in [0, 2^53].
std::uint64_t as_index(const Value& value, std::string_view what);
const std::string& as_string(const Value& value, std::string_view what);
const Array& as_array(const Value& value, std::string_view what);
const Object& as_object(const Value& value, std::string_view what);

/// The first member `key` of an object, or nullptr (also when `value` is not an object).
const Value* find(const Value& value, std::string_view key);

/// `value` as JSON text, compact or with `indent` spaces per level. A string that is not valid
/// UTF-8 (which no JSON reader accepts) throws seedrl::Error naming `what`.
std::string dump(const Value& value, std::string_view what, int indent = -1);

}  // namespace seedrl::json
