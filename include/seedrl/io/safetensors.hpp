// The safetensors file format (huggingface/safetensors), so Python tools read seedrl's files:
//
//   u64 little-endian N | N bytes of JSON header | raw little-endian tensor data
//   header: {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//            "__metadata__": {"key": "value", ...}}      offsets are relative to the data
//
// Reading validates everything against the file's size (header length, offsets, sizes, dtypes,
// overlaps; a name twice in the header or its metadata is refused, as Python's safetensors
// refuses it) and throws seedrl::Error naming the file and the problem: a corrupt or hostile file
// never causes an out-of-bounds read.
//
// Checksums: seedrl writes a CRC-32C (core/crc32c.hpp) of every tensor's bytes into the metadata,
// as "crc32c/<tensor name>" (8 lowercase hex digits), and one of the header as "crc32c", over
// every tensor's name, dtype, shape and offsets and every other metadata entry (checksum_text()
// gives the exact bytes). Reading a file that has them verifies
// them all, so a byte changed anywhere in the file is refused by name; a file without any (one
// written before seedrl recorded them, or by another tool) still reads, and checksummed() says so.
#pragma once

#include <functional>
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

/// The metadata key of the header's checksum; "crc32c/<tensor name>" holds each tensor's. Callers'
/// metadata keys may not start with it.
inline constexpr std::string_view kChecksumKey = "crc32c";

/// The bytes of a safetensors file holding `tensors` (names unique, not "__metadata__"), with
/// their checksums.
std::string encode_safetensors(std::span<const NamedTensor> tensors, const Metadata& metadata = {});

/// encode_safetensors() written to `path` atomically (temporary file, flush, rename;
/// `before_replace` as write_file_atomically, core/atomic_file.hpp, runs it).
void write_safetensors(const std::string& path, std::span<const NamedTensor> tensors,
                       const Metadata& metadata = {},
                       const std::function<void()>& before_replace = {});

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
  /// The metadata of the file at `path`, from its header alone (not verified against the data:
  /// for deciding what to do with a file, never for loading it).
  static Metadata read_metadata(const std::string& path);

  const std::string& source() const { return source_; }
  const Metadata& metadata() const { return metadata_; }
  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* find(std::string_view name) const;
  /// Whether the file carries checksums (then every one of them was verified by read/parse).
  bool checksummed() const { return checksummed_; }
  /// The index of the first element of F32 tensor `name` that is not finite; -1 where all are
  /// (and for other dtypes).
  std::int64_t first_non_finite(std::string_view name) const;

  /// Copies tensor `name` into `destination` (CPU), which must have the file's dtype and shape;
  /// otherwise throws naming the file, the tensor and both shapes.
  void copy_to(std::string_view name, const Tensor& destination) const;
  /// A new CPU tensor holding a copy of `name`.
  Tensor tensor(std::string_view name) const;

 private:
  const Entry& require(std::string_view name) const;
  std::string_view data_of(const Entry& e) const {
    return std::string_view(bytes_).substr(data_offset_ + e.begin, e.end - e.begin);
  }
  void verify_checksums();

  std::string source_;
  std::string bytes_;
  std::size_t data_offset_ = 0;
  Metadata metadata_;
  std::vector<Entry> entries_;
  bool checksummed_ = false;
};

/// What the header's checksum (metadata "crc32c") is the CRC-32C of: each tensor's name, dtype,
/// shape and data offsets, then each metadata entry but that key, in name order, every field
/// length-prefixed.
std::string checksum_text(const std::vector<SafetensorsFile::Entry>& entries,
                          const Metadata& metadata);

}  // namespace seedrl::io
