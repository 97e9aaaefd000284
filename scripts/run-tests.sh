#!/usr/bin/env bash
# The README's test command and what CI runs: installs what is missing; builds the library with
# clang, whose thread-safety analysis checks seedrl's locks against their annotations
# (SEEDRL_GUARDED_BY and friends, core/thread_annotations.hpp; test/thread_safety_check.cpp
# instantiates the runtime templates for it; no tests, about 1.5 minutes on 2 cores); builds
# seedrl with warnings as errors and runs every test under CTest; then builds and runs the suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer, and the concurrency tests under
# ThreadSanitizer.
# The release build includes the CUDA backend when nvcc and cuDNN are installed (its GPU tests
# report "skipped" without a GPU) and the MPI learner group (its test runs two ranks with
# mpiexec); the sanitizer builds leave both out (neither the CUDA runtime nor OpenMPI is
# sanitizer-clean: OpenMPI's initialisation alone leaks by LeakSanitizer's count).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
scripts/install-deps.sh

echo "== clang build: thread-safety analysis, warnings are errors =="
CXX=clang++ cmake -S . -B build/clang -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WERROR=ON \
  -DSEEDRL_THREAD_SAFETY_ANALYSIS=ON -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF
cmake --build build/clang -j "$jobs" --target seedrl seedrl_thread_safety_check

echo "== release build: warnings are errors =="
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WERROR=ON
cmake --build build/release -j "$jobs"
ctest --test-dir build/release --output-on-failure -j "$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
# -O1 -g1: what the sanitizers recommend (line numbers in reports), and much faster to build.
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSEEDRL_WERROR=ON \
  -DSEEDRL_SANITIZE=address,undefined -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF \
  -DSEEDRL_WITH_MPI=OFF
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

echo "== ThreadSanitizer build of the concurrency tests =="
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSEEDRL_WERROR=ON \
  -DSEEDRL_SANITIZE=thread -DSEEDRL_BUILD_EXAMPLES=OFF -DSEEDRL_BUILD_BENCH=OFF -DSEEDRL_WITH_CUDA=OFF \
  -DSEEDRL_WITH_MPI=OFF
cmake --build build/tsan -j "$jobs" --target concurrency_tests
# One OpenMP thread: libgomp is not instrumented, and with one thread it starts no team.
# test/tsan.supp: races reported inside oneDNN, which is not instrumented either.
OMP_NUM_THREADS=1 \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/tsan.supp" \
  ctest --test-dir build/tsan -L concurrency --output-on-failure -j "$jobs"

echo "== all tests passed =="
