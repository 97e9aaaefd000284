#!/usr/bin/env bash
# Installs the Debian 12 packages seedrl needs to build, test and run its examples.
# Idempotent: it runs apt-get (update, then install) only when something is missing.
# Where npm is present it also fetches ONNX Runtime's shared library (npm package
# onnxruntime-node, not in Debian) into .deps/onnxruntime, for the tests that run seedrl's ONNX
# exports in an independent runtime; without it those tests report "skipped".
set -euo pipefail
cd "$(dirname "$0")/.."

install_onnxruntime() {
  local dir=.deps/onnxruntime version=1.30.0
  local library=$dir/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
  if [ -e "$library" ]; then
    echo "install-deps: ONNX Runtime present ($library)"
  elif ! command -v npm >/dev/null; then
    echo "install-deps: no npm: the ONNX Runtime tests will be skipped"
  else
    echo "install-deps: fetching ONNX Runtime $version (npm onnxruntime-node) into $dir"
    # --ignore-scripts: the package's install script downloads GPU extras seedrl does not use.
    mkdir -p "$dir"
    if ! npm install --ignore-scripts --no-audit --no-fund --prefix "$dir" \
        "onnxruntime-node@$version" >"$dir/npm.log" 2>&1; then
      echo "install-deps: npm could not fetch onnxruntime-node (see $dir/npm.log):" \
        "the ONNX Runtime tests will be skipped"
    fi
  fi
}

packages=(
  build-essential cmake ninja-build git
  libeigen3-dev libdnnl-dev ocl-icd-opencl-dev libboost-dev
  doctest-dev libcli11-dev nlohmann-json3-dev libgif-dev
  libssl-dev openssl  # TLS on the TCP transport; the openssl command makes test certificates
  libmujoco-dev  # the MuJoCo locomotion tasks (seedrl::mujoco)
  libopenmpi-dev openmpi-bin  # data-parallel learners over MPI (seedrl::mpi)
  # bench_transport's gRPC baseline (seed_rl's transport, for comparison); Debian's gRPC CMake
  # package needs Protobuf's, which libgrpc++-dev does not pull in.
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  clang libclang-rt-14-dev  # the libFuzzer target of the wire codec
  python3  # the results registry's check (scripts/results.py, standard library only)
  slurm-wlm munge  # the Slurm job scripts' test on a one-node cluster (test/slurm/)
  # the Python actor's vector environments (seedrl.vector.VectorEnvRows; optional, tested where
  # present)
  python3-numpy
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  install_onnxruntime
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
install_onnxruntime
