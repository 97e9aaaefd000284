#!/usr/bin/env bash
# The README's test command and what CI runs: installs what is missing, then three builds, each
# of only what it runs (bench/test_command_time.sh times them; docs/performance.md has the
# figures):
#   release  GCC, warnings are errors, every optional part; every test under CTest.
#   asan     clang with AddressSanitizer + UndefinedBehaviorSanitizer; every test but the long
#            learning ones, and the libFuzzer targets (test/fuzz), which link this tree's library
#            (cmake/SeedrlFuzzCoverage.cmake). clang, not GCC: it builds this tree in 30% less
#            time, its tests run faster (GCC's own warnings are the release build's), and it
#            has libFuzzer.
#   tsan     clang with ThreadSanitizer and clang's thread-safety analysis, which checks seedrl's
#            locks against their annotations (SEEDRL_GUARDED_BY and friends,
#            core/thread_annotations.hpp; test/thread_safety_check.cpp instantiates the runtime
#            templates for it), every header compiled on its own, seedrl::mpi without NCCL; the
#            concurrency tests but the long learning ones.
# The long learning tests (CTest label "learning": a doctest test suite, test/support/
# test_main.cpp) train an agent until it clears a return; the sanitizers slow them 5 to 10 times
# and they reach no code the shorter tests do not, so they run once, in the release build (the
# runtime's threads under TSan: the train_locally, learner-worker and socket tests of the
# concurrency label; under ASan, every other test).
# The release build includes every optional part, and fails at configure time if one is missing,
# so that none of them stops compiling unseen: the MPI learner group (its test runs two ranks with
# mpiexec), the MuJoCo tasks, bench_transport's gRPC baseline (all three installed by
# install-deps.sh), and the CUDA backend wherever nvcc is installed (its GPU tests report
# "skipped" without a GPU; under CI=true nvcc is required to build it, elsewhere a machine with
# nvcc but without cuDNN builds the rest). The sanitizer builds leave MPI's tests and CUDA out
# (neither the CUDA runtime nor OpenMPI is sanitizer-clean: OpenMPI's initialisation alone leaks
# by LeakSanitizer's count); leaks inside third-party libraries are suppressed by test/lsan.supp.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
started=$SECONDS
stage_started=""
stage() {  # the next stage's banner (none after the last), and how long the one before it took
  if [ -n "$stage_started" ]; then echo "run-tests: that took $((SECONDS - stage_started)) s"; fi
  stage_started=$SECONDS
  if [ "$#" -gt 0 ]; then echo "== $* =="; fi
}

scripts/install-deps.sh

stage "release build: warnings are errors, every optional part"
optional=(-DSEEDRL_WITH_MPI=ON -DSEEDRL_WITH_MUJOCO=ON -DSEEDRL_WITH_GRPC_BASELINE=ON)
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  if [ "${CI:-}" = "true" ]; then
    optional+=(-DSEEDRL_WITH_CUDA=ON)
  fi
  # Device code for the GPU this machine has, or without one for the lowest architecture nvcc
  # compiles (SASS) and PTX of the newest: both ends of what nvcc accepts, in 40% of the time of
  # the library's default, one per major version (cmake/SeedrlCudaArchitectures.cmake; a test
  # build only needs the code it runs).
  if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    optional+=(-DCMAKE_CUDA_ARCHITECTURES=native)
  else
    nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    archs=$("$nvcc_bin" --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | sort -n || true)
    if [ -n "$archs" ]; then
      optional+=("-DCMAKE_CUDA_ARCHITECTURES=$(head -1 <<<"$archs")-real;$(tail -1 <<<"$archs")-virtual")
    fi
  fi
else
  echo "run-tests: no nvcc, the CUDA backend is not built"
fi
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WERROR=ON "${optional[@]}"
cmake --build build/release -j "$jobs"
stage "release tests"
ctest --test-dir build/release --output-on-failure -j "$jobs"

stage "AddressSanitizer + UndefinedBehaviorSanitizer build"
# -O1 -g1: what the sanitizers recommend (line numbers in reports), and much faster to build.
# The sanitizers slow the tests 5 to 10 times, so their builds give each test case longer than
# the release build's 300 s.
CXX=clang++ cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSEEDRL_WERROR=ON \
  -DSEEDRL_SANITIZE=address,undefined -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF \
  -DSEEDRL_WITH_MPI=OFF -DSEEDRL_TEST_TIMEOUT=900
cmake --build build/asan -j "$jobs"
stage "AddressSanitizer + UndefinedBehaviorSanitizer tests (all but the learning ones; the fuzzers)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS="suppressions=$PWD/test/lsan.supp:print_suppressions=0" \
  ctest --test-dir build/asan --output-on-failure -j "$jobs" -LE learning

stage "clang build: ThreadSanitizer, thread-safety analysis, every header on its own, seedrl::mpi without NCCL; warnings are errors"
CXX=clang++ cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DSEEDRL_WERROR=ON -DSEEDRL_THREAD_SAFETY_ANALYSIS=ON -DSEEDRL_SANITIZE=thread \
  -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF -DSEEDRL_WITH_MPI=ON \
  -DSEEDRL_TEST_TIMEOUT=900
cmake --build build/tsan -j "$jobs" --target seedrl seedrl_mpi seedrl_thread_safety_check \
  seedrl_header_check concurrency_tests
stage "ThreadSanitizer tests (the concurrency label but the learning ones)"
# One OpenMP thread: the OpenMP runtime is not instrumented, and with one thread it starts no team.
# test/tsan.supp: races reported inside oneDNN, which is not instrumented either.
OMP_NUM_THREADS=1 \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp" \
  ctest --test-dir build/tsan -L concurrency -LE learning --output-on-failure -j "$jobs"

stage
echo "== all tests passed in $((SECONDS - started)) s =="
