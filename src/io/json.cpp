#include "seedrl/io/json.hpp"

#include <cmath>
#include <cstdlib>

namespace seedrl::json {

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string_view source, std::size_t max_depth)
      : text_(text), source_(source), max_depth_(max_depth) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (pos_ != text_.size()) error("unexpected characters after the value");
    return v;
  }

 private:
  [[noreturn]] void error(std::string_view what) const {
    fail(source_, ": invalid JSON at byte ", pos_, ": ", what);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  char peek() {
    skip_space();
    if (pos_ >= text_.size()) error("unexpected end of text");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool consume_literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Value value(std::size_t depth) {
    if (depth > max_depth_) error("nested too deeply");
    const char c = peek();
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Value(string());
    if (consume_literal("true")) return Value(true);
    if (consume_literal("false")) return Value(false);
    if (consume_literal("null")) return Value();
    if (c == '-' || (c >= '0' && c <= '9')) return Value(number());
    error("unexpected character");
  }

  Value object(std::size_t depth) {
    expect('{');
    Object members;
    if (peek() == '}') {
      ++pos_;
      return Value(std::move(members));
    }
    while (true) {
      if (peek() != '"') error("expected a member name");
      std::string key = string();
      expect(':');
      members.emplace_back(std::move(key), value(depth + 1));
      const char c = peek();
      ++pos_;
      if (c == '}') break;
      if (c != ',') error("expected ',' or '}'");
    }
    return Value(std::move(members));
  }

  Value array(std::size_t depth) {
    expect('[');
    Array items;
    if (peek() == ']') {
      ++pos_;
      return Value(std::move(items));
    }
    while (true) {
      items.push_back(value(depth + 1));
      const char c = peek();
      ++pos_;
      if (c == ']') break;
      if (c != ',') error("expected ',' or ']'");
    }
    return Value(std::move(items));
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::uint32_t hex4() {
    if (pos_ + 4 > text_.size()) error("truncated \\u escape");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        error("bad hex digit in \\u escape");
      }
    }
    return v;
  }

  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) error("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) error("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!consume_literal("\\u")) error("unpaired surrogate");
            const std::uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) error("bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            error("unpaired surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          error("unknown escape");
      }
    }
    return out;
  }

  double number() {
    const std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const std::size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == from) error("expected a digit");
    };
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else {
      digits();
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      digits();
    }
    const std::string literal(text_.substr(start, pos_ - start));
    const double v = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(v)) error("number out of range");
    return v;
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t max_depth_;
  std::size_t pos_ = 0;
};

[[noreturn]] void type_error(std::string_view what, const char* expected) {
  fail(what, ": expected ", expected);
}

}  // namespace

bool Value::as_bool(std::string_view what) const {
  if (!is_bool()) type_error(what, "true or false");
  return std::get<bool>(data_);
}
double Value::as_number(std::string_view what) const {
  if (!is_number()) type_error(what, "a number");
  return std::get<double>(data_);
}
std::uint64_t Value::as_index(std::string_view what) const {
  const double v = as_number(what);
  if (!(v >= 0.0 && v <= 9007199254740992.0 && std::floor(v) == v))
    type_error(what, "a non-negative integer");
  return static_cast<std::uint64_t>(v);
}
const std::string& Value::as_string(std::string_view what) const {
  if (!is_string()) type_error(what, "a string");
  return std::get<std::string>(data_);
}
const Array& Value::as_array(std::string_view what) const {
  if (!is_array()) type_error(what, "an array");
  return *std::get<std::shared_ptr<Array>>(data_);
}
const Object& Value::as_object(std::string_view what) const {
  if (!is_object()) type_error(what, "an object");
  return *std::get<std::shared_ptr<Object>>(data_);
}
const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : *std::get<std::shared_ptr<Object>>(data_))
    if (k == key) return &v;
  return nullptr;
}

Value parse(std::string_view text, std::string_view source, std::size_t max_depth) {
  return Parser(text, source, max_depth).document();
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[(c >> 4) & 0xF];
          out += hex[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace seedrl::json
