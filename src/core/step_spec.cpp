// StepSpec's checks and its texts, and parse_fields: the step fields a checkpoint records
// (metadata "step_fields").
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

void StepSpec::validate(std::string_view who) const {
  action.validate(who);
  validate_fields(fields, who);
  (void)action_mask_index(who);
}

int StepSpec::action_mask_index(std::string_view who) const {
  const int k = field_index(kActionMaskField);
  if (k < 0) return k;
  const TensorSpec& mask = fields[static_cast<std::size_t>(k)].spec;
  SEEDRL_REQUIRE(
      !action.is_box() && mask.dtype == DType::u8 && mask.shape == Shape{action.num_actions}, who,
      ": the step field '", kActionMaskField, "' is ", mask.to_string(),
      "; a legal-action mask is u8[", action.num_actions, "] for ", action.to_string());
  return k;
}

void StepSpec::validate_fields(const std::vector<StepFieldSpec>& fields, std::string_view who) {
  if (std::string problem = fields_problem(fields); !problem.empty()) fail(who, ": ", problem);
}

std::string StepSpec::fields_problem(const std::vector<StepFieldSpec>& fields) {
  if (fields.size() > kMaxFields)
    return str_cat(fields.size(), " step fields are declared; at most ", kMaxFields,
                   " are allowed");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const StepFieldSpec& f = fields[i];
    if (!valid_name(f.name))
      return str_cat("step field ", i, " is named '", f.name, "'; a name is 1 to ",
                     StepFieldSpec::kMaxNameBytes,
                     " characters of a-z, 0-9 and _, starting with a letter");
    if (reserved(f.name))
      return str_cat("step field '", f.name,
                     "' has the name of a part every step has (observation, reward, flags, "
                     "terminated, truncated, action)");
    for (std::size_t j = 0; j < i; ++j)
      if (fields[j].name == f.name) return str_cat("step field '", f.name, "' is declared twice");
    const Shape& shape = f.spec.shape;
    if (shape.rank() > StepFieldSpec::kMaxRank)
      return str_cat("step field '", f.name, "' has rank ", shape.rank(), "; at most ",
                     StepFieldSpec::kMaxRank);
    // Multiplied with a check before every step, so that no dimension can overflow the size.
    std::size_t bytes = size_of(f.spec.dtype);
    if (bytes == 0) return str_cat("step field '", f.name, "' has an unknown dtype");
    for (std::int64_t d : shape.dims()) {
      if (d < 1)
        return str_cat("step field '", f.name, "' has shape ", shape,
                       " (every dimension at least 1)");
      if (static_cast<std::uint64_t>(d) > StepFieldSpec::kMaxBytes / bytes)
        return str_cat("step field '", f.name, "' of shape ", shape, " has more than ",
                       StepFieldSpec::kMaxBytes, " bytes per step");
      bytes *= static_cast<std::size_t>(d);
    }
  }
  return {};
}

std::string StepSpec::to_string() const {
  std::string text = str_cat("observation ", observation.to_string(), ", ", action.to_string());
  if (!fields.empty()) text += str_cat(", fields: ", fields_to_string(fields));
  return text;
}

std::string StepSpec::fields_to_string(const std::vector<StepFieldSpec>& fields) {
  if (fields.empty()) return "no fields";
  std::string text;
  for (const StepFieldSpec& f : fields) text += (text.empty() ? "" : ", ") + f.to_string();
  return text;
}

std::string StepSpec::fields_to_text(const std::vector<StepFieldSpec>& fields) {
  std::string text;
  for (const StepFieldSpec& f : fields) {
    if (!text.empty()) text += ";";
    text += str_cat(f.name, " ", name(f.spec.dtype));
    for (std::int64_t d : f.spec.shape.dims()) text += str_cat(" ", d);
  }
  return text;
}

}  // namespace seedrl
