#include "seedrl/io/onnx.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "onnx_builder.hpp"
#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/math/masked_categorical.hpp"
#include "seedrl/version.hpp"

namespace seedrl::io {
namespace {

using namespace onnx_builder;  // Graph, Attribute, Dim, OnnxType (src/io/onnx_builder.hpp)

// y = act(x W^T + b) for seedrl's Linear "<name>" ([out, in] weight, [out] bias).
std::string linear(Graph& g, const std::string& x, const std::string& name, std::int64_t in,
                   std::int64_t out, nn::Activation act) {
  const std::string w = g.parameter(name + ".weight", {out, in});
  const std::string b = g.parameter(name + ".bias", {out});
  const std::string y = g.apply("Gemm", {x, w, b}, {Attribute::integer("transB", 1)});
  switch (act) {
    case nn::Activation::none:
      return y;
    case nn::Activation::relu:
      return g.apply("Relu", {y});
    case nn::Activation::tanh:
      return g.apply("Tanh", {y});
  }
  fail("export_onnx: unknown activation");
}

// ReLU(conv(x)) on NCHW; seedrl's Conv2d "<name>" stores [out, in, k, k] as ONNX does.
std::string conv_relu(Graph& g, const std::string& x, const std::string& name, std::int64_t in,
                      std::int64_t out, std::int64_t kernel, std::int64_t stride,
                      std::int64_t padding = 0) {
  const std::string w = g.parameter(name + ".weight", {out, in, kernel, kernel});
  const std::string b = g.parameter(name + ".bias", {out});
  const std::int64_t kernel_shape[] = {kernel, kernel}, strides[] = {stride, stride};
  const std::int64_t pads[] = {padding, padding, padding, padding};
  const std::string y =
      g.apply("Conv", {x, w, b},
              {Attribute::integers("kernel_shape", kernel_shape),
               Attribute::integers("strides", strides), Attribute::integers("pads", pads)});
  return g.apply("Relu", {y});
}

// seedrl flattens its channels-last feature maps in (H, W, C) order: transpose NCHW back first.
std::string flatten_channels_last(Graph& g, const std::string& x) {
  const std::int64_t to_nhwc[] = {0, 2, 3, 1};
  const std::string nhwc = g.apply("Transpose", {x}, {Attribute::integers("perm", to_nhwc)});
  return g.apply("Flatten", {nhwc}, {Attribute::integer("axis", 1)});
}

// The torso whose layers are named "<prefix>.*" on the observations input; returns the features
// [batch, F] and sets `features`.
std::string torso(Graph& g, const nn::NetworkOptions& c, const std::string& prefix,
                  const std::string& x_in, DType dtype, std::int64_t& features) {
  const Shape& obs = c.observation_shape;
  const auto name = [&](const char* layer) { return str_cat(prefix, ".", layer); };
  constexpr auto relu = nn::Activation::relu;
  std::string x = x_in;
  if (dtype != DType::f32) x = g.apply("Cast", {x}, {Attribute::integer("to", 1)});
  switch (c.torso) {
    case nn::Torso::mlp: {
      if (obs.rank() > 1) x = g.apply("Flatten", {x}, {Attribute::integer("axis", 1)});
      std::int64_t in = obs.numel();
      for (std::size_t i = 0; i < c.mlp_hidden.size(); ++i) {
        x = linear(g, x, str_cat(prefix, ".fc", i + 1), in, c.mlp_hidden[i], c.mlp_activation);
        in = c.mlp_hidden[i];
      }
      features = in;
      return x;
    }
    case nn::Torso::minatar: {
      const std::int64_t to_nchw[] = {0, 3, 1, 2};  // MinAtar observations are [H, W, C]
      x = g.apply("Transpose", {x}, {Attribute::integers("perm", to_nchw)});
      x = conv_relu(g, x, name("conv"), obs[2], 16, 3, 1);
      const std::int64_t flat = (obs[0] - 2) * (obs[1] - 2) * 16;
      features = 128;
      return linear(g, flatten_channels_last(g, x), name("fc"), flat, 128, relu);
    }
    case nn::Torso::board: {  // observations are [C, H, W] planes; each convolution keeps H, W
      std::int64_t in = obs[0];
      for (std::size_t i = 0; i < c.conv_channels.size(); ++i) {
        x = conv_relu(g, x, str_cat(prefix, ".conv", i + 1), in, c.conv_channels[i], 3, 1, 1);
        in = c.conv_channels[i];
      }
      x = flatten_channels_last(g, x);
      in *= obs[1] * obs[2];
      for (std::size_t i = 0; i < c.mlp_hidden.size(); ++i) {
        x = linear(g, x, str_cat(prefix, ".fc", i + 1), in, c.mlp_hidden[i], relu);
        in = c.mlp_hidden[i];
      }
      features = in;
      return x;
    }
    case nn::Torso::nature: {
      x = g.apply("Mul", {x, g.float_scalar(1.0f / 255.0f)});  // observations are [C, H, W]
      x = conv_relu(g, x, name("conv1"), obs[0], 32, 8, 4);
      x = conv_relu(g, x, name("conv2"), 32, 64, 4, 2);
      x = conv_relu(g, x, name("conv3"), 64, 64, 3, 1);
      nn::Conv2dOptions o1{obs[0], 32, 8, 4}, o2{32, 64, 4, 2}, o3{64, 64, 3, 1};
      const std::int64_t h = o3.output_size(o2.output_size(o1.output_size(obs[1])));
      const std::int64_t w = o3.output_size(o2.output_size(o1.output_size(obs[2])));
      features = 512;
      return linear(g, flatten_channels_last(g, x), name("fc"), h * w * 64, 512, relu);
    }
  }
  fail("export_onnx: unknown torso");
}

// seedrl's LSTM "core" (gates i, f, g, o; one bias) as ONNX's LSTM (gates i, o, f, c; input and
// recurrent biases): one step from (lstm_h, lstm_c). Returns the new hidden state [batch, H].
std::string lstm(Graph& g, const std::string& x, std::int64_t in, std::int64_t hidden) {
  const std::int64_t h = hidden;
  // `columns` values per gate row; the bias is a vector (one column).
  auto reorder = [&](const std::string& name, std::int64_t columns) {
    const std::span<const float> v =
        g.parameter_values(name, columns == 0 ? Shape{4 * h} : Shape{4 * h, columns});
    columns = std::max<std::int64_t>(columns, 1);
    std::vector<float> out(v.size());
    const std::int64_t from_block[] = {0, 3, 1, 2};  // ONNX i, o, f, c from seedrl i, f, g, o
    const auto block = static_cast<std::size_t>(h * columns);
    for (std::size_t b = 0; b < 4; ++b)
      std::memcpy(out.data() + b * block,
                  v.data() + static_cast<std::size_t>(from_block[b]) * block,
                  block * sizeof(float));
    return out;
  };
  const std::string w = g.initializer("core.W", {1, 4 * h, in}, reorder("core.weight_ih", in));
  const std::string r = g.initializer("core.R", {1, 4 * h, h}, reorder("core.weight_hh", h));
  std::vector<float> bias = reorder("core.bias", 0);
  bias.resize(static_cast<std::size_t>(8 * h), 0.0f);  // the recurrent bias is zero
  const std::string b = g.initializer("core.B", {1, 8 * h}, bias);

  const std::int64_t axis0[] = {0};
  const std::string axes = g.int64_constant(axis0);
  const std::string sequence = g.apply("Unsqueeze", {x, axes});  // [1, batch, in]
  const std::string h0 = g.apply("Unsqueeze", {OnnxNames::lstm_h, axes});
  const std::string c0 = g.apply("Unsqueeze", {OnnxNames::lstm_c, axes});
  g.node("LSTM", {sequence, w, r, b, "", h0, c0}, {"", "core.Y_h", "core.Y_c"},
         {Attribute::integer("hidden_size", h)});
  g.node("Squeeze", {"core.Y_h", axes}, {OnnxNames::lstm_h_out});
  g.node("Squeeze", {"core.Y_c", axes}, {OnnxNames::lstm_c_out});
  return OnnxNames::lstm_h_out;
}

// The graph as the network's head kinds write their nodes into it (nn/onnx_graph.hpp).
// The heads' view of the graph. With `legal` (a BOOL [batch, A] value: the action_mask input), the
// discrete heads' outputs, logits and q over the A actions, hold kIllegalLogit where an action is
// illegal, so that a host's softmax or argmax sees the legal actions only, as Policy acts.
class HeadGraph final : public nn::OnnxGraph {
 public:
  /// `legal`: the BOOL mask of the logits and Q-values (empty: none); `branches`: their action
  /// branches (empty: one), each of which also becomes an output of its own.
  explicit HeadGraph(Graph& g, std::string legal = {}, std::vector<std::int64_t> branches = {})
      : g_(g), legal_(std::move(legal)), branches_(std::move(branches)) {}

  std::string linear(const std::string& x, const std::string& layer, std::int64_t in,
                     std::int64_t out, nn::Activation activation, bool bias) override {
    if (bias) return io::linear(g_, x, layer, in, out, activation);
    // No bias: x W^T (MatMul with the transposed weight), then the activation.
    const std::string w = g_.parameter(layer + ".weight", {out, in});
    const std::int64_t transpose[] = {1, 0};
    const std::string wt = g_.apply("Transpose", {w}, {Attribute::integers("perm", transpose)});
    const std::string y = g_.apply("MatMul", {x, wt});
    return activation == nn::Activation::none ? y : activate(y, activation);
  }
  std::string apply(std::string_view op, const std::vector<std::string>& inputs,
                    const std::vector<nn::OnnxAttribute>& attributes) override {
    std::vector<Attribute> attrs;
    for (const nn::OnnxAttribute& a : attributes)
      attrs.push_back(a.list ? Attribute::integers(a.name, a.values)
                             : Attribute::integer(a.name, a.values.at(0)));
    return g_.apply_list(op, inputs, attrs);
  }
  std::string parameter(const std::string& name, const Shape& shape) override {
    return g_.parameter(name, shape);
  }
  std::string int64_constant(const std::vector<std::int64_t>& values) override {
    return g_.int64_constant(values);
  }
  std::string float_scalar(float value) override { return g_.float_scalar(value); }
  std::string input(std::string_view name, const std::vector<std::int64_t>& dims) override {
    g_.input(name, OnnxType::f32, batch_dims(dims));
    return std::string(name);
  }
  void output(const std::string& value, std::string_view name,
              const std::vector<std::int64_t>& dims) override {
    const bool scores =
        dims.size() == 1 && (name == nn::OnnxNames::logits || name == nn::OnnxNames::q);
    const bool masked = !legal_.empty() && scores;
    const std::string out =
        masked ? g_.apply("Where", {legal_, value, g_.float_scalar(math::kIllegalLogit)}) : value;
    g_.node("Identity", {out}, {name});
    g_.output_dims(name, OnnxType::f32, batch_dims(dims));
    if (!scores) return;
    std::int64_t offset = 0;  // each branch's columns: "logits_0", "logits_1", ... ("q_0", ...)
    for (std::size_t k = 0; k < branches_.size(); ++k) {
      const std::int64_t size = branches_[k];
      const std::string branch = str_cat(name, "_", k);
      const std::string starts = int64_constant({offset}), ends = int64_constant({offset + size}),
                        axes = int64_constant({1});
      g_.node("Slice", {out, starts, ends, axes}, {branch});
      g_.output_dims(branch, OnnxType::f32, batch_dims({size}));
      offset += size;
    }
  }

 private:
  static std::vector<Dim> batch_dims(const std::vector<std::int64_t>& dims) {
    std::vector<Dim> all{kBatch};
    for (std::int64_t d : dims) all.push_back({d, {}});
    return all;
  }
  std::string activate(const std::string& y, nn::Activation activation) {
    return g_.apply(activation == nn::Activation::relu ? "Relu" : "Tanh", {y});
  }
  Graph& g_;
  std::string legal_;
  std::vector<std::int64_t> branches_;
};

// The BOOL [batch, A] mask of the graph's action_mask input, where the run's steps declare a
// legal-action mask and the network has discrete heads for it to mask; else empty.
std::string legal_actions(Graph& g, const nn::NetworkOptions& config,
                          const OnnxExportOptions& options) {
  const int k = StepSpec::index_of(options.step_fields, kActionMaskField);
  if (k < 0 || config.box_actions() || !(config.policy_value_heads || config.q_head)) return {};
  const TensorSpec& mask = options.step_fields[static_cast<std::size_t>(k)].spec;
  const std::int64_t a = config.num_actions;
  SEEDRL_REQUIRE(mask.dtype == DType::u8 && mask.shape == Shape{a}, "export_onnx: the step field '",
                 kActionMaskField, "' is ", mask.to_string(), "; a legal-action mask for the ", a,
                 " actions of ", nn::describe(config), " is u8[", a, "]");
  g.input(nn::OnnxNames::action_mask, OnnxType::u8, {kBatch, {a, {}}});
  return g.apply("Cast", {nn::OnnxNames::action_mask}, {Attribute::integer("to", 9)});  // BOOL
}

}  // namespace

std::string encode_onnx(const nn::NetworkOptions& config, const nn::ParameterStore& parameters,
                        const OnnxExportOptions& options) {
  config.validate();
  SEEDRL_REQUIRE(parameters.finalized(), "export_onnx: the parameter store is not finalised");
  const DType dtype =
      options.observation_dtype.value_or(config.torso == nn::Torso::mlp ? DType::f32 : DType::u8);
  const OnnxType input_type = onnx_type(dtype);
  SEEDRL_REQUIRE(config.torso != nn::Torso::mlp || dtype == DType::f32,
                 "export_onnx: the MLP torso takes f32 observations, not ", dtype);

  Graph g(parameters);
  std::vector<Dim> observation_dims{kBatch};
  for (std::int64_t d : config.observation_shape.dims()) observation_dims.push_back({d, {}});
  g.input(OnnxNames::observations, input_type, observation_dims);

  // The observations the torsos see: normalised first where the run normalised them.
  std::string observations = OnnxNames::observations;
  if (options.observation_moments) {
    const math::RunningMoments& m = *options.observation_moments;
    const std::int64_t size = config.observation_shape.numel();
    SEEDRL_REQUIRE(dtype == DType::f32 && m.size() == size,
                   "export_onnx: observation statistics of ", m.size(),
                   " values need f32 observations of as many values; the network takes ", dtype,
                   " observations ", config.observation_shape);
    SEEDRL_REQUIRE(options.observation_clip > 0.0f,
                   "export_onnx: observation_clip must be > 0, got ", options.observation_clip);
    // The same float values RunningMoments::normalize computes with.
    const Eigen::VectorXf mean = m.mean().cast<float>();
    const Eigen::VectorXf scale = (m.variance().array() + 1e-8).rsqrt().matrix().cast<float>();
    const auto values = [](const Eigen::VectorXf& v) {
      return std::span<const float>(v.data(), static_cast<std::size_t>(v.size()));
    };
    const std::string mean_name =
        g.initializer("normalization.mean", config.observation_shape, values(mean));
    const std::string scale_name =
        g.initializer("normalization.scale", config.observation_shape, values(scale));
    const std::string centred = g.apply("Sub", {observations, mean_name});
    const std::string scaled = g.apply("Mul", {centred, scale_name});
    observations = g.apply("Clip", {scaled, g.float_scalar(-options.observation_clip),
                                    g.float_scalar(options.observation_clip)});
  }

  std::int64_t features = 0;
  std::string x = torso(g, config, "torso", observations, dtype, features);
  const std::int64_t h = config.lstm_size;
  if (h > 0) {
    g.input(OnnxNames::lstm_h, OnnxType::f32, {kBatch, {h, {}}});
    g.input(OnnxNames::lstm_c, OnnxType::f32, {kBatch, {h, {}}});
    x = lstm(g, x, features, h);
    features = h;
  }

  // The heads write their own nodes, in the network's order (nn/heads/head_kinds.hpp).
  nn::HeadOnnxInputs heads{x, features, x, features};
  if (config.separate_value_torso)
    heads.value_features = torso(g, config, "value_torso", observations, dtype, heads.value_size);
  HeadGraph head_graph(g, legal_actions(g, config, options), config.action_branches);
  nn::for_each_head_kind([&](auto kind) {
    if (decltype(kind)::in(config)) decltype(kind)::onnx(head_graph, config, heads);
  });
  if (options.squashed_box) {  // SAC's greedy action: bias + scale tanh(mean)
    const ActionSpec& box = *options.squashed_box;
    SEEDRL_REQUIRE(config.box_actions() && config.policy_value_heads && box.is_box() &&
                       box.dims() == config.action_dims,
                   "export_onnx: squashed_box ", box.to_string(), " needs a Gaussian policy of ",
                   box.dims(), " dimensions; the network is ", nn::describe(config));
    std::vector<float> scale, bias;
    for (std::size_t d = 0; d < box.low.size(); ++d) {
      scale.push_back(0.5f * (box.high[d] - box.low[d]));
      bias.push_back(0.5f * (box.high[d] + box.low[d]));
    }
    const Shape dims{config.action_dims};
    const std::string squashed = g.apply("Tanh", {OnnxNames::mean});
    const std::string scaled =
        g.apply("Mul", {squashed, g.initializer("squash.scale", dims, scale)});
    head_graph.output(g.apply("Add", {scaled, g.initializer("squash.bias", dims, bias)}),
                      OnnxNames::action, {config.action_dims});
  }
  if (h > 0) {
    g.output(OnnxNames::lstm_h_out, OnnxType::f32, {kBatch, {h, {}}});
    g.output(OnnxNames::lstm_c_out, OnnxType::f32, {kBatch, {h, {}}});
  }

  const std::string network = nn::describe(config);
  Message model;  // ModelProto
  model
      .integer(1, kOnnxIrVersion)                                         // ir_version
      .bytes(2, "seedrl")                                                 // producer_name
      .bytes(3, kVersion);                                                // producer_version
  if (!options.description.empty()) model.bytes(6, options.description);  // doc_string
  model.message(7, g.finish("seedrl", network));                          // graph
  Message opset;  // OperatorSetIdProto: domain = 1 (empty: the default ONNX domain), version = 2
  opset.integer(2, kOnnxOpset);
  model.message(8, opset);  // opset_import
  StepSpec::validate_fields(options.step_fields, "OnnxExportOptions.step_fields");
  const std::string fields = StepSpec::fields_to_text(options.step_fields);
  for (const auto& [key, value] :
       {std::pair<std::string_view, std::string_view>{"seedrl.network", network},
        {"seedrl.version", kVersion},
        {"seedrl.step_fields", fields}}) {
    if (value.empty()) continue;  // no declared fields
    Message entry;                // StringStringEntryProto: key = 1, value = 2
    entry.bytes(1, key).bytes(2, value);
    model.message(14, entry);  // metadata_props
  }
  return model.take();
}

void export_onnx(const nn::NetworkOptions& config, const nn::ParameterStore& parameters,
                 const std::string& path, const OnnxExportOptions& options) {
  write_file_atomically(path, encode_onnx(config, parameters, options), {}, 0644);
}

}  // namespace seedrl::io
