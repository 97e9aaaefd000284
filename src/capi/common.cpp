// The C ABI's shared pieces (src/capi/capi_common.hpp) and its version and status names.
#include <span>
#include <string>
#include <vector>

#include "capi/capi_common.hpp"

namespace seedrl::capi {

std::string& last_error() {
  thread_local std::string message;
  return message;
}

TensorSpec tensor_spec(const std::string& what, std::int32_t dtype, std::int32_t rank,
                       const std::int64_t* dims, std::int32_t max_rank) {
  SEEDRL_REQUIRE(dtype == SEEDRL_F32 || dtype == SEEDRL_U8 || dtype == SEEDRL_I32, what,
                 ": dtype must be SEEDRL_F32, SEEDRL_U8 or SEEDRL_I32, got ", dtype);
  SEEDRL_REQUIRE(rank >= 0 && rank <= max_rank, what, ": rank must be in [0, ", max_rank, "], got ",
                 rank);
  SEEDRL_REQUIRE(rank == 0 || dims != nullptr, what, ": dims is NULL");
  std::vector<std::int64_t> shape(dims, dims + rank);
  for (std::int32_t d = 0; d < rank; ++d)
    SEEDRL_REQUIRE(shape[static_cast<std::size_t>(d)] >= 1 &&
                       shape[static_cast<std::size_t>(d)] <= 0xFFFFFFFFLL,
                   what, ": dimension ", d, " must be in [1, 2^32), got ",
                   shape[static_cast<std::size_t>(d)]);
  return {Shape(std::span<const std::int64_t>(shape)), static_cast<DType>(dtype)};
}

}  // namespace seedrl::capi

extern "C" {

const char* seedrl_last_error(void) {
  return seedrl::capi::last_error().c_str();
}

int seedrl_abi_version(void) {
  return SEEDRL_C_ABI_VERSION;
}

const char* seedrl_status_name(int32_t status) {
  switch (status) {  // an int: a value outside the enum is no UB here
    case SEEDRL_OK:
      return "ok";
    case SEEDRL_INVALID_ARGUMENT:
      return "invalid_argument";
    case SEEDRL_UNAVAILABLE:
      return "unavailable";
    case SEEDRL_CLOSED:
      return "closed";
    case SEEDRL_DEADLINE_EXCEEDED:
      return "deadline_exceeded";
    case SEEDRL_NOT_FOUND:
      return "not_found";
    case SEEDRL_INTERNAL:
      return "internal";
  }
  return "unknown";
}

}  // extern "C"
