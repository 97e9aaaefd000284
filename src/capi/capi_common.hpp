// What the C ABI's entry points share (src/capi/): the thread's last error, the guard that turns
// an exception into a status and a message, statuses from seedrl::Status, tensor specs from C's
// (dtype, rank, dims).
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "seedrl/capi/seedrl.h"
#include "seedrl/core/error.hpp"
#include "seedrl/core/status.hpp"
#include "seedrl/core/tensor_spec.hpp"

namespace seedrl::capi {

/// This thread's message for seedrl_last_error.
std::string& last_error();

/// Records the message (the parts, concatenated) and returns `status`.
template <class... Parts>
seedrl_status fail(seedrl_status status, const Parts&... parts) {
  last_error() = str_cat(parts...);
  return status;
}

/// Runs `body` (returning a seedrl_status); what it throws becomes SEEDRL_INVALID_ARGUMENT
/// (seedrl::Error: a bad setting or file, named) or SEEDRL_INTERNAL, with the message.
template <class Body>
seedrl_status guard(Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (const Error& e) {
    return fail(SEEDRL_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(SEEDRL_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(SEEDRL_INTERNAL, e.what());
  } catch (...) {
    return fail(SEEDRL_INTERNAL, "an unknown exception");
  }
}

/// A seedrl::Status as a seedrl_status, its message recorded where it is not ok.
inline seedrl_status status_of(const Status& s) {
  switch (s.code()) {
    case Status::Code::ok:
      return SEEDRL_OK;
    case Status::Code::closed:
      return fail(SEEDRL_CLOSED, s.message());
    case Status::Code::unavailable:
      return fail(SEEDRL_UNAVAILABLE, s.message());
    case Status::Code::invalid_argument:
      return fail(SEEDRL_INVALID_ARGUMENT, s.message());
    case Status::Code::deadline_exceeded:
      return fail(SEEDRL_DEADLINE_EXCEEDED, s.message());
    case Status::Code::internal:
      break;
  }
  return fail(SEEDRL_INTERNAL, s.message());
}

/// The spec of `what`: a dtype, rank 0..max_rank and that many dims (each >= 1).
TensorSpec tensor_spec(const std::string& what, std::int32_t dtype, std::int32_t rank,
                       const std::int64_t* dims, std::int32_t max_rank);

}  // namespace seedrl::capi
