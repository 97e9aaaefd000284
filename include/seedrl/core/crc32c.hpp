// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78): the checksum of TFRecord
// files (TensorBoard events) and of seedrl's own files (the tensors and header of a checkpoint,
// io/safetensors.hpp). On x86-64 CPUs with SSE 4.2 the CPU's crc32 instruction computes it
// (chosen at run time, several GB/s); elsewhere a slicing-by-8 table does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace seedrl {

/// CRC-32C of `size` bytes, continuing from `crc` (0 to start): crc32c(ab) equals
/// crc32c(b, crc32c(a)). crc32c("123456789") = 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0);
inline std::uint32_t crc32c(std::string_view bytes, std::uint32_t crc = 0) {
  return crc32c(bytes.data(), bytes.size(), crc);
}

namespace detail {
/// The table-driven computation alone (what crc32c() uses without SSE 4.2), for tests.
std::uint32_t crc32c_portable(const void* data, std::size_t size, std::uint32_t crc = 0);
}  // namespace detail

}  // namespace seedrl
