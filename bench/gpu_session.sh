#!/usr/bin/env bash
# One device session's checks and figures, on a machine with an NVIDIA GPU, from built programs:
#
#   bash bench/gpu_session.sh DIR
#
# DIR holds the programs: a build tree (DIR/test, DIR/bench, DIR/examples), or a bundle from
# bench/gpu_bundle.sh (its seedrl-gpu.tar.xz, unpacked into /tmp/seedrl-gpu), whose programs load
# the bundle's libraries and this machine's CUDA libraries (found under /usr/local, /opt and
# /usr/lib, PyTorch's wheels included). Writes under OUT (default DIR/gpu-session; for a bundle,
# /tmp/seedrl-gpu/session):
#   results.jsonl  the device and driver first, then every figure as a JSON line:
#                  the model benchmarks (bench_nn; the Nature V-trace learner step; the MLP at
#                  PPO's minibatch of 64, the work of mujoco_ppo's updates), central against
#                  per-actor inference at 32 actors with CUDA graphs on both sides and on neither
#                  (bench_inference), the same learner step in PyTorch at its defaults, tuned
#                  and compiled (bench/pytorch_vtrace_step.py), and each example's last line
#                  on --backend cuda and cpu (EXAMPLE_SECONDS each, default 10);
#   logs.tar.gz    a log per program: the GPU tests (test_cuda_runtime, test_cuda_conformance,
#                  test_cuda_learners, each headed by the device and driver), compute-sanitizer's
#                  memcheck of the per-actor benchmark through its shutdown, each benchmark's and
#                  example's whole output;
#   summary.txt    one line per step: its exit status and seconds.
# Each step has its own time limit; a step that fails is recorded and the session goes on.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/gpu_session.sh DIR}
if [[ $dir == *.tar.xz ]]; then
  rm -rf /tmp/seedrl-gpu && mkdir -p /tmp/seedrl-gpu && tar -C /tmp/seedrl-gpu -xJf "$dir" &&
    dir=/tmp/seedrl-gpu && OUT=${OUT:-$dir/session} || exit 1
fi
out=${OUT:-$dir/gpu-session}
if [[ -d $dir/bin && -d $dir/lib ]]; then
  cuda_libs=$(find /usr/local /opt /usr/lib \( -name 'libcudnn.so.9' -o \
    -name 'libcublas.so.1[0-9]' -o -name 'libcublasLt.so.1[0-9]' -o -name 'libcudart.so.1[0-9]' \) \
    2>/dev/null |
    xargs -r -n 1 dirname | sort -u | paste -sd:)
  export LD_LIBRARY_PATH="$(cd "$dir/lib" && pwd):$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "gpu_session: bundle $dir (needs $(cat "$dir/glibc_needed" 2>/dev/null)); this machine: \
$(ldd --version | head -n 1); LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  dir="$dir/bin"
fi
logs="$out/logs"
mkdir -p "$logs"
results="$out/results.jsonl"
summary="$out/summary.txt"
: > "$results"
: > "$summary"

program() {  # the path of a built program
  local p
  for p in "$dir/$1" "$dir/test/$1" "$dir/bench/$1" "$dir/examples/$1"; do
    [[ -x $p ]] && { echo "$p"; return 0; }
  done
  echo "gpu_session: no program $1 under $dir" >&2
  return 1
}

# The whole session ends within BUDGET_S seconds (default 480): a step gets at most what is left
# of it, less a margin for packing the logs, and none once too little is left.
budget=${BUDGET_S:-480}
session_start=$(date +%s)

step() {  # step NAME LIMIT_S COMMAND...: runs it into logs/NAME.log, records status and time
  local name=$1 limit=$2 start rc left
  shift 2
  left=$((budget - 15 - ($(date +%s) - session_start)))
  ((left < limit)) && limit=$left
  if ((limit < 5)); then
    echo "$name: skipped, the session's budget of ${budget} s is spent" >> "$summary"
    return 1
  fi
  start=$(date +%s%N)
  { echo "# $name (limit ${limit} s): $*"; echo "# device: $device"; } > "$logs/$name.log"
  timeout -k 10 "$limit" "$@" >> "$logs/$name.log" 2>&1
  rc=$?
  printf '%-28s rc=%-3s %7.1f s\n' "$name" "$rc" \
    "$(((($(date +%s%N) - start) / 100000000)))e-1" >> "$summary"
  return $rc
}

device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 |
  head -n 1)
echo "{\"bench\":\"nvidia-smi\",\"gpu\":\"$device\",\"host\":\"$(uname -srm)\",\"cores\":$(nproc)}" |
  tee -a "$results"

# The GPU tests side by side, and beside them compute-sanitizer's memcheck over the per-actor
# benchmark, its shutdown included (the actors' models, streams and graphs torn down): none of
# them times anything.
for t in test_cuda_runtime test_cuda_conformance test_cuda_learners; do
  step "$t" 240 "$(program "$t")" --duration=true &
done
inference=$(program bench_inference)
if command -v compute-sanitizer > /dev/null; then
  step sanitizer_per_actor 150 compute-sanitizer --tool memcheck --leak-check full \
    --error-exitcode 3 "$inference" --backend cuda --actors 4 --models minatar --seconds 1 \
    --warmup 1 &
else
  echo "compute-sanitizer: not on PATH" >> "$summary"
fi
wait

jsonl() {  # the JSON lines of a step's log, onto results.jsonl
  grep '^{' "$logs/$1.log" >> "$results" || true
}

# The figures, one program at a time.
nn=$(program bench_nn)
step bench_nn_cuda 120 "$nn" --backend cuda --model all --vtrace-step --seconds 2
jsonl bench_nn_cuda
step bench_nn_mlp64_cuda 60 "$nn" --backend cuda --model mlp --batch 64 --seconds 2
jsonl bench_nn_mlp64_cuda
step bench_nn_mlp64_cpu 60 "$nn" --backend cpu --model mlp --batch 64 --seconds 2
jsonl bench_nn_mlp64_cpu
step inference_graphs 150 "$inference" --backend cuda --actors 32 --models minatar,nature \
  --batched 256 --seconds 3 --warmup 3
jsonl inference_graphs
step inference_no_graphs 150 "$inference" --backend cuda --actors 32 --models minatar,nature \
  --no-graphs --seconds 3 --warmup 3
jsonl inference_no_graphs
step pytorch_vtrace_step 180 python3 bench/pytorch_vtrace_step.py --device cuda --seconds 2 \
  --modes eager,tuned,compile,compile-graphs
jsonl pytorch_vtrace_step
for program in minatar_vtrace minatar_r2d2 mujoco_ppo mujoco_sac; do
  path=$(program "$program") || continue
  for backend in cuda cpu; do
    # Until SIGINT, which ends a run cleanly with its JSON line (exit status 124).
    step "${program}_$backend" $((${EXAMPLE_SECONDS:-10} + 30)) timeout -s INT \
      "${EXAMPLE_SECONDS:-10}" "$path" --backend "$backend" --frames 1000000000 \
      --report-seconds 5
    tail -n 1 "$logs/${program}_$backend.log" | grep '^{' |
      sed "s/^{/{\"bench\":\"$program\",\"backend\":\"$backend\",/" >> "$results"
  done
done


tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -r "$logs"
echo "results: $results"
cat "$summary"
