#include <doctest/doctest.h>

#include <string>

#include "seedrl/io/json.hpp"

using namespace seedrl;

TEST_CASE("json: values, nesting, escapes and unicode") {
  const json::Value v = json::parse(
      R"( {"a": [1, -2.5e3, true, null], "s": "x\"\\\n\u00e9\ud83d\ude00", "o": {}} )", "doc");
  const json::Array& a = v.find("a")->as_array("a");
  CHECK(a.size() == 4);
  CHECK(a[0].as_index("a0") == 1);
  CHECK(a[1].as_number("a1") == -2500.0);
  CHECK(a[2].as_bool("a2"));
  CHECK(a[3].is_null());
  CHECK(v.find("s")->as_string("s") == "x\"\\\n\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(v.find("o")->as_object("o").empty());
  CHECK(v.find("missing") == nullptr);
  CHECK(json::quote("a\"b\\\n\x01") == "\"a\\\"b\\\\\\n\\u0001\"");
  CHECK(json::parse(json::quote("round \"trip\"\t"), "q").as_string("q") == "round \"trip\"\t");
}

TEST_CASE("json: malformed text is an error with the byte offset") {
  const char* bad[] = {"",
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
                       "{\"a\":1,}",
                       "\"\x01\"",
                       "1e999",
                       "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]"
                       "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"};
  for (const char* text : bad) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(json::parse(text, "header.json"),
                         doctest::Contains("header.json: invalid JSON at byte"), Error);
  }
  CHECK_THROWS_WITH_AS(json::parse("[1.5]", "x").as_array("x")[0].as_index("shape"),
                       doctest::Contains("shape: expected a non-negative integer"), Error);
  CHECK_THROWS_WITH_AS(json::parse("3", "x").as_string("name"),
                       doctest::Contains("name: expected a string"), Error);
}
