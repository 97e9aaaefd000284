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
  void validate(std::string_view who) const;

  /// The position of the declared legal-action mask (kActionMaskField), or -1; throws naming
  /// `who` unless it is u8 [num_actions] of discrete actions.
  int action_mask_index(std::string_view who) const;

  /// The fields alone (an UnrollSpec's, a checkpoint's).
  static void validate_fields(const std::vector<StepFieldSpec>& fields, std::string_view who);
  /// What is wrong with `fields` ("" when nothing is): for callers that must not throw (the wire
  /// decoders).
  static std::string fields_problem(const std::vector<StepFieldSpec>& fields);

  /// "observation f32[4], 2 discrete actions, fields: goal f32[2]" (no fields: nothing after the
  /// actions).
  std::string to_string() const;
  /// "goal f32[2], player i32[]", or "no fields".
  static std::string fields_to_string(const std::vector<StepFieldSpec>& fields);

  /// Exact text of the fields, "goal f32 2;player i32" (empty without fields): checkpoints record
  /// it (metadata "step_fields").
  static std::string fields_to_text(const std::vector<StepFieldSpec>& fields);
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
