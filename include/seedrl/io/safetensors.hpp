// The safetensors file format (huggingface/safetensors), so Python tools read seedrl's files:
//
//   u64 little-endian N | N bytes of JSON header | raw little-endian tensor data
//   header: {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//            "__metadata__": {"key": "value", ...}}      offsets are relative to the data
//
// Reading validates everything against the file's size (header length, offsets, sizes, dtypes,
// overlaps) and throws seedrl::Error naming the file and the problem: a corrupt or hostile file
// never causes an out-of-bounds read.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/tensor.hpp"

namespace seedrl::io {

struct NamedTensor {
  std::string name;
  Tensor tensor;  ///< on the CPU
};

using Metadata = std::map<std::string, std::string>;

/// The safetensors dtype name of a seedrl dtype ("F32", "U8", "I32").
std::string_view safetensors_dtype(DType dtype);

/// The bytes of a safetensors file holding `tensors` (names unique, not "__metadata__").
std::string encode_safetensors(std::span<const NamedTensor> tensors, const Metadata& metadata = {});

/// encode_safetensors() written to `path` atomically (temporary file, flush, rename).
void write_safetensors(const std::string& path, std::span<const NamedTensor> tensors,
                       const Metadata& metadata = {});

class SafetensorsFile {
 public:
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    std::size_t begin = 0, end = 0;  ///< byte range within the data section
  };

  /// Reads and validates a whole file.
  static SafetensorsFile read(const std::string& path);
  /// Validates bytes already in memory; `source` names them in errors.
  static SafetensorsFile parse(std::string bytes, std::string source);

  const std::string& source() const { return source_; }
  const Metadata& metadata() const { return metadata_; }
  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* find(std::string_view name) const;

  /// Copies tensor `name` into `destination` (CPU), which must have the file's dtype and shape;
  /// otherwise throws naming the file, the tensor and both shapes.
  void copy_to(std::string_view name, const Tensor& destination) const;
  /// A new CPU tensor holding a copy of `name`.
  Tensor tensor(std::string_view name) const;

 private:
  const Entry& require(std::string_view name) const;

  std::string source_;
  std::string bytes_;
  std::size_t data_offset_ = 0;
  Metadata metadata_;
  std::vector<Entry> entries_;
};

}  // namespace seedrl::io
