// How doctest prints the library's types in failure messages and MESSAGE/CAPTURE.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>

namespace doctest {

/// An optional figure (a mean return that may be unmeasured) prints as its value or "none".
template <class T>
struct StringMaker<std::optional<T>> {
  static String convert(const std::optional<T>& value) {
    return value ? toString(*value) : String("none");
  }
};

}  // namespace doctest
