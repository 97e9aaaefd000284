// StepSpec: what one environment step is, declared once. Every step has an observation, a reward
// and its step flags (first, terminated, truncated: core/step_flags.hpp), and is answered with an
// action of the ActionSpec; an environment may declare named fields beside the observation (a
// legal-action mask, the player to move, a goal), each one tensor of its own TensorSpec per step,
// as envpool's EnvSpec declares its state fields.
//
//   seedrl::StepSpec spec{seedrl::TensorSpec{{4}}, seedrl::ActionSpec{2},
//                         {{"goal", {{2}, seedrl::DType::f32}}}};
//   spec.validate("MyEnv");           // throws naming a bad field
//   spec.field_index("goal");         // 0; -1 for a name it does not declare
//
// A declared field travels with every step without any signature changing on its way: from the
// environment (env/environment.hpp, StepRow) through the actor and its client, the wire
// (protocol version 3), the inference server (validated against the server's spec, gathered
// beside the observations), into the unrolls, their batches (UnrollBatch::field), the replay's
// saved state and checkpoints (metadata "step_fields", which Policy reads).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/action_spec.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor_spec.hpp"

namespace seedrl {

/// One declared field of a step: a name and the tensor every environment gives per step.
struct StepFieldSpec {
  std::string name;  ///< 1 to kMaxNameBytes of [a-z0-9_], starting with a letter
  TensorSpec spec;   ///< one environment's value: rank 0 to kMaxRank, at most kMaxBytes

  static constexpr std::size_t kMaxNameBytes = 32;
  static constexpr int kMaxRank = 4;  ///< an unroll batch adds two: [L, B, field...]
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 20;

  /// "action_mask u8[6]".
  std::string to_string() const { return str_cat(name, " ", spec.to_string()); }
  friend bool operator==(const StepFieldSpec&, const StepFieldSpec&) = default;
};

/// The step field a legal-action mask travels in: u8, one entry per discrete action, non-zero =
/// legal. Where an environment declares it, acting chooses among the legal actions only.
inline constexpr const char* kActionMaskField = "action_mask";

struct StepSpec {
  TensorSpec observation;
  ActionSpec action;
  std::vector<StepFieldSpec> fields;  ///< declared fields, in the order they travel

  static constexpr std::size_t kMaxFields = 8;

  /// The position of field `name` in `fields`, or -1.
  int field_index(std::string_view name) const { return index_of(fields, name); }
  static int index_of(const std::vector<StepFieldSpec>& fields, std::string_view name) {
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].name == name) return static_cast<int>(i);
    return -1;
  }

  /// Throws naming `who` and the field unless the action spec is valid and every field has a
  /// valid, unique, unreserved name and a shape within the limits, and a declared action mask
  /// fits the actions (action_mask_index).
  void validate(std::string_view who) const {
    action.validate(who);
    validate_fields(fields, who);
    (void)action_mask_index(who);
  }

  /// The position of the declared legal-action mask (kActionMaskField), or -1; throws naming
  /// `who` unless it is u8 [num_actions] of discrete actions.
  int action_mask_index(std::string_view who) const {
    const int k = field_index(kActionMaskField);
    if (k < 0) return k;
    const TensorSpec& mask = fields[static_cast<std::size_t>(k)].spec;
    SEEDRL_REQUIRE(
        !action.is_box() && mask.dtype == DType::u8 && mask.shape == Shape{action.num_actions}, who,
        ": the step field '", kActionMaskField, "' is ", mask.to_string(),
        "; a legal-action mask is u8[", action.num_actions, "] for ", action.to_string());
    return k;
  }

  /// The fields alone (an UnrollSpec's, a checkpoint's).
  static void validate_fields(const std::vector<StepFieldSpec>& fields, std::string_view who) {
    if (std::string problem = fields_problem(fields); !problem.empty()) fail(who, ": ", problem);
  }
  /// What is wrong with `fields` ("" when nothing is): for callers that must not throw (the wire
  /// decoders).
  static std::string fields_problem(const std::vector<StepFieldSpec>& fields) {
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

  /// "observation f32[4], 2 discrete actions, fields: goal f32[2]" (no fields: nothing after the
  /// actions).
  std::string to_string() const {
    std::string text = str_cat("observation ", observation.to_string(), ", ", action.to_string());
    if (!fields.empty()) text += str_cat(", fields: ", fields_to_string(fields));
    return text;
  }
  /// "goal f32[2], player i32[]", or "no fields".
  static std::string fields_to_string(const std::vector<StepFieldSpec>& fields) {
    if (fields.empty()) return "no fields";
    std::string text;
    for (const StepFieldSpec& f : fields) text += (text.empty() ? "" : ", ") + f.to_string();
    return text;
  }

  /// Exact text of the fields, "goal f32 2;player i32" (empty without fields): checkpoints record
  /// it (metadata "step_fields").
  static std::string fields_to_text(const std::vector<StepFieldSpec>& fields) {
    std::string text;
    for (const StepFieldSpec& f : fields) {
      if (!text.empty()) text += ";";
      text += str_cat(f.name, " ", name(f.spec.dtype));
      for (std::int64_t d : f.spec.shape.dims()) text += str_cat(" ", d);
    }
    return text;
  }
  /// The inverse of fields_to_text, validated; throws naming `source` and the text.
  static std::vector<StepFieldSpec> parse_fields(std::string_view text, std::string_view source);

  friend bool operator==(const StepSpec&, const StepSpec&) = default;

 private:
  static bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > StepFieldSpec::kMaxNameBytes) return false;
    if (name[0] < 'a' || name[0] > 'z') return false;
    for (char c : name)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
  }
  static bool reserved(std::string_view name) {
    for (std::string_view r : {"observation", "observations", "reward", "rewards", "flags",
                               "terminated", "truncated", "action", "actions"})
      if (name == r) return true;
    return false;
  }
};

}  // namespace seedrl
