#include "json.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace seedrl::json {

namespace {

[[noreturn]] void invalid(std::string_view source, std::size_t byte, std::string_view what) {
  fail(source, ": invalid JSON at byte ", byte, ": ", what);
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 4: " prefix: the line and column repeat the byte offset we report.
std::string_view reason(const Value::exception& e) {
  std::string_view message = e.what();
  if (message.starts_with("[json.exception.")) {
    const auto end = message.find("] ");
    if (end != std::string_view::npos) message.remove_prefix(end + 2);
  }
  if (message.starts_with("parse error")) {
    const auto colon = message.find(": ");
    if (colon != std::string_view::npos) message.remove_prefix(colon + 2);
  }
  return message;
}

// nlohmann's parser is iterative, but copying, comparing or printing a value recurses: refuse
// deep nesting before building anything. A value inside more than `max_depth` arrays or objects
// is an error; an empty container at the limit is not.
void check_depth(std::string_view text, std::string_view source, std::size_t max_depth) {
  std::size_t open = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == ']' || c == '}') {
      if (open > 0) --open;  // unbalanced text: the parser reports it
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      if (open > max_depth) invalid(source, i, "nested too deeply");
      if (c == '[' || c == '{') ++open;
      in_string = c == '"';
    }
  }
}

// Builds the document from nlohmann's SAX events. Unlike nlohmann's own builder, it keeps
// duplicate member names (lookups find the first) and it reports errors as seedrl::Error.
class Builder final : public nlohmann::json_sax<Value> {
 public:
  explicit Builder(std::string_view source) : source_(source) {}

  Value take() { return std::move(root_); }

  bool null() override { return add(Value()) != nullptr; }
  bool boolean(bool b) override { return add(b) != nullptr; }
  bool number_integer(number_integer_t n) override { return add(n) != nullptr; }
  bool number_unsigned(number_unsigned_t n) override { return add(n) != nullptr; }
  bool number_float(number_float_t n, const string_t&) override { return add(n) != nullptr; }
  bool string(string_t& s) override { return add(std::move(s)) != nullptr; }
  bool binary(binary_t&) override { return false; }  // JSON text has no binary values
  bool start_object(std::size_t) override {
    open_.push_back(add(Value::object()));
    return true;
  }
  bool key(string_t& name) override {
    key_ = std::move(name);
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    open_.push_back(add(Value::array()));
    return true;
  }
  bool end_array() override {
    open_.pop_back();
    return true;
  }
  // `position` counts the bytes read, the offending one included.
  bool parse_error(std::size_t position, const std::string&, const Value::exception& e) override {
    invalid(source_, position > 0 ? position - 1 : 0, reason(e));
  }

 private:
  // Places `v` in the innermost open container (only it changes, so the pointers held in
  // open_ stay valid) and returns where it now lives.
  Value* add(Value v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Value& parent = *open_.back();
    if (parent.is_array()) {
      Array& items = parent.get_ref<Array&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    // ordered_map is a vector of pairs: push_back appends even a name already present, where
    // emplace would keep only one.
    Object& members = parent.get_ref<Object&>();
    members.push_back({std::move(key_), std::move(v)});
    return &members.back().second;
  }

  std::string_view source_;
  Value root_;
  std::vector<Value*> open_;
  std::string key_;
};

[[noreturn]] void type_error(std::string_view what, const char* expected) {
  fail(what, ": expected ", expected);
}

}  // namespace

Value parse(std::string_view text, std::string_view source, std::size_t max_depth) {
  // nlohmann skips a UTF-8 byte order mark; JSON texts must not have one and ours never did.
  if (text.starts_with("\xEF\xBB\xBF")) invalid(source, 0, "byte order mark");
  check_depth(text, source, max_depth);
  Builder builder(source);
  // Builder throws on every error, so sax_parse's result needs no check.
  (void)Value::sax_parse(text.begin(), text.end(), &builder);
  return builder.take();
}

bool as_bool(const Value& value, std::string_view what) {
  if (!value.is_boolean()) type_error(what, "true or false");
  return value.get<bool>();
}

double as_number(const Value& value, std::string_view what) {
  if (!value.is_number()) type_error(what, "a number");
  return value.get<double>();
}

std::uint64_t as_index(const Value& value, std::string_view what) {
  const double v = as_number(value, what);
  if (!(v >= 0.0 && v <= 9007199254740992.0 && std::floor(v) == v))
    type_error(what, "a non-negative integer");
  return static_cast<std::uint64_t>(v);
}

const std::string& as_string(const Value& value, std::string_view what) {
  if (!value.is_string()) type_error(what, "a string");
  return value.get_ref<const std::string&>();
}

const Array& as_array(const Value& value, std::string_view what) {
  if (!value.is_array()) type_error(what, "an array");
  return value.get_ref<const Array&>();
}

const Object& as_object(const Value& value, std::string_view what) {
  if (!value.is_object()) type_error(what, "an object");
  return value.get_ref<const Object&>();
}

const Value* find(const Value& value, std::string_view key) {
  if (!value.is_object()) return nullptr;
  for (const auto& [name, member] : value.get_ref<const Object&>())
    if (name == key) return &member;
  return nullptr;
}

std::string dump(const Value& value, std::string_view what, int indent) {
  try {
    return value.dump(indent);
  } catch (const Value::type_error& e) {
    fail(what, ": cannot be written as JSON: ", reason(e));
  }
}

}  // namespace seedrl::json
