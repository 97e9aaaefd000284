#include "seedrl/mpi/learner_group.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>
#include <vector>

#include "seedrl/core/error.hpp"

#ifdef SEEDRL_MPI_NCCL
#include "nccl_reducer.hpp"
#else
namespace seedrl::mpi::detail {
class NcclReducer {};  // never made without NCCL; complete for the unique_ptr's destructor
}  // namespace seedrl::mpi::detail
#endif

namespace seedrl::mpi {
namespace {

// Throws naming the MPI call and MPI's own words when `code` is not MPI_SUCCESS.
void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(str_cat("seedrl::mpi: ", call, " failed: ", std::string(text, length)));
}

int count_of(const Tensor& t, const char* what) {
  SEEDRL_REQUIRE(t.defined() && t.dtype() == DType::f32, "seedrl::mpi: ", what,
                 " must be an f32 tensor");
  SEEDRL_REQUIRE(t.numel() <= std::numeric_limits<int>::max(), "seedrl::mpi: ", what, " of ",
                 t.numel(), " values is more than one MPI call carries");
  return static_cast<int>(t.numel());
}

// FNV-1a over the bytes.
std::uint64_t hash_bytes(const void* data, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

Session::Session(int* argc, char*** argv) {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    owns_ = true;
  } else {
    check(MPI_Query_thread(&provided), "MPI_Query_thread");
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    if (owns_) MPI_Finalize();
    throw Error(
        "seedrl::mpi: this MPI gives less than MPI_THREAD_SERIALIZED; the learner thread calls "
        "MPI while the main thread waits");
  }
  // Errors come back as codes (and become exceptions naming the call) instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  MPI_Comm machine = MPI_COMM_NULL;  // the ranks that share this machine's memory
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &machine),
        "MPI_Comm_split_type");
  check(MPI_Comm_rank(machine, &local_rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(machine, &local_size_), "MPI_Comm_size");
  MPI_Comm_free(&machine);
}

Session::~Session() {
  if (owns_) MPI_Finalize();
}

std::string Session::describe() const {
  char host[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(host, &length);
  return str_cat("rank ", rank_, " of ", size_, " on ", std::string(host, length));
}

void LearnerGroupOptions::validate(std::string_view owner) const {
  SEEDRL_REQUIRE(timeout.count() > 0, owner, ".timeout must be positive, got ", timeout.count(),
                 " ms");
}

LearnerGroup::LearnerGroup(const Session& mpi, LearnerGroupOptions options)
    : options_(options), rank_(mpi.rank()), size_(mpi.size()) {
  options_.validate();
}

LearnerGroup::~LearnerGroup() = default;

void LearnerGroup::complete(void* request_ptr, const char* what) {
  MPI_Request& request = *static_cast<MPI_Request*>(request_ptr);
  const auto start = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (std::chrono::steady_clock::now() - start > options_.timeout) timed_out(what);
    // Spin briefly (a fast collective answers within microseconds), then sleep between polls.
    if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void LearnerGroup::timed_out(const char* what) const {
  std::fprintf(stderr,
               "seedrl::mpi: rank %d of %d: the %s (learner step %lld) did not complete within "
               "%lld ms: another rank has stopped stepping or hangs; aborting the learner group\n",
               rank_, size_, what, static_cast<long long>(reductions_ + 1),
               static_cast<long long>(options_.timeout.count()));
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();  // MPI_Abort does not return
}

const char* LearnerGroup::nccl_version() {
#ifdef SEEDRL_MPI_NCCL
  return detail::NcclReducer::version();
#else
  return nullptr;
#endif
}

const Tensor& LearnerGroup::on_host(const Tensor& values, int n) {
  if (values.device() == Device::cpu) return values;
  if (!host_.defined() || host_.numel() != n) host_ = Tensor::empty({std::int64_t{n}});
  host_.copy_from(values);
  return host_;
}

void LearnerGroup::all_reduce(const Tensor& gradients, bool finite) {
  const int n = count_of(gradients, "the gradients");
  last_on_device_ = false;
#ifdef SEEDRL_MPI_NCCL
  if (options_.nccl && gradients.device() != Device::cpu) {
    if (!nccl_) nccl_ = std::make_unique<detail::NcclReducer>(rank_, size_);
    if (!nccl_->all_reduce_mean(static_cast<float*>(gradients.raw_data()), n, finite,
                                options_.timeout))
      timed_out("gradient all-reduce over NCCL");
    last_on_device_ = true;
    reduced_bytes_ = std::int64_t{n} * 4;
    ++reductions_;
    return;
  }
#endif
  const Tensor& buffer = on_host(gradients, n);
  float* data = buffer.data<float>();
  // A step this rank cannot use: NaN spreads through the sum to every rank.
  if (!finite && n > 0) data[0] = std::numeric_limits<float>::quiet_NaN();
  // Non-blocking, so that a rank that never joins ends the job instead of hanging it.
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(MPI_IN_PLACE, data, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request),
        "MPI_Iallreduce of the gradients");
  complete(&request, "gradient all-reduce");
  if (size_ > 1) buffer.flat<float>() *= 1.0f / static_cast<float>(size_);
  if (&buffer != &gradients) gradients.copy_from(buffer);
  reduced_bytes_ = std::int64_t{n} * 4;
  ++reductions_;
}

void LearnerGroup::sum(std::span<double> values) {
  SEEDRL_REQUIRE(values.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "seedrl::mpi: ", values.size(), " values are more than one MPI call carries");
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                       MPI_SUM, MPI_COMM_WORLD, &request),
        "MPI_Iallreduce of counters");
  complete(&request, "all-reduce of the group's counters");
}

std::int64_t LearnerGroup::sum(std::int64_t value) {
  long long total = value;
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &request),
        "MPI_Iallreduce of a counter");
  complete(&request, "all-reduce of a counter");
  return total;
}

void LearnerGroup::broadcast(const Tensor& values) {
  const int n = count_of(values, "the broadcast values");
  int sizes[2] = {n, -n};  // the largest and (negated) the smallest size over the ranks
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(MPI_IN_PLACE, sizes, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request),
        "MPI_Iallreduce of the sizes");
  complete(&request, "all-reduce of the broadcast sizes");
  SEEDRL_REQUIRE(sizes[0] == -sizes[1], "seedrl::mpi::LearnerGroup::broadcast: the ranks hold ",
                 -sizes[1], " to ", sizes[0], " values (different networks?); rank ", rank_,
                 " holds ", n);
  const Tensor& buffer = on_host(values, n);
  check(MPI_Ibcast(buffer.data<float>(), n, MPI_FLOAT, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
  complete(&request, "broadcast of rank 0's values");
  if (&buffer != &values) values.copy_from(buffer);
}

void LearnerGroup::broadcast(std::string& bytes) {
  long long length = static_cast<long long>(bytes.size());
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&length, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
  complete(&request, "broadcast of rank 0's byte count");
  bytes.resize(static_cast<std::size_t>(length));
  // In pieces of at most 1 GiB, which an int counts.
  constexpr long long kPiece = 1LL << 30;
  for (long long offset = 0; offset < length; offset += kPiece) {
    const int piece = static_cast<int>(std::min(kPiece, length - offset));
    check(MPI_Ibcast(bytes.data() + offset, piece, MPI_BYTE, 0, MPI_COMM_WORLD, &request),
          "MPI_Ibcast");
    complete(&request, "broadcast of rank 0's bytes");
  }
}

void LearnerGroup::check_identical(const Tensor& values, const std::string& what) {
  const Tensor host = values.device() == Device::cpu ? values : values.clone(Device::cpu);
  const unsigned long long mine = hash_bytes(host.raw_data(), host.bytes());
  std::vector<unsigned long long> all(static_cast<std::size_t>(size_));
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG,
                       MPI_COMM_WORLD, &request),
        "MPI_Iallgather of the hashes");
  complete(&request, "all-gather of the parameter hashes");
  std::string differ;
  for (int r = 1; r < size_; ++r)
    if (all[static_cast<std::size_t>(r)] != all[0])
      differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  SEEDRL_REQUIRE(differ.empty(), "seedrl::mpi: the learner group has diverged: ", what,
                 " on rank(s) ", differ, " differ from rank 0's");
}

void LearnerGroup::abort(const std::string& why) {
  std::fprintf(stderr, "seedrl::mpi: rank %d of %d: %s; aborting the learner group\n", rank_, size_,
               why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; should it, this process still ends
}

}  // namespace seedrl::mpi
