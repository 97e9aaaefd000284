// The CUDA runtime on any machine: without a GPU every entry point fails cleanly with a message
// (never a crash); with one, memory, copies, the caching allocator and events work.
#include <doctest/doctest.h>

#include <string>

#include "seedrl/backend/cuda/backend.hpp"

using namespace seedrl;

TEST_CASE("Without a GPU: clear errors, no crash") {
  if (cuda::available()) return;  // covered by the GPU cases below
  CHECK(cuda::device_count() == 0);
  CHECK_FALSE(cuda::unavailable_reason().empty());
  CHECK_THROWS_AS(cuda::set_device(0), Error);
  CHECK_THROWS_WITH_AS(cuda::device_info(), doctest::Contains("does not exist"), Error);
  // Allocation reaches the CUDA runtime, which reports the missing device.
  CHECK_THROWS_WITH_AS(Tensor::zeros({4}, DType::f32, Device::cuda), doctest::Contains("CUDA"),
                       Error);
  nn::ParameterStore store(Device::cuda);
  cuda::Linear layer(store, "fc", {3, 2});  // declaring parameters touches no device
  CHECK_THROWS_AS(store.finalize(0), Error);
}

TEST_CASE("The convolution algorithm setting refuses a negative count, on any machine") {
  const int uses = cuda::conv_measure_after();
  CHECK(uses == 8);  // the default
  CHECK_THROWS_WITH_AS(cuda::set_conv_measure_after(-1),
                       doctest::Contains("set_conv_measure_after: uses must be >= 0"), Error);
  CHECK(cuda::conv_measure_after() == uses);
  cuda::set_conv_measure_after(0);
  CHECK(cuda::conv_measure_after() == 0);
  cuda::set_conv_measure_after(uses);
}

TEST_CASE("With a GPU: copies, the caching allocator, events, device facts") {
  if (!cuda::available()) {
    MESSAGE("no CUDA device: ", cuda::unavailable_reason());
    return;
  }
  const cuda::DeviceInfo info = cuda::device_info();
  CHECK_FALSE(info.name.empty());
  CHECK(info.compute_major >= 7);
  CHECK(info.total_memory > 0);
  MESSAGE(info.describe());

  const Tensor host = Tensor::from_values<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor device = host.clone(Device::cuda);
  CHECK(device.device() == Device::cuda);
  const Tensor back = device[1].clone(Device::cpu);
  CHECK(back.data<float>()[0] == 4.0f);
  CHECK(back.data<float>()[2] == 6.0f);
  Tensor zeros = Tensor::zeros({5}, DType::f32, Device::cuda);
  CHECK(zeros.clone(Device::cpu).data<float>()[4] == 0.0f);

  cuda::empty_cache();
  const cuda::MemoryStats before = cuda::memory_stats();
  { const Tensor a = Tensor::empty({1 << 20}, DType::f32, Device::cuda); }
  { const Tensor b = Tensor::empty({1 << 20}, DType::f32, Device::cuda); }
  const cuda::MemoryStats after = cuda::memory_stats();
  CHECK(after.device_allocations == before.device_allocations + 1);  // the second reuses the first
  CHECK(after.cache_hits == before.cache_hits + 1);
  CHECK(after.cached_bytes >= (std::size_t{4} << 20));
  cuda::empty_cache();
  CHECK(cuda::memory_stats().cached_bytes == 0);

  cuda::Event start, stop;
  start.record();
  const Tensor big = Tensor::zeros({1 << 22}, DType::f32, Device::cuda);
  cuda::Backend::scale(big, 2.0f);
  stop.record();
  CHECK(stop.elapsed_ms(start) >= 0.0);
  cuda::Event never;
  CHECK_THROWS_AS(never.synchronize(), Error);
}
