#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds seedrl with its CUDA backend and, in one run, records
#   - the CPU-vs-GPU conformance tests and the GPU learning runs (ctest -L cuda),
#   - bench_nn --backend cuda (every model, plus the Nature V-trace learner step, T=20 B=32),
#   - bench_inference --backend cuda: the server's inference step at batch 256 and at batch 1
#     (the fixed cost of a step: launches and copies), each with its parts and with the forward
#     replayed from a CUDA graph, and central against per-actor inference with 32 actors, the
#     central figure also without CUDA graphs (--no-graphs),
#   - the same V-trace learner step in the machine's PyTorch (bench/pytorch_vtrace_step.py),
#   - minatar_vtrace, minatar_r2d2 and mujoco_ppo for EXAMPLE_SECONDS (default 20) each with
#     --backend cuda and --backend cpu (their final JSON lines, frames/s included),
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
  -DSEEDRL_BUILD_EXAMPLES=ON -DSEEDRL_BUILD_BENCH=ON
examples="minatar_vtrace minatar_r2d2"
if ninja -C "$build" -t targets all | grep -q '^mujoco_ppo:'; then  # where MuJoCo was found
  examples="$examples mujoco_ppo"
fi
cmake --build "$build" -j "$(nproc)" --target test_cuda_conformance test_cuda_learners \
  test_cuda_runtime bench_nn bench_inference $examples

: > "$results"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
  sed 's/^/{"bench":"nvidia-smi","gpu":"/; s/$/"}/' >> "$results" || true
ctest --test-dir "$build" -L cuda --output-on-failure | tee "$out/conformance.log"
"$build/bench/bench_nn" --backend cuda --vtrace-step --seconds 3 | tee -a "$results"
"$build/bench/bench_inference" --backend cuda --batched 256 --actors 32 --seconds 4 --warmup 3 |
  tee -a "$results"
"$build/bench/bench_inference" --backend cuda --batched 1 --actors 0 --seconds 2 |
  tee -a "$results"
"$build/bench/bench_inference" --backend cuda --actors 32 --no-impala --no-graphs --seconds 4 \
  --warmup 3 | tee -a "$results"
python3 bench/pytorch_vtrace_step.py --device cuda --seconds 3 | tee -a "$results"
# Each example until SIGINT, which ends it cleanly with its JSON line (exit status 124).
for program in $examples; do
  for backend in cuda cpu; do
    timeout -s INT "${EXAMPLE_SECONDS:-20}" "$build/examples/$program" --backend "$backend" \
      --frames 1000000000 --report-seconds 5 > "$out/${program}_$backend.log" 2>&1 || true
    tail -n 1 "$out/${program}_$backend.log" |
      sed "s/^{/{\"bench\":\"$program\",\"backend\":\"$backend\",/" | tee -a "$results"
  done
done
echo "results: $results"
