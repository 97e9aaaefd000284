// StepSpec::parse_fields: the step fields a checkpoint records (metadata "step_fields").
#include "seedrl/core/step_spec.hpp"

#include <charconv>
#include <system_error>

namespace seedrl {

std::vector<StepFieldSpec> StepSpec::parse_fields(std::string_view text, std::string_view source) {
  std::vector<StepFieldSpec> fields;
  auto fail_with = [&](std::string_view what) {
    throw Error(str_cat(source, ": step fields '", text, "' are not valid: ", what));
  };
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find(';', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view entry = text.substr(begin, end - begin);
    begin = end + 1;
    if (end == text.size() - 1) fail_with("a ';' with no field after it");
    std::vector<std::string_view> words;
    for (std::size_t at = 0; at < entry.size();) {
      const std::size_t space = std::min(entry.find(' ', at), entry.size());
      if (space > at) words.push_back(entry.substr(at, space - at));
      at = space + 1;
    }
    if (words.size() < 2) fail_with("a field is a name, a dtype and its dimensions");
    StepFieldSpec field;
    field.name = std::string(words[0]);
    if (words[1] == "f32") {
      field.spec.dtype = DType::f32;
    } else if (words[1] == "u8") {
      field.spec.dtype = DType::u8;
    } else if (words[1] == "i32") {
      field.spec.dtype = DType::i32;
    } else {
      fail_with(str_cat("field '", words[0], "' has unknown dtype '", words[1], "'"));
    }
    if (words.size() - 2 > static_cast<std::size_t>(StepFieldSpec::kMaxRank))
      fail_with(
          str_cat("field '", words[0], "' has more than ", StepFieldSpec::kMaxRank, " dimensions"));
    std::vector<std::int64_t> dims;
    for (std::size_t i = 2; i < words.size(); ++i) {
      std::int64_t d = 0;
      const auto [ptr, ec] = std::from_chars(words[i].data(), words[i].data() + words[i].size(), d);
      if (ec != std::errc() || ptr != words[i].data() + words[i].size() || d < 1 ||
          d > (std::int64_t{1} << 31))
        fail_with(str_cat("field '", words[0], "' has dimension '", words[i], "'"));
      dims.push_back(d);
    }
    field.spec.shape = Shape(std::span<const std::int64_t>(dims));
    fields.push_back(std::move(field));
  }
  try {
    validate_fields(fields, source);
  } catch (const Error& e) {
    fail_with(e.what());
  }
  return fields;
}

}  // namespace seedrl
