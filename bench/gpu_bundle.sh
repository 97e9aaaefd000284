#!/usr/bin/env bash
# Packs the programs bench/gpu_session.sh runs, built here, with the shared libraries they need
# that a bare GPU machine may lack, for a machine with an NVIDIA GPU but not seedrl's
# dependencies (a lent device machine: no package registry there):
#
#   bash bench/gpu_bundle.sh [build-dir] [bundle-dir]      (defaults build/gpu, .gpu)
#
# bundle-dir/seedrl-gpu.tar.xz holds bin/ (the programs, stripped), lib/ (every library they load
# except the C library's own and the CUDA libraries: the driver, cuBLAS and cuDNN come from the
# GPU machine) and glibc_needed (the newest C library version they need). Configure the build with the GPU's architecture, for example
#   cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WITH_CUDA=ON \
#     -DCMAKE_CUDA_ARCHITECTURES=90-real
# and run there with bench/gpu_session.sh bundle-dir/seedrl-gpu.tar.xz.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/gpu}
bundle=${2:-.gpu}
programs="test_cuda_runtime test_cuda_conformance test_cuda_learners bench_nn bench_inference
  minatar_vtrace minatar_r2d2 mujoco_ppo mujoco_sac"
targets=""
for p in $programs; do
  if ninja -C "$build" -t targets all | grep -q "^$p:"; then targets="$targets $p"; fi
done
# shellcheck disable=SC2086
cmake --build "$build" --target $targets
stage="$build/bundle"
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$bundle"
for p in $targets; do
  path=$(find "$build" -maxdepth 2 -type f -name "$p" -perm -u+x | head -n 1)
  strip -o "$stage/bin/$p" "$path"
done
# Each library a program loads, once, but not the C library's, nor CUDA's.
system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv)\.'
cuda='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnccl|libnvrtc)\.'
for p in "$stage"/bin/*; do
  ldd "$p" | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r name path; do
  if [[ $name =~ $system || $name =~ $cuda ]]; then continue; fi
  cp -L "$path" "$stage/lib/$name"
done
# The newest C library version any program needs: the GPU machine's must be at least that.
needed=$(objdump -T "$stage"/bin/* "$stage"/lib/* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' |
  sort -uV | tail -n 1)
echo "$needed" > "$stage/glibc_needed"
tar -C "$stage" -cJf "$bundle/seedrl-gpu.tar.xz" bin lib glibc_needed
du -sh "$stage"/bin "$stage"/lib "$bundle/seedrl-gpu.tar.xz"
echo "bundle: $bundle/seedrl-gpu.tar.xz (needs $needed or newer)"
