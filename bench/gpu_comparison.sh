#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds seedrl with its CUDA backend and, in one run, records
#   - the CPU-vs-GPU conformance tests (ctest -L cuda),
#   - bench_nn --backend cuda (every model, plus the Nature V-trace learner step, T=20 B=32),
#   - bench_inference --backend cuda --batched 256 (the server's inference step at batch 256),
#   - the same V-trace learner step in the machine's PyTorch (bench/pytorch_vtrace_step.py),
# as JSON lines in $OUT/gpu_comparison.jsonl (OUT defaults to build/gpu), with the device and
# driver first.
#
#   bash bench/gpu_comparison.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/gpu}
out=${OUT:-$build}
mkdir -p "$out"
results="$out/gpu_comparison.jsonl"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WITH_CUDA=ON \
  -DSEEDRL_BUILD_EXAMPLES=OFF
cmake --build "$build" -j "$(nproc)" --target test_cuda_conformance test_cuda_runtime bench_nn \
  bench_inference

: > "$results"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
  sed 's/^/{"bench":"nvidia-smi","gpu":"/; s/$/"}/' >> "$results" || true
ctest --test-dir "$build" -L cuda --output-on-failure | tee "$out/conformance.log"
"$build/bench/bench_nn" --backend cuda --vtrace-step --seconds 3 | tee -a "$results"
"$build/bench/bench_inference" --backend cuda --batched 256 --actors 32 --seconds 4 |
  tee -a "$results"
python3 bench/pytorch_vtrace_step.py --device cuda --seconds 3 | tee -a "$results"
echo "results: $results"
