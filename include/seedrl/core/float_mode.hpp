// Flushing denormal floats to zero, per thread.
//
// Denormal (subnormal) floats, magnitudes below about 1.2e-38, take a microcode path on x86 that
// costs tens to hundreds of cycles per operation. Training makes them routinely: Adam's and
// RMSProp's moment estimates decay geometrically toward zero for every parameter whose gradient
// is zero (the weights of a ReLU unit that never fires), and small activations and gradients
// underflow; flushing them made MinAtar V-trace with Adam three times faster (docs/performance.md,
// "MinAtar: V-trace and R2D2").
// The values involved are 2^-126 or smaller, far below anything that changes a parameter.
//
// The mode is a property of each thread (x86: the MXCSR FTZ and DAZ bits; AArch64: FPCR.FZ).
// A thread created afterwards inherits its creator's mode (POSIX), so a thread that sets it
// before it starts an OpenMP team or a std::thread passes it on; cpu::set_num_threads also copies
// the calling thread's mode to its OpenMP team. The runtime's inference and learner threads set
// it by default (InferenceServerOptions::flush_denormals, TrainingSessionOptions::flush_denormals).
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64) || defined(__SSE__)
#include <xmmintrin.h>
#define SEEDRL_FLOAT_MODE_X86 1
#elif defined(__aarch64__)
#define SEEDRL_FLOAT_MODE_AARCH64 1
#endif

namespace seedrl {

namespace detail {
#if defined(SEEDRL_FLOAT_MODE_X86)
inline constexpr unsigned kMxcsrFlushToZero = 0x8000u;       // FTZ: denormal results become 0
inline constexpr unsigned kMxcsrDenormalsAreZero = 0x0040u;  // DAZ: denormal inputs read as 0
inline constexpr unsigned kMxcsrDenormalBits = kMxcsrFlushToZero | kMxcsrDenormalsAreZero;
#elif defined(SEEDRL_FLOAT_MODE_AARCH64)
inline constexpr std::uint64_t kFpcrFlushToZero = std::uint64_t{1} << 24;  // FPCR.FZ
inline std::uint64_t read_fpcr() noexcept {
  std::uint64_t value;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(value));
  return value;
}
inline void write_fpcr(std::uint64_t value) noexcept {
  __asm__ __volatile__("msr fpcr, %0" : : "r"(value));
}
#endif
}  // namespace detail

/// Whether this CPU architecture has a flush-denormals mode seedrl can set.
inline constexpr bool kCanFlushDenormals =
#if defined(SEEDRL_FLOAT_MODE_X86) || defined(SEEDRL_FLOAT_MODE_AARCH64)
    true;
#else
    false;
#endif

/// Makes the calling thread's float arithmetic flush denormal results to zero and read denormal
/// inputs as zero (`on`), or restores IEEE gradual underflow (`!on`). Returns false, changing
/// nothing, where the architecture has no such mode (kCanFlushDenormals).
inline bool set_flush_denormals(bool on) noexcept {
#if defined(SEEDRL_FLOAT_MODE_X86)
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | detail::kMxcsrDenormalBits) : (csr & ~detail::kMxcsrDenormalBits));
  return true;
#elif defined(SEEDRL_FLOAT_MODE_AARCH64)
  const std::uint64_t fpcr = detail::read_fpcr();
  detail::write_fpcr(on ? (fpcr | detail::kFpcrFlushToZero) : (fpcr & ~detail::kFpcrFlushToZero));
  return true;
#else
  (void)on;
  return false;
#endif
}

/// Whether the calling thread flushes denormals (set_flush_denormals(true) is in effect).
inline bool flush_denormals_enabled() noexcept {
#if defined(SEEDRL_FLOAT_MODE_X86)
  return (_mm_getcsr() & detail::kMxcsrDenormalBits) == detail::kMxcsrDenormalBits;
#elif defined(SEEDRL_FLOAT_MODE_AARCH64)
  return (detail::read_fpcr() & detail::kFpcrFlushToZero) != 0;
#else
  return false;
#endif
}

}  // namespace seedrl
