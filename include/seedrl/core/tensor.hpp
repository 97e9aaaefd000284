// Tensor: a shaped, typed, reference-counted view of Storage.
//
// Tensors are always contiguous and row-major. Views share storage: t[i] and t.slice(a, b) select
// along the first dimension without copying, so a time step of a [T, B, ...] batch is t[step],
// and reshape() reinterprets the same elements. Copying a Tensor copies the handle, not the
// elements (use clone() or copy_from() for that). On the CPU, flat() and matrix() give Eigen maps
// for element-wise math.
//
// Thread-safety: a Tensor handle may be copied and read from several threads; writing the
// elements concurrently with any other access is the caller's race to avoid.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "seedrl/core/dtype.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/shape.hpp"
#include "seedrl/core/storage.hpp"

namespace seedrl {

/// Row-major dynamic matrix, the layout of every tensor's [rows, cols] view.
template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixXf = RowMatrix<float>;

class Tensor {
 public:
  /// An undefined tensor: holds nothing; defined() is false. Used for "not given".
  Tensor() = default;

  /// A new zero-filled tensor on `device`.
  static Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu) {
    const auto bytes = static_cast<std::size_t>(shape.numel()) * size_of(dtype);
    return Tensor(Storage::allocate(bytes, device), 0, shape, dtype);
  }
  /// A new zero-filled host tensor in memory page-locked for `accelerator` (faster copies to
  /// and from it); an ordinary host tensor when `accelerator` is the CPU.
  static Tensor empty_pinned(const Shape& shape, DType dtype, Device accelerator) {
    const auto bytes = static_cast<std::size_t>(shape.numel()) * size_of(dtype);
    return Tensor(Storage::allocate_pinned(bytes, accelerator), 0, shape, dtype);
  }
  /// Same as empty(): storage is always zero-initialised.
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu) {
    return empty(shape, dtype, device);
  }

  /// A tensor over memory the caller owns; the caller keeps it alive while the tensor is used.
  static Tensor from_blob(void* data, const Shape& shape, DType dtype,
                          Device device = Device::cpu) {
    const auto bytes = static_cast<std::size_t>(shape.numel()) * size_of(dtype);
    return Tensor(Storage::borrow(data, bytes, device), 0, shape, dtype);
  }

  /// A new CPU tensor holding a copy of `values` (shape.numel() of them).
  template <class T>
  static Tensor from_values(const Shape& shape, std::span<const T> values) {
    SEEDRL_REQUIRE(static_cast<std::int64_t>(values.size()) == shape.numel(),
                   "Tensor::from_values: ", values.size(), " values for shape ", shape, " (",
                   shape.numel(), " elements)");
    Tensor t = empty(shape, dtype_of<T>());
    if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(T));
    return t;
  }
  template <class T>
  static Tensor from_values(const Shape& shape, std::initializer_list<T> values) {
    return from_values<T>(shape, std::span<const T>(values.begin(), values.size()));
  }

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  std::int64_t dim(int axis) const { return shape_[axis]; }
  std::int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu; }
  /// Bytes of its elements; 0 for an undefined tensor (whose rank-0 shape counts one element).
  std::size_t bytes() const {
    return defined() ? static_cast<std::size_t>(numel()) * size_of(dtype_) : 0;
  }

  /// Address of the first element (any device).
  void* raw_data() const {
    SEEDRL_REQUIRE(defined(), "Tensor: use of an undefined tensor");
    return static_cast<char*>(storage_->data()) + offset_;
  }

  /// Typed pointer to the first element of a CPU tensor; checks the element type.
  template <class T>
  T* data() const {
    SEEDRL_REQUIRE(dtype_ == dtype_of<T>(), "Tensor: elements are ", dtype_, ", requested ",
                   dtype_of<T>());
    SEEDRL_REQUIRE(device() == Device::cpu, "Tensor: host access to a tensor on ", device());
    return static_cast<T*>(raw_data());
  }

  /// Address of row `index` along the first dimension (what operator[] views), without making a
  /// view (no reference count touched): for per-row copies on hot paths.
  void* row_data(std::int64_t index) const {
    check_row_range(index, index + 1, "row_data");
    return static_cast<char*>(raw_data()) + static_cast<std::size_t>(index) * row_bytes();
  }
  /// Typed row_data of a CPU tensor; checks the element type.
  template <class T>
  T* row_data(std::int64_t index) const {
    check_row_range(index, index + 1, "row_data");
    return data<T>() + index * (numel() / dim(0));
  }
  /// Bytes of one row along the first dimension.
  std::size_t row_bytes() const {
    return static_cast<std::size_t>(shape_.drop_front().numel()) * size_of(dtype_);
  }

  /// The `index`-th slice along the first dimension, a view with the remaining dimensions.
  Tensor operator[](std::int64_t index) const {
    check_row_range(index, index + 1, "operator[]");
    return Tensor(storage_, offset_ + static_cast<std::size_t>(index) * row_bytes(),
                  shape_.drop_front(), dtype_);
  }

  /// Rows [begin, end) along the first dimension, a view.
  Tensor slice(std::int64_t begin, std::int64_t end) const {
    check_row_range(begin, end, "slice");
    auto dims = std::vector<std::int64_t>(shape_.dims().begin(), shape_.dims().end());
    dims[0] = end - begin;
    return Tensor(storage_, offset_ + static_cast<std::size_t>(begin) * row_bytes(), Shape(dims),
                  dtype_);
  }

  /// The same elements seen with another shape of the same number of elements.
  Tensor reshape(const Shape& shape) const {
    SEEDRL_REQUIRE(defined(), "Tensor::reshape: undefined tensor");
    SEEDRL_REQUIRE(shape.numel() == numel(), "Tensor::reshape: cannot view ", shape_, " (", numel(),
                   " elements) as ", shape, " (", shape.numel(), " elements)");
    return Tensor(storage_, offset_, shape, dtype_);
  }

  /// The elements as a flat Eigen array (CPU).
  template <class T>
  Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> flat() const {
    return {data<T>(), static_cast<Eigen::Index>(numel())};
  }

  /// The elements as a row-major matrix [dim(0), product of the other dims] (CPU).
  /// A rank-1 tensor is seen as one row.
  template <class T>
  Eigen::Map<RowMatrix<T>> matrix() const {
    SEEDRL_REQUIRE(rank() >= 1, "Tensor::matrix: needs rank >= 1, got ", shape_);
    const std::int64_t rows = rank() == 1 ? 1 : dim(0);
    const std::int64_t cols = rows == 0 ? 0 : numel() / rows;
    return {data<T>(), static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols)};
  }

  /// Copies the elements of `src` (same shape and dtype) into this tensor, across devices too.
  void copy_from(const Tensor& src) const {
    SEEDRL_REQUIRE(defined() && src.defined(), "Tensor::copy_from: undefined tensor");
    SEEDRL_REQUIRE(src.shape() == shape_ && src.dtype() == dtype_, "Tensor::copy_from: source is ",
                   src.dtype(), src.shape(), ", destination is ", dtype_, shape_);
    if (bytes() == 0 || raw_data() == src.raw_data()) return;
    if (device() == Device::cpu && src.device() == Device::cpu) {
      std::memmove(raw_data(), src.raw_data(), bytes());
    } else {
      const Device other = device() == Device::cpu ? src.device() : device();
      device_runtime(other).copy(raw_data(), device(), src.raw_data(), src.device(), bytes());
    }
  }

  /// Sets every element to zero.
  void fill_zero() const {
    if (bytes() == 0) return;
    if (device() == Device::cpu) {
      std::memset(raw_data(), 0, bytes());
    } else {
      device_runtime(device()).fill_zero(raw_data(), bytes());
    }
  }

  /// A new tensor with a copy of the elements, on `device`.
  Tensor clone(Device device) const {
    Tensor copy = empty(shape_, dtype_, device);
    copy.copy_from(*this);
    return copy;
  }
  Tensor clone() const { return clone(device()); }

  /// Whether this tensor is the only one viewing its storage (no copy, slice or view of it is
  /// alive), so the buffer can be reused in place.
  bool sole_view() const {
    if (storage_ == nullptr || storage_.use_count() != 1) return false;
    // Whatever the last other owner did with the buffer happened before it let go of it.
    std::atomic_thread_fence(std::memory_order_acquire);
    return true;
  }
  /// True when both tensors view the same storage block.
  bool shares_storage_with(const Tensor& other) const {
    return storage_ != nullptr && storage_ == other.storage_;
  }

 private:
  Tensor(std::shared_ptr<Storage> storage, std::size_t offset, const Shape& shape, DType dtype)
      : storage_(std::move(storage)), offset_(offset), shape_(shape), dtype_(dtype) {}

  void check_row_range(std::int64_t begin, std::int64_t end, const char* what) const {
    SEEDRL_REQUIRE(defined(), "Tensor::", what, ": undefined tensor");
    SEEDRL_REQUIRE(rank() >= 1, "Tensor::", what, ": scalar tensor has no rows");
    SEEDRL_REQUIRE(0 <= begin && begin <= end && end <= dim(0), "Tensor::", what, ": rows [", begin,
                   ", ", end, ") out of range for shape ", shape_);
  }

  std::shared_ptr<Storage> storage_;
  std::size_t offset_ = 0;  // bytes from the start of storage_
  Shape shape_;
  DType dtype_ = DType::f32;
};

/// Throws seedrl::Error unless `t` is a defined tensor of `shape` and `dtype`; the message starts
/// with the concatenation of `context` (built only on failure).
template <class... Context>
void require_tensor(const Tensor& t, const Shape& shape, DType dtype, const Context&... context) {
  SEEDRL_REQUIRE(t.defined(), context..., ": tensor not given (expected ", dtype, shape, ")");
  SEEDRL_REQUIRE(t.shape() == shape && t.dtype() == dtype, context..., ": expected ", dtype, shape,
                 ", got ", t.dtype(), t.shape());
}

}  // namespace seedrl
