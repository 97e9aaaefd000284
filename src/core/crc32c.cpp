#include "seedrl/core/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace seedrl {

namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78u;

// Slicing-by-8 tables: table[0] is the classic byte table, table[k][b] advances byte b by k
// further zero bytes.
struct Tables {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (std::uint32_t b = 0; b < 256; ++b) {
      std::uint32_t c = b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? kReflectedPolynomial : 0u);
      t[0][b] = c;
    }
    for (std::uint32_t b = 0; b < 256; ++b)
      for (std::size_t k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  }
};
constexpr Tables kTables;

std::uint32_t crc32c_table(const unsigned char* p, std::size_t n, std::uint32_t c) {
  const auto& t = kTables.t;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian host (seedrl's files are little-endian too)
    word ^= c;
    c = t[7][word & 0xFF] ^ t[6][(word >> 8) & 0xFF] ^ t[5][(word >> 16) & 0xFF] ^
        t[4][(word >> 24) & 0xFF] ^ t[3][(word >> 32) & 0xFF] ^ t[2][(word >> 40) & 0xFF] ^
        t[1][(word >> 48) & 0xFF] ^ t[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFFu];
  return c;
}

#if defined(__x86_64__)
[[gnu::target("sse4.2")]] std::uint32_t crc32c_sse42(const unsigned char* p, std::size_t n,
                                                     std::uint32_t c) {
  std::uint64_t c64 = c;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = _mm_crc32_u64(c64, word);
    p += 8;
    n -= 8;
  }
  c = static_cast<std::uint32_t>(c64);
  while (n-- > 0) c = _mm_crc32_u8(c, *p++);
  return c;
}

bool has_sse42() {
  static const bool supported = __builtin_cpu_supports("sse4.2");
  return supported;
}
#endif

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
#if defined(__x86_64__)
  if (has_sse42()) return ~crc32c_sse42(p, size, c);
#endif
  return ~crc32c_table(p, size, c);
}

std::uint32_t detail::crc32c_portable(const void* data, std::size_t size, std::uint32_t crc) {
  return ~crc32c_table(static_cast<const unsigned char*>(data), size, ~crc);
}

}  // namespace seedrl
