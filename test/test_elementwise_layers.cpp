#include <doctest/doctest.h>

#include "seedrl/backend/cpu/elementwise_layers.hpp"
#include "support/reference_nn.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_elementwise_layers {

using namespace seedrl;
using namespace seedrl::test;

TEST_CASE("ReLU: forward clamps, backward passes the gradient where the output is positive") {
  cpu::ReLU relu;
  const Tensor x = Tensor::from_values<float>({2, 3}, {-1, 2, 0, 3, -4, 5});
  const Tensor y = relu.forward(x);
  CHECK(to_vec(y) == Vec{0, 2, 0, 3, 0, 5});
  const Tensor g = relu.backward(Tensor::from_values<float>({2, 3}, {1, 1, 1, 1, 1, 1}));
  CHECK(to_vec(g) == Vec{0, 1, 0, 1, 0, 1});
  CHECK_FALSE(
      relu.backward(Tensor::from_values<float>({2, 3}, {1, 1, 1, 1, 1, 1}), false).defined());
  CHECK_THROWS_WITH_AS(relu.backward(Tensor::zeros({3})),
                       doctest::Contains("relu: backward grad_output"), Error);
}

TEST_CASE("Flatten: a view both ways") {
  cpu::Flatten flatten;
  const Tensor x = Tensor::zeros({4, 2, 3, 5});
  const Tensor y = flatten.forward(x);
  CHECK(y.shape() == Shape{4, 30});
  CHECK(y.shares_storage_with(x));
  CHECK(flatten.backward(Tensor::zeros({4, 30})).shape() == Shape{4, 2, 3, 5});
  CHECK_THROWS_AS(flatten.backward(Tensor::zeros({4, 31})), Error);
}

TEST_CASE("Rescale: u8 NCHW pixels to f32 NHWC times a scale, against a naive loop") {
  cpu::Rescale rescale({1.0f / 255.0f, true});
  const Index n = 3, c = 4, h = 5, w = 6;
  Tensor x = Tensor::empty({n, c, h, w}, DType::u8);
  for (Index i = 0; i < x.numel(); ++i)
    x.data<std::uint8_t>()[i] = static_cast<std::uint8_t>((i * 37) % 256);
  const Tensor y = rescale.forward(x);
  CHECK(y.shape() == Shape{n, h, w, c});
  CHECK(y.dtype() == DType::f32);
  double worst = 0.0;
  for (Index b = 0; b < n; ++b)
    for (Index ch = 0; ch < c; ++ch)
      for (Index i = 0; i < h; ++i)
        for (Index j = 0; j < w; ++j) {
          const double expected = x.data<std::uint8_t>()[((b * c + ch) * h + i) * w + j] / 255.0;
          worst =
              std::max(worst, std::abs(y.data<float>()[((b * h + i) * w + j) * c + ch] - expected));
        }
  CHECK(worst < 1e-6);
}

TEST_CASE("Rescale: f32 NHWC with scale 1 passes through; channels-last u8 converts") {
  cpu::Rescale identity({1.0f, false});
  const Tensor x = Tensor::zeros({2, 10, 10, 4});
  CHECK(identity.forward(x).shares_storage_with(x));
  Tensor bits = Tensor::zeros({2, 10, 10, 4}, DType::u8);
  bits.data<std::uint8_t>()[7] = 1;
  const Tensor y = identity.forward(bits);
  CHECK(y.dtype() == DType::f32);
  CHECK(y.data<float>()[7] == 1.0f);
  CHECK(y.flat<float>().sum() == 1.0f);
  CHECK_THROWS_WITH_AS(identity.forward(Tensor::zeros({2, 3})),
                       doctest::Contains("rescale: expected a 4-D image batch"), Error);
  CHECK_THROWS_WITH_AS(cpu::Rescale({0.0f, false}),
                       doctest::Contains("scale must be finite and non-zero"), Error);
}

}  // namespace test_elementwise_layers
