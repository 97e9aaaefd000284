// The ONNX graph builder behind io::encode_onnx (src/io/onnx.cpp): a GraphProto's nodes,
// initializers, inputs and outputs written with seedrl's protobuf encoder. Private to the ONNX
// writer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protobuf.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/nn/parameter.hpp"

namespace seedrl::io::onnx_builder {

using proto::Message;

// onnx.proto's TensorProto.DataType and AttributeProto.AttributeType values.
enum class OnnxType : std::int64_t { f32 = 1, u8 = 2, i64 = 7 };
enum class AttributeType : std::int64_t { f = 1, i = 2, floats = 6, ints = 7 };

inline OnnxType onnx_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return OnnxType::f32;
    case DType::u8:
      return OnnxType::u8;
    default:
      fail("export_onnx: observations of type ", dtype, " are not supported (u8 or f32)");
  }
}

struct Attribute {
  Message proto;

  static Attribute integer(std::string_view name, std::int64_t value) {
    Attribute a;  // AttributeProto: name = 1, i = 3, type = 20
    a.proto.bytes(1, name).integer(3, value).integer(20,
                                                     static_cast<std::int64_t>(AttributeType::i));
    return a;
  }
  static Attribute integers(std::string_view name, std::span<const std::int64_t> values) {
    Attribute a;  // ints = 8
    a.proto.bytes(1, name);
    for (std::int64_t v : values) a.proto.integer(8, v);
    a.proto.integer(20, static_cast<std::int64_t>(AttributeType::ints));
    return a;
  }
};

/// A dimension of a value's type: a size, or a name (a size chosen when the model runs).
struct Dim {
  std::int64_t size = 0;
  std::string_view symbol;
};

// The graph under construction: nodes, initializers (the parameters), inputs and outputs.
class Graph {
 public:
  explicit Graph(const nn::ParameterStore& parameters) : store_(parameters) {
    const Tensor& values = parameters.values();
    host_values_ = values.device() == Device::cpu ? values : values.clone(Device::cpu);
  }

  /// A node with `op` and a unique name; returns its first output.
  std::string node(std::string_view op, std::initializer_list<std::string_view> inputs,
                   std::initializer_list<std::string_view> outputs,
                   std::initializer_list<Attribute> attributes = {}) {
    Message n;  // NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5
    for (std::string_view in : inputs) n.bytes(1, in);
    for (std::string_view out : outputs) n.bytes(2, out);
    n.bytes(3, str_cat(op, "_", node_count_++)).bytes(4, op);
    for (const Attribute& a : attributes) n.message(5, a.proto);
    graph_.message(1, n);  // GraphProto: node = 1
    return std::string(*outputs.begin());
  }

  /// A node whose single output gets a fresh name.
  std::string apply(std::string_view op, std::initializer_list<std::string_view> inputs,
                    std::initializer_list<Attribute> attributes = {}) {
    const std::string out = str_cat("t", value_count_++);
    return node(op, inputs, {out}, attributes);
  }

  /// apply() with inputs and attributes given as vectors.
  std::string apply_list(std::string_view op, const std::vector<std::string>& inputs,
                         const std::vector<Attribute>& attributes) {
    const std::string out = str_cat("t", value_count_++);
    Message n;  // NodeProto, as node() writes it
    for (const std::string& in : inputs) n.bytes(1, in);
    n.bytes(2, out);
    n.bytes(3, str_cat(op, "_", node_count_++)).bytes(4, op);
    for (const Attribute& a : attributes) n.message(5, a.proto);
    graph_.message(1, n);
    return out;
  }

  /// The parameter `name`, checked against `shape`, as an f32 initializer called `name`.
  std::string parameter(const std::string& name, const Shape& shape) {
    return initializer(name, shape, parameter_values(name, shape));
  }

  /// The values of parameter `name` (host copy), checked against `shape`.
  std::span<const float> parameter_values(const std::string& name, const Shape& shape) const {
    const nn::Parameter* p = nullptr;
    for (const nn::Parameter& candidate : store_.parameters())
      if (candidate.name == name) p = &candidate;
    SEEDRL_REQUIRE(p != nullptr, "export_onnx: the network needs parameter '", name,
                   "', which the parameter store lacks");
    SEEDRL_REQUIRE(p->shape == shape, "export_onnx: parameter '", name, "' is ", p->shape,
                   ", the network needs ", shape);
    return {host_values_.data<float>() + p->offset, static_cast<std::size_t>(shape.numel())};
  }

  std::string initializer(const std::string& name, const Shape& shape,
                          std::span<const float> values) {
    Message t = tensor_header(name, shape, OnnxType::f32);
    std::string raw(values.size() * sizeof(float), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float v = detail::to_little_endian(values[i]);
      std::memcpy(raw.data() + i * sizeof(float), &v, sizeof v);
    }
    t.bytes(9, raw);       // raw_data
    graph_.message(5, t);  // GraphProto: initializer = 5
    return name;
  }

  std::string int64_constant(std::span<const std::int64_t> values) {
    const std::string name = str_cat("c", value_count_++);
    Message t = tensor_header(name, {static_cast<std::int64_t>(values.size())}, OnnxType::i64);
    std::string raw;
    for (std::int64_t v : values) proto::put_fixed<std::int64_t>(raw, v);
    t.bytes(9, raw);
    graph_.message(5, t);
    return name;
  }

  std::string float_scalar(float value) {
    const std::string name = str_cat("c", value_count_++);
    Message t = tensor_header(name, Shape{}, OnnxType::f32);
    std::string raw;
    proto::put_fixed<float>(raw, value);
    t.bytes(9, raw);
    graph_.message(5, t);
    return name;
  }

  void input(std::string_view name, OnnxType type, std::initializer_list<Dim> dims) {
    graph_.message(11, value_info(name, type, dims));  // GraphProto: input = 11
  }
  void input(std::string_view name, OnnxType type, std::vector<Dim> dims) {
    graph_.message(11, value_info(name, type, dims));
  }
  void output(std::string_view name, OnnxType type, std::initializer_list<Dim> dims) {
    graph_.message(12, value_info(name, type, dims));  // GraphProto: output = 12
  }
  void output_dims(std::string_view name, OnnxType type, const std::vector<Dim>& dims) {
    graph_.message(12, value_info(name, type, dims));
  }

  Message finish(std::string_view name, std::string_view doc) {
    graph_.bytes(2, name);                    // GraphProto: name = 2
    if (!doc.empty()) graph_.bytes(10, doc);  // doc_string = 10
    return std::move(graph_);
  }

 private:
  static Message tensor_header(std::string_view name, const Shape& shape, OnnxType type) {
    Message t;  // TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9
    for (std::int64_t d : shape.dims()) t.integer(1, d);
    t.integer(2, static_cast<std::int64_t>(type)).bytes(8, name);
    return t;
  }

  template <class Dims>
  static Message value_info(std::string_view name, OnnxType type, const Dims& dims) {
    Message shape;  // TensorShapeProto: dim = 1; Dimension: dim_value = 1, dim_param = 2
    for (const Dim& d : dims) {
      Message dim;
      if (d.symbol.empty()) {
        dim.integer(1, d.size);
      } else {
        dim.bytes(2, d.symbol);
      }
      shape.message(1, dim);
    }
    Message tensor;  // TypeProto.Tensor: elem_type = 1, shape = 2
    tensor.integer(1, static_cast<std::int64_t>(type)).message(2, shape);
    Message type_proto;  // TypeProto: tensor_type = 1
    type_proto.message(1, tensor);
    Message info;  // ValueInfoProto: name = 1, type = 2
    info.bytes(1, name).message(2, type_proto);
    return info;
  }

  const nn::ParameterStore& store_;
  Tensor host_values_;
  Message graph_;
  int node_count_ = 0, value_count_ = 0;
};

constexpr Dim kBatch{0, "batch"};

}  // namespace seedrl::io::onnx_builder
