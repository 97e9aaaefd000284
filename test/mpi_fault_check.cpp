// Run by CTest as two ranks (mpiexec -n 2) to check how a learner group ends when a rank fails:
//   mpi_fault_check hang   rank 1 stops stepping after one step: rank 0's next all-reduce gives
//                          up after its 1 s timeout and aborts the job, saying why on stderr
//   mpi_fault_check kill   rank 1 dies (SIGKILL) after one step: the launcher ends the job and
//                          names rank 1 (long before rank 0's 20 s timeout)
// Either way the job must end, non-zero, within seconds; "survived" on stdout means it did not.
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "seedrl/mpi/learner_group.hpp"

int main(int argc, char** argv) {
  seedrl::mpi::Session mpi(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "hang" && mode != "kill") {
    std::fprintf(stderr, "usage: mpi_fault_check hang|kill\n");
    return 2;
  }
  // kill: a timeout longer than the launcher needs, so that it is the launcher that ends the job.
  seedrl::mpi::LearnerGroup group(
      mpi, {.timeout = std::chrono::milliseconds(mode == "hang" ? 1000 : 20000)});
  seedrl::Tensor gradients = seedrl::Tensor::zeros({1024});
  group.all_reduce(gradients, true);  // one step together
  if (mpi.rank() == 1) {
    if (mode == "kill") std::raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(60));  // hangs
  }
  group.all_reduce(gradients, true);
  std::printf("survived: rank %d\n", mpi.rank());
  return 0;
}
