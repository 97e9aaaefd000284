// Element-wise loops of the CPU backend (optimizer updates, activation backwards, sums), compiled
// twice on x86-64: for the baseline instruction set the library is built for, and for AVX-512,
// chosen once at run time. The library is portable by default (SEEDRL_NATIVE_ARCH is off), so
// without this its own loops ran on 4-wide SSE while oneDNN's kernels used AVX-512. Private to
// the CPU backend; not installed.
#pragma once

#include <omp.h>

#include <cstdint>
#include <vector>

namespace seedrl::cpu::detail {

/// Activation-sized loops split over a team above this many elements.
constexpr std::int64_t kElementParallelThreshold = 65536;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__AVX512F__)
#define SEEDRL_CPU_DISPATCH_AVX512 1
#define SEEDRL_CPU_AVX512_TARGET \
  __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))

/// True when the CPU (and the OS) run AVX-512 F/VL/BW/DQ.
inline bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  return yes;
}
#endif

// `body` by value: a copy whose address never escapes cannot be changed by the loop's stores
// through its captured pointers, so the captures stay in registers and the loop vectorises.
template <class F>
void index_range(std::int64_t begin, std::int64_t end, F body) {
#pragma omp simd
  for (std::int64_t i = begin; i < end; ++i) body(i);
}

template <class F>
double index_range_sum(std::int64_t begin, std::int64_t end, F term) {
  double total = 0.0;
#pragma omp simd reduction(+ : total)
  for (std::int64_t i = begin; i < end; ++i) total += term(i);
  return total;
}

#ifdef SEEDRL_CPU_DISPATCH_AVX512
template <class F>
SEEDRL_CPU_AVX512_TARGET void index_range_avx512(std::int64_t begin, std::int64_t end, F body) {
#pragma omp simd
  for (std::int64_t i = begin; i < end; ++i) body(i);
}

template <class F>
SEEDRL_CPU_AVX512_TARGET double index_range_sum_avx512(std::int64_t begin, std::int64_t end,
                                                       F term) {
  double total = 0.0;
#pragma omp simd reduction(+ : total)
  for (std::int64_t i = begin; i < end; ++i) total += term(i);
  return total;
}
#endif

template <class F>
void each_index_serial(std::int64_t begin, std::int64_t end, const F& body) {
#ifdef SEEDRL_CPU_DISPATCH_AVX512
  if (has_avx512()) return index_range_avx512(begin, end, body);
#endif
  index_range(begin, end, body);
}

template <class F>
double sum_serial(std::int64_t begin, std::int64_t end, const F& term) {
#ifdef SEEDRL_CPU_DISPATCH_AVX512
  if (has_avx512()) return index_range_sum_avx512(begin, end, term);
#endif
  return index_range_sum(begin, end, term);
}

/// Whether a loop over n elements runs on the calling thread's OpenMP team.
inline bool run_in_parallel(std::int64_t n, std::int64_t threshold) {
  return n > threshold && !omp_in_parallel() && omp_get_max_threads() > 1;
}

/// body(i) for i in [0, n), vectorised, and split over the OpenMP team in contiguous ranges
/// when n passes `threshold`.
template <class F>
void for_each_index(std::int64_t n, std::int64_t threshold, const F& body) {
  if (!run_in_parallel(n, threshold)) return each_index_serial(0, n, body);
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num();
    const std::int64_t k = omp_get_num_threads();
    each_index_serial(n * t / k, n * (t + 1) / k, body);
  }
}

/// The sum of term(i) over [0, n) in double; over a team, the ranges' partial sums are added in
/// range order, so the result does not depend on which thread finished first.
template <class F>
double sum_over_indices(std::int64_t n, std::int64_t threshold, const F& term) {
  if (!run_in_parallel(n, threshold)) return sum_serial(0, n, term);
  std::vector<double> partial(static_cast<std::size_t>(omp_get_max_threads()), 0.0);
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num();
    const std::int64_t k = omp_get_num_threads();
    partial[static_cast<std::size_t>(t)] = sum_serial(n * t / k, n * (t + 1) / k, term);
  }
  double total = 0.0;
  for (const double p : partial) total += p;
  return total;
}

}  // namespace seedrl::cpu::detail
