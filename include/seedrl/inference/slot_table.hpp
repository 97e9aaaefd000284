// SlotTable: which connection holds which environment slots of an inference server.
//
//   connect(request)   ──▶ slots [first, first + n) reserved under a new connection id (the
//                          requested range, or the first free one)
//   owns(connection)   ──▶ whether a step may use them (the id must hold every one, with the
//                          evaluation mark it connected with)
//   disconnect(c)      ──▶ frees the slots that id still holds
//
// Connection ids are the table's own (never 0, never reused), so a step cannot claim slots by
// presenting a stale or forged Connection. Not thread-safe: the server guards it with its lock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "seedrl/acting/inference_endpoint.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/status.hpp"

namespace seedrl {

class SlotTable {
 public:
  explicit SlotTable(std::int32_t max_slots)
      : owner_(static_cast<std::size_t>(max_slots), 0),
        evaluation_(static_cast<std::size_t>(max_slots), 0) {
    SEEDRL_REQUIRE(max_slots > 0, "SlotTable: max_slots must be positive, got ", max_slots);
  }

  std::int32_t max_slots() const { return static_cast<std::int32_t>(owner_.size()); }
  /// Slots held by connections.
  std::int64_t occupied() const { return occupied_; }
  /// Slots held by training (not evaluation) connections: those the batcher waits for.
  std::int64_t training_occupied() const { return occupied_ - evaluation_occupied_; }

  /// Reserves request.num_envs slots for a new connection: [request.first_slot, ...) when it is
  /// given (>= 0), else the first free range. invalid_argument for a range outside the table or
  /// a slot in use, unavailable when no free range is long enough.
  Status connect(const ConnectRequest& request, Connection* connection) {
    const std::int32_t n = request.num_envs;
    std::int32_t first = request.first_slot;
    if (first >= 0) {
      if (n < 1 || first + n > max_slots()) {
        return Status::invalid_argument(
            str_cat("slots [", first, ", ", first + n, ") exceed max_slots ", max_slots()));
      }
      for (std::int32_t s = first; s < first + n; ++s) {
        if (owner(s) != 0) return Status::invalid_argument(str_cat("slot ", s, " is in use"));
      }
    } else {
      first = find_free_range(n);
      if (first < 0) {
        return Status::unavailable(str_cat("no ", n, " free slots (max_slots ", max_slots(), ")"));
      }
    }
    const std::uint64_t id = ++last_id_;
    for (std::int32_t s = first; s < first + n; ++s) {
      owner(s) = id;
      evaluation_[static_cast<std::size_t>(s)] = request.evaluation ? 1 : 0;
    }
    occupied_ += n;
    if (request.evaluation) evaluation_occupied_ += n;
    *connection = Connection{first, n, request.run_id, request.evaluation, id};
    return Status::ok();
  }

  /// Whether `c` holds every slot it names, with the evaluation mark it connected with (the
  /// server acts greedily and records nothing for an evaluation slot, and does not wait for it).
  bool owns(const Connection& c) const {
    if (c.id == 0 || c.first_slot < 0 || c.num_envs < 1 || c.first_slot + c.num_envs > max_slots())
      return false;
    const std::uint8_t evaluation = c.evaluation ? 1 : 0;
    for (std::int32_t s = c.first_slot; s < c.first_slot + c.num_envs; ++s) {
      const auto i = static_cast<std::size_t>(s);
      if (owner_[i] != c.id || evaluation_[i] != evaluation) return false;
    }
    return true;
  }

  /// Frees the slots of [c.first_slot, + c.num_envs) that c.id still holds; returns how many.
  std::int32_t disconnect(const Connection& c) {
    std::int32_t freed = 0;
    if (c.id == 0) return freed;
    for (std::int32_t s = std::max(c.first_slot, 0);
         s < std::min(c.first_slot + c.num_envs, max_slots()); ++s) {
      if (owner(s) == c.id) {
        owner(s) = 0;
        ++freed;
        if (evaluation_[static_cast<std::size_t>(s)] != 0) --evaluation_occupied_;
      }
    }
    occupied_ -= freed;
    return freed;
  }

 private:
  std::uint64_t& owner(std::int32_t slot) { return owner_[static_cast<std::size_t>(slot)]; }
  std::uint64_t owner(std::int32_t slot) const { return owner_[static_cast<std::size_t>(slot)]; }

  std::int32_t find_free_range(std::int32_t n) const {
    std::int32_t run = 0;
    for (std::int32_t s = 0; s < max_slots(); ++s) {
      run = owner(s) != 0 ? 0 : run + 1;
      if (run == n) return s - n + 1;
    }
    return -1;
  }

  std::vector<std::uint64_t> owner_;      // connection id holding each slot, 0: free
  std::vector<std::uint8_t> evaluation_;  // 1: the slot's holder connected for evaluation
  std::int64_t occupied_ = 0;
  std::int64_t evaluation_occupied_ = 0;
  std::uint64_t last_id_ = 0;
};

}  // namespace seedrl
