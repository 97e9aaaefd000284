// ONNX export: any seedrl network as a standard ONNX model (opset 13, IR version 7) that ONNX
// Runtime, TensorRT, OpenVINO, Unity Sentis or a game engine's own runtime can execute.
//
// The model computes one step for a batch of streams, exactly what Network::forward computes for
// T = 1 (docs/deployment.md lists every name, shape and type):
//
//   inputs   observations  [batch, observation shape...]  u8 (MinAtar, Nature) or f32 (MLP)
//            lstm_h, lstm_c [batch, H] f32                 recurrent networks only
//            action [batch, D] f32                         a critic only (Q of this action)
//            action_mask [batch, A] u8                     where the steps declare a legal-action
//                                                          mask: logits and q hold kIllegalLogit
//                                                          (-1e9) at the illegal actions
//   outputs  logits [batch, A], value [batch]              policy and value heads
//            mean, log_std [batch, D], value [batch]        Gaussian policy (box actions)
//            q [batch, A]                                  Q head (dueling combined in the graph)
//            q [batch]                                     a critic
//            action [batch, D]                             with squashed_box (SAC's greedy action)
//            lstm_h_out, lstm_c_out [batch, H]             recurrent networks only
//
// Each head kind writes its own nodes (nn/heads/, through nn::OnnxGraph).
//
// Observation normalisation (OnnxExportOptions::observation_moments), pixel scaling (1/255 for
// the Nature CNN) and the layout changes of seedrl's channels-last
// convolutions are part of the graph, so a host feeds the observations its environment emits.
// A recurrent host feeds lstm_*_out back as the next step's lstm_* and zeros at an episode's
// start. `batch` is a symbolic dimension: any batch size runs.
//
// The file is written with seedrl's own protobuf encoder (src/io/protobuf.hpp, ~60 lines) rather
// than Debian's libonnx-dev: that package's generated headers need protobuf's headers
// (libprotobuf-dev, which it does not depend on) and its exact protobuf version, which would
// make protobuf a dependency of every program embedding seedrl for the sake of writing one file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seedrl/core/dtype.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/math/running_moments.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/onnx_graph.hpp"

namespace seedrl::io {

/// The names of the exported model's inputs and outputs (nn/onnx_graph.hpp).
using OnnxNames = nn::OnnxNames;

struct OnnxExportOptions {
  /// The element type of the `observations` input: u8 or f32. Default: what seedrl's matching
  /// environments emit (u8 for the MinAtar and Nature torsos, f32 for the MLP). The MLP takes
  /// f32 only.
  std::optional<DType> observation_dtype;
  /// Stored as the model's doc_string (e.g. where the parameters came from).
  std::string description;
  /// Observation statistics a run normalised with (PPO; Policy::normalization()): the graph then
  /// starts with observations' = clip((observations - mean) / sqrt(variance + 1e-8), -clip, clip)
  /// exactly as inference and Policy apply them, so a host feeds raw observations. f32 only.
  std::optional<math::RunningMoments> observation_moments;
  float observation_clip = 10.0f;
  /// The fields the run's steps declared (Policy::step_fields()), recorded in the model's metadata
  /// as "seedrl.step_fields" (StepSpec::fields_to_text) so that a host knows what the agent was
  /// trained with. A field becomes an input of the graph only where a head computes with it: the
  /// legal-action mask (kActionMaskField) of a network with logits or Q-values over its actions.
  std::vector<StepFieldSpec> step_fields;
  /// A squashed Gaussian policy's box (SAC: Policy's PolicyDescription::squashed with its action
  /// spec): the model also outputs `action` [batch, D] = bias + scale tanh(mean), the greedy
  /// action within the box, so that a host needs nothing of SAC's parametrisation.
  std::optional<ActionSpec> squashed_box;
};

/// The opset and IR version the exporter writes.
inline constexpr std::int64_t kOnnxOpset = 13;
inline constexpr std::int64_t kOnnxIrVersion = 7;

/// The bytes of an ONNX model computing the network `config` describes with the values in
/// `parameters` (on any device; they are copied to the host). The model's metadata holds
/// "seedrl.network" (nn::describe), "seedrl.version" and, for steps with declared fields,
/// "seedrl.step_fields". Throws naming the problem: a parameter
/// the architecture needs and the store lacks (or of another shape), a bad observation type.
std::string encode_onnx(const nn::NetworkOptions& config, const nn::ParameterStore& parameters,
                        const OnnxExportOptions& options = {});

/// encode_onnx() written to `path` atomically (temporary file, flush, rename): an existing file
/// is replaced whole or not at all.
void export_onnx(const nn::NetworkOptions& config, const nn::ParameterStore& parameters,
                 const std::string& path, const OnnxExportOptions& options = {});

/// The network's current parameters exported to `path` (see above).
template <nn::Backend B>
void export_onnx(const nn::Network<B>& network, const std::string& path,
                 const OnnxExportOptions& options = {}) {
  export_onnx(network.config(), network.parameters(), path, options);
}

}  // namespace seedrl::io
