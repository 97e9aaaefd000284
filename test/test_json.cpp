// src/io/json.hpp: seedrl's promises on top of nlohmann-json for untrusted text.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/json.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_json {

using namespace seedrl;

TEST_CASE("json: values, nesting, escapes and unicode") {
  const json::Value v = json::parse(
      R"( {"a": [1, -2.5e3, true, null], "s": "x\"\\\n\u00e9\ud83d\ude00", "o": {}} )", "doc");
  const json::Array& a = json::as_array(*json::find(v, "a"), "a");
  CHECK(a.size() == 4);
  CHECK(json::as_index(a[0], "a0") == 1);
  CHECK(json::as_number(a[1], "a1") == -2500.0);
  CHECK(json::as_bool(a[2], "a2"));
  CHECK(a[3].is_null());
  CHECK(json::as_string(*json::find(v, "s"), "s") == "x\"\\\n\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(json::as_object(*json::find(v, "o"), "o").empty());
  CHECK(json::find(v, "missing") == nullptr);
  CHECK(json::find(a[0], "a") == nullptr);  // not an object
  CHECK(json::as_index(json::parse("16.0", "x"), "x") == 16);
  CHECK(json::as_index(json::parse("9007199254740992", "x"), "x") == 9007199254740992u);
}

TEST_CASE("json: written strings are escaped and read back") {
  CHECK(json::dump(json::Value("a\"b\\\n\x01"), "q") == "\"a\\\"b\\\\\\n\\u0001\"");
  const std::string text = "round \"trip\"\t\xC3\xA9\xF0\x9F\x98\x80/\x7f";
  CHECK(json::as_string(json::parse(json::dump(json::Value(text), "q"), "q"), "q") == text);
  // Objects keep their order, compact or indented.
  json::Value o = json::Value::object();
  o["z"] = "1";
  o["a"] = {1, 2};
  CHECK(json::dump(o, "o") == R"({"z":"1","a":[1,2]})");
  CHECK(json::dump(o, "o", 1) == "{\n \"z\": \"1\",\n \"a\": [\n  1,\n  2\n ]\n}");
  CHECK_THROWS_WITH_AS(json::dump(json::Value("bad \xFF"), "run_info.json"),
                       doctest::Contains("run_info.json: cannot be written as JSON"), Error);
}

TEST_CASE("json: objects keep the file's order and every duplicate; lookups find the first") {
  const json::Value v = json::parse(R"({"b": 1, "a": 2, "b": 3})", "doc");
  std::vector<std::pair<std::string, std::uint64_t>> members;
  for (const auto& [name, value] : json::as_object(v, "doc"))
    members.emplace_back(name, json::as_index(value, name));
  CHECK(members ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"b", 1}, {"a", 2}, {"b", 3}});
  CHECK(json::as_index(*json::find(v, "b"), "b") == 1);
}

TEST_CASE("json: malformed text is an error with the byte offset") {
  const std::string bad[] = {
      "",
      "{",
      "[1,]",
      "{\"a\" 1}",
      "\"unterminated",
      "\"\\x\"",
      "01",
      "1.",
      "-",
      "tru",
      "[1] 2",
      "\"\\ud800\"",
      "\"\\udc00\"",
      "\"\\ud800\\u0041\"",
      "{\"a\":1,}",
      "\"\x01\"",
      std::string("\"\0\"", 3),
      "1e999",
      "-1e999",
      "[1e400]",
      "\xEF\xBB\xBF{}",    // a byte order mark
      "\"\xFF\"",          // not UTF-8
      "\"\xED\xA0\x80\"",  // a surrogate in UTF-8
      "// comment\n1",
      "'single'",
      "NaN",
      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]"
      "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"};
  for (const std::string& text : bad) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(json::parse(text, "header.json"),
                         doctest::Contains("header.json: invalid JSON at byte"), Error);
  }
  CHECK_THROWS_WITH_AS(json::parse("[1,]", "x"), doctest::Contains("x: invalid JSON at byte 3: "),
                       Error);
  CHECK_THROWS_WITH_AS(json::parse("{\"a\": 1e999}", "x"),
                       doctest::Contains("at byte 10: number overflow"), Error);
  CHECK_THROWS_WITH_AS(json::parse("[1] 2", "x"), doctest::Contains("at byte 4: "), Error);
}

TEST_CASE("json: nesting deeper than the limit is refused") {
  auto nested = [](int depth, const std::string& inner) {
    return std::string(depth, '[') + inner + std::string(depth, ']');
  };
  CHECK(json::as_array(json::parse(nested(64, "1"), "x"), "x").size() == 1);  // 1 at depth 64
  CHECK(json::as_array(json::parse(nested(65, ""), "x"), "x").size() == 1);   // empty at 64
  CHECK_THROWS_WITH_AS(json::parse(nested(65, "1"), "x"),
                       doctest::Contains("x: invalid JSON at byte 65: nested too deeply"), Error);
  CHECK_THROWS_WITH_AS(json::parse(nested(100000, ""), "x"), doctest::Contains("nested too deeply"),
                       Error);
  CHECK_THROWS_WITH_AS(json::parse("[[{\"a\": [1]}]]", "x", 3),
                       doctest::Contains("at byte 9: nested too deeply"), Error);
  // Brackets inside strings do not count.
  CHECK(json::as_string(json::parse("\"" + std::string(100, '[') + "\\\"[\"", "x"), "x").size() ==
        102);
}

TEST_CASE("json: typed access names what was expected") {
  CHECK_THROWS_WITH_AS(json::as_index(json::as_array(json::parse("[1.5]", "x"), "x")[0], "shape"),
                       doctest::Contains("shape: expected a non-negative integer"), Error);
  CHECK_THROWS_WITH_AS(json::as_index(json::parse("-1", "x"), "shape"),
                       doctest::Contains("shape: expected a non-negative integer"), Error);
  CHECK_THROWS_WITH_AS(json::as_index(json::parse("9007199254740994", "x"), "offset"),
                       doctest::Contains("offset: expected a non-negative integer"), Error);
  CHECK_THROWS_WITH_AS(json::as_index(json::parse("\"1\"", "x"), "offset"),
                       doctest::Contains("offset: expected a number"), Error);
  CHECK_THROWS_WITH_AS(json::as_string(json::parse("3", "x"), "name"),
                       doctest::Contains("name: expected a string"), Error);
  CHECK_THROWS_WITH_AS(json::as_object(json::parse("[]", "x"), "header"),
                       doctest::Contains("header: expected an object"), Error);
  CHECK_THROWS_WITH_AS(json::as_array(json::parse("{}", "x"), "shape"),
                       doctest::Contains("shape: expected an array"), Error);
  CHECK_THROWS_WITH_AS(json::as_bool(json::parse("null", "x"), "flag"),
                       doctest::Contains("flag: expected true or false"), Error);
}

}  // namespace test_json
