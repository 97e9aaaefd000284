#!/usr/bin/env bash
# The README's test command and what CI runs: installs what is missing; builds the library with
# clang, whose thread-safety analysis checks seedrl's locks against their annotations
# (SEEDRL_GUARDED_BY and friends, core/thread_annotations.hpp; test/thread_safety_check.cpp
# instantiates the runtime templates for it; no tests, about 1.5 minutes on 2 cores); builds
# seedrl with warnings as errors and runs every test under CTest; then builds and runs the suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer, and the concurrency tests under
# ThreadSanitizer.
# The release build includes every optional part, and fails at configure time if one is missing,
# so that none of them stops compiling unseen: the MPI learner group (its test runs two ranks with
# mpiexec), the MuJoCo tasks, bench_transport's gRPC baseline (all three installed by
# install-deps.sh), and the CUDA backend wherever nvcc is installed (its GPU tests report
# "skipped" without a GPU; under CI=true nvcc is required to build it, elsewhere a machine with
# nvcc but without cuDNN builds the rest). The sanitizer builds leave MPI and CUDA out (neither
# the CUDA runtime nor OpenMPI is sanitizer-clean: OpenMPI's initialisation alone leaks by
# LeakSanitizer's count); leaks inside third-party libraries are suppressed by test/lsan.supp.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
scripts/install-deps.sh

echo "== clang build: thread-safety analysis, every header on its own, seedrl::mpi without NCCL; warnings are errors =="
CXX=clang++ cmake -S . -B build/clang -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WERROR=ON \
  -DSEEDRL_THREAD_SAFETY_ANALYSIS=ON -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF \
  -DSEEDRL_WITH_MPI=ON
cmake --build build/clang -j "$jobs" --target seedrl seedrl_mpi seedrl_thread_safety_check seedrl_header_check

echo "== release build: warnings are errors, every optional part =="
optional=(-DSEEDRL_WITH_MPI=ON -DSEEDRL_WITH_MUJOCO=ON -DSEEDRL_WITH_GRPC_BASELINE=ON)
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  if [ "${CI:-}" = "true" ]; then
    optional+=(-DSEEDRL_WITH_CUDA=ON)
  fi
else
  echo "run-tests: no nvcc, the CUDA backend is not built"
fi
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WERROR=ON "${optional[@]}"
cmake --build build/release -j "$jobs"
ctest --test-dir build/release --output-on-failure -j "$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
# -O1 -g1: what the sanitizers recommend (line numbers in reports), and much faster to build.
# The sanitizers slow the learning tests 5 to 10 times (PPO on CardPick: 30 s in the release
# build, 176 s under ThreadSanitizer with the cores to itself), so their builds give each test
# case longer than the release build's 300 s.
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSEEDRL_WERROR=ON \
  -DSEEDRL_SANITIZE=address,undefined -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF \
  -DSEEDRL_WITH_MPI=OFF -DSEEDRL_TEST_TIMEOUT=900
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS="suppressions=$PWD/test/lsan.supp:print_suppressions=0" \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

echo "== ThreadSanitizer build of the concurrency tests =="
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSEEDRL_WERROR=ON \
  -DSEEDRL_SANITIZE=thread -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF \
  -DSEEDRL_WITH_MPI=OFF -DSEEDRL_TEST_TIMEOUT=900
cmake --build build/tsan -j "$jobs" --target concurrency_tests
# One OpenMP thread: libgomp is not instrumented, and with one thread it starts no team.
# test/tsan.supp: races reported inside oneDNN, which is not instrumented either.
OMP_NUM_THREADS=1 \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp" \
  ctest --test-dir build/tsan -L concurrency --output-on-failure -j "$jobs"

echo "== all tests passed =="
