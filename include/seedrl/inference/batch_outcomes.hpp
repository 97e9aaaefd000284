// BatchOutcomes: how each request of an inference batch is answered, when a failure belongs to
// some of them and not to the rest (RequestBatcher::Process's outcomes). A batch's rows are its
// requests' environments side by side; a failure met on some rows (an opponent set that cannot
// act, an unroll that cannot take a step) fails the requests those rows belong to, and only them.
//
//   outcomes.begin(batch, answers);          // row -> request, every answer ok
//   outcomes.fail_rows(rows, status);        // the requests of those rows fail with `status`
//   if (outcomes.failed(i)) skip request i;  // scatter and record pass over it
//
// Not thread-safe: the inference thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/core/status.hpp"

namespace seedrl {

class BatchOutcomes {
 public:
  /// A new batch: every request's answer ok, each row mapped to its request.
  void begin(std::span<StepRequest* const> batch, std::span<Status> answers) {
    answers_ = answers;
    request_of_row_.clear();
    for (std::size_t i = 0; i < batch.size(); ++i)
      request_of_row_.insert(request_of_row_.end(),
                             static_cast<std::size_t>(batch[i]->connection.num_envs), i);
    failed_.clear();
  }

  /// Request `i` fails with `status` (its first failure is what it is told).
  void fail(std::size_t i, const Status& status) {
    if (!answers_[i].is_ok()) return;
    answers_[i] = status;
    failed_.push_back(i);
  }
  /// The requests of `rows` fail with `status`.
  void fail_rows(std::span<const std::size_t> rows, const Status& status) {
    for (const std::size_t row : rows) fail(request_of_row_[row], status);
  }
  bool failed(std::size_t i) const { return !failed_.empty() && !answers_[i].is_ok(); }
  /// The requests that failed, in the order they did.
  std::span<const std::size_t> failed_requests() const { return failed_; }
  std::size_t request_of(std::size_t row) const { return request_of_row_[row]; }

 private:
  std::span<Status> answers_;
  std::vector<std::size_t> request_of_row_;
  std::vector<std::size_t> failed_;
};

}  // namespace seedrl
