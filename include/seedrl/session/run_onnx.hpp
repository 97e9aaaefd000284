// What a training run's ONNX export (TrainingSessionOptions::export_onnx) puts into the model
// besides the network: the observation statistics the run normalised with, its declared step
// fields, and a squashed Gaussian policy's box (SAC: the model then also gives the greedy action).
#pragma once

#include <string_view>

#include "seedrl/core/step_spec.hpp"
#include "seedrl/experience/normalization.hpp"
#include "seedrl/io/onnx.hpp"
#include "seedrl/io/safetensors.hpp"

namespace seedrl {

/// `normalization`: the server's statistics (normalization_text); `policy`: the learner's
/// policy_metadata().
inline io::OnnxExportOptions run_onnx_options(std::string_view normalization, const StepSpec& steps,
                                              const io::Metadata& policy) {
  io::OnnxExportOptions onnx;
  const ObservationNormalization statistics =
      ObservationNormalization::parse(normalization, "the run");
  onnx.observation_moments = statistics.moments;
  onnx.observation_clip = statistics.clip;
  onnx.step_fields = steps.fields;
  if (const auto it = policy.find("policy");
      it != policy.end() && it->second.starts_with("squashed_gaussian"))
    onnx.squashed_box = steps.action;
  return onnx;
}

}  // namespace seedrl
