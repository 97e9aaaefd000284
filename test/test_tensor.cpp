#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/tensor.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_tensor {

using seedrl::DType;
using seedrl::Error;
using seedrl::Shape;
using seedrl::Tensor;

TEST_CASE("Shape: rank, numel, drop_front, prepend, printing") {
  const Shape s{2, 3, 4};
  CHECK(s.rank() == 3);
  CHECK(s.numel() == 24);
  CHECK(s.drop_front() == Shape{3, 4});
  CHECK(s.drop_front(3) == Shape{});
  CHECK(Shape{}.numel() == 1);
  CHECK(Shape{4}.prepend({20, 32}) == Shape{20, 32, 4});
  CHECK(s.to_string() == "[2, 3, 4]");
  CHECK_THROWS_AS(Shape({1, 2, 3, 4, 5, 6, 7}), Error);
  CHECK_THROWS_WITH_AS(Shape({2, -1}), doctest::Contains("negative dimension -1"), Error);
  CHECK_THROWS_WITH_AS(s[3], doctest::Contains("axis 3 out of range"), Error);
}

TEST_CASE("Tensor: storage is zeroed and 64-byte aligned for every dtype") {
  for (DType dtype : {DType::f32, DType::u8, DType::i32}) {
    const Tensor t = Tensor::empty({3, 5}, dtype);
    CHECK(t.defined());
    CHECK(t.bytes() == 15 * seedrl::size_of(dtype));
    CHECK(reinterpret_cast<std::uintptr_t>(t.raw_data()) % 64 == 0);
    const auto* bytes = static_cast<const std::uint8_t*>(t.raw_data());
    for (std::size_t i = 0; i < t.bytes(); ++i) REQUIRE(bytes[i] == 0);
  }
}

TEST_CASE("Tensor: a time step of a [T, B, ...] batch is a view, not a copy") {
  Tensor batch = Tensor::empty({4, 3, 2});  // T = 4, B = 3, 2 features
  for (int i = 0; i < 24; ++i) batch.data<float>()[i] = static_cast<float>(i);
  const Tensor step2 = batch[2];
  CHECK(step2.shape() == Shape{3, 2});
  CHECK(step2.shares_storage_with(batch));
  CHECK(step2.data<float>() == batch.data<float>() + 12);
  CHECK(step2.data<float>()[0] == 12.0f);
  // Writing through the view is visible in the batch.
  step2.data<float>()[1] = -1.0f;
  CHECK(batch.data<float>()[13] == -1.0f);
  // A column of one time step.
  CHECK(batch[3][1].shape() == Shape{2});
  CHECK(batch[3][1].data<float>()[0] == 20.0f);
}

TEST_CASE("Tensor: row_data is the address operator[] views, checked like it") {
  Tensor batch = Tensor::empty({4, 3, 2});
  for (int i = 0; i < 24; ++i) batch.data<float>()[i] = static_cast<float>(i);
  CHECK(batch.row_bytes() == 6 * sizeof(float));
  for (std::int64_t t = 0; t < 4; ++t) {
    CHECK(batch.row_data(t) == batch[t].raw_data());
    CHECK(batch.row_data<float>(t) == batch[t].data<float>());
    CHECK(batch.row_data<float>(t)[0] == static_cast<float>(6 * t));
  }
  const Tensor step = batch[2];  // a view's rows are its own
  CHECK(step.row_data<float>(1)[0] == 14.0f);
  CHECK_THROWS_WITH_AS(batch.row_data(4), doctest::Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(batch.row_data(-1), doctest::Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(batch.row_data<std::int32_t>(0), doctest::Contains("elements are"), Error);
}

TEST_CASE("Tensor: slice, reshape, clone and copy_from") {
  Tensor t = Tensor::from_values<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor rows = t.slice(1, 3);
  CHECK(rows.shape() == Shape{2, 2});
  CHECK(rows.data<float>()[0] == 3.0f);
  const Tensor flat = t.reshape({6});
  CHECK(flat.shares_storage_with(t));
  CHECK(flat.flat<float>().sum() == doctest::Approx(21.0));

  const Tensor copy = t.clone();
  CHECK_FALSE(copy.shares_storage_with(t));
  copy.data<float>()[0] = 100.0f;
  CHECK(t.data<float>()[0] == 1.0f);
  t.copy_from(copy);
  CHECK(t.data<float>()[0] == 100.0f);
  t.fill_zero();
  CHECK(t.flat<float>().abs().sum() == 0.0f);
}

TEST_CASE("Tensor: Eigen maps see the same elements, row-major") {
  Tensor t = Tensor::from_values<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto m = t.matrix<float>();
  CHECK(m.rows() == 2);
  CHECK(m.cols() == 3);
  CHECK(m(1, 0) == 4.0f);
  m(0, 2) = 30.0f;
  CHECK(t.data<float>()[2] == 30.0f);
  // A rank-3 tensor is seen as [dim 0, rest].
  const Tensor cube = Tensor::zeros({2, 3, 4});
  CHECK(cube.matrix<float>().cols() == 12);
  t.flat<float>() *= 2.0f;
  CHECK(t.data<float>()[0] == 2.0f);
}

TEST_CASE("Tensor: bad shapes and types throw seedrl::Error naming the mismatch") {
  const Tensor t = Tensor::zeros({2, 3});
  CHECK_THROWS_WITH_AS(t.reshape({4, 2}),
                       doctest::Contains("cannot view [2, 3] (6 elements) as [4, 2]"), Error);
  CHECK_THROWS_WITH_AS(t.data<std::uint8_t>(), doctest::Contains("elements are f32, requested u8"),
                       Error);
  CHECK_THROWS_WITH_AS(t[2], doctest::Contains("rows [2, 3) out of range for shape [2, 3]"), Error);
  CHECK_THROWS_WITH_AS(t.slice(1, 0), doctest::Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(Tensor().raw_data(), doctest::Contains("undefined tensor"), Error);
  CHECK_THROWS_WITH_AS(Tensor::zeros({3, 2}).copy_from(t), doctest::Contains("source is f32[2, 3]"),
                       Error);
  CHECK_THROWS_WITH_AS(seedrl::require_tensor(t, {3, 2}, DType::f32, "my_layer: input"),
                       doctest::Contains("my_layer: input: expected f32[3, 2], got f32[2, 3]"),
                       Error);
  CHECK_THROWS_WITH_AS(Tensor::from_values<float>({2}, {1, 2, 3}),
                       doctest::Contains("3 values for shape [2]"), Error);
}

TEST_CASE("Tensor: from_blob borrows caller memory") {
  float data[4] = {1, 2, 3, 4};
  const Tensor t = Tensor::from_blob(data, {2, 2}, DType::f32);
  t.data<float>()[3] = 40.0f;
  CHECK(data[3] == 40.0f);
}

TEST_CASE("Tensor: device tensors need a registered runtime") {
  CHECK_THROWS_WITH_AS(Tensor::empty({4}, DType::f32, seedrl::Device::cuda),
                       doctest::Contains("no runtime for device 'cuda'"), Error);
}

TEST_CASE("ScratchBuffer: reuses storage and grows only when needed") {
  seedrl::ScratchBuffer buffer;
  const Tensor a = buffer.view({4, 8});
  const Tensor b = buffer.view({2, 8});
  CHECK(b.shares_storage_with(a));
  const Tensor c = buffer.view({16, 8});
  CHECK_FALSE(c.shares_storage_with(a));
  CHECK(a.defined());  // old views keep their storage alive
  CHECK(buffer.view({1}, DType::u8).dtype() == DType::u8);
}

}  // namespace test_tensor
