#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and seedrl's dependencies: builds seedrl with its CUDA backend
# and runs bench/gpu_session.sh on the build (the GPU tests with a log each, compute-sanitizer
# over the per-actor benchmark, bench_nn, central against per-actor inference with CUDA graphs on
# both sides and on neither, the learner step in PyTorch at its defaults and at its best, and
# the examples on both backends), writing under OUT (default build-dir/gpu-session).
# On a GPU machine without the dependencies, build elsewhere and carry a bundle instead
# (bench/gpu_bundle.sh).
#
#   bash bench/gpu_comparison.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/gpu}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WITH_CUDA=ON \
  -DSEEDRL_BUILD_EXAMPLES=ON -DSEEDRL_BUILD_BENCH=ON
targets="test_cuda_conformance test_cuda_learners test_cuda_runtime bench_nn bench_inference"
for example in minatar_vtrace minatar_r2d2 mujoco_ppo mujoco_sac; do
  if ninja -C "$build" -t targets all | grep -q "^$example:"; then  # mujoco_*: where MuJoCo is
    targets="$targets $example"
  fi
done
# shellcheck disable=SC2086
cmake --build "$build" -j "$(nproc)" --target $targets
exec bash bench/gpu_session.sh "$build"
