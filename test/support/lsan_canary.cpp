// A program that leaks, on purpose, from seedrl-owned code: under AddressSanitizer with
// test/lsan.supp, LeakSanitizer must still report it (test lsan_suppressions_keep_own_leaks).
// It guards the suppressions file against an entry broad enough to hide seedrl's own leaks.
#include <cstdio>

#include "seedrl/core/tensor.hpp"

namespace {

// Not inlined, so that the report's stack names this function.
[[gnu::noinline]] void seedrl_leaks_a_tensor() {
  auto* leaked = new seedrl::Tensor(seedrl::Tensor::zeros({64}, seedrl::DType::f32));
  // Drop the only pointer: nothing reachable refers to the block any more.
  std::printf("lsan_canary: leaked a tensor of %lld elements\n",
              static_cast<long long>(leaked->numel()));
  leaked = nullptr;
}

}  // namespace

int main() {
  seedrl_leaks_a_tensor();
  return 0;
}
