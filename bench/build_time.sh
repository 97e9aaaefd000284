#!/usr/bin/env bash
# bench/build_time.sh [REF ...]: what a clean build costs, as JSON lines.
#
# For the working tree (and for each git REF given, checked out into a temporary worktree, so
# that before/after figures come from the same run on the same machine):
#   configure_s        cmake configure of a fresh Release build directory (CUDA as detected)
#   build_s            building everything (library, CUDA backend, tests, examples, benchmarks)
#   consumer_s         compiling one consumer translation unit, test/package/train.cpp (the
#                      umbrella header and train_locally, as a user's program has them), with
#                      Release flags; the best of 3
# Jobs: the machine's core count (nproc). Each build takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)
consumer="$root/test/package/train.cpp"
scratch=$(mktemp -d /tmp/seedrl-build-time.XXXXXX)
trap 'rm -rf "$scratch"; git -C "$root" worktree prune' EXIT

seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.3f", b - a }'; }

measure() {  # measure <source dir> <label>
  local src=$1 label=$2 build="$scratch/build-$2"
  echo "build_time: $label: configuring and building in $build ($jobs jobs)..." >&2
  local t0; t0=$(seconds)
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEEDRL_WERROR=ON > /dev/null
  local configure; configure=$(elapsed "$t0")
  t0=$(seconds)
  cmake --build "$build" -j "$jobs" > "$build.log" 2>&1 || { tail -20 "$build.log" >&2; exit 1; }
  local build_s; build_s=$(elapsed "$t0")
  local best=""
  for _ in 1 2 3; do
    t0=$(seconds)
    g++ -std=c++20 -O3 -DNDEBUG -I "$src/include" -I "$build/include" -isystem /usr/include/eigen3 \
      -c "$consumer" -o "$scratch/consumer.o"
    local s; s=$(elapsed "$t0")
    if [ -z "$best" ] || awk -v s="$s" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$s; fi
  done
  printf '{"bench":"build_time","tree":"%s","commit":"%s","jobs":%d,"configure_s":%.1f,"build_s":%.1f,"consumer_s":%.2f}\n' \
    "$label" "$(git -C "$src" rev-parse --short HEAD)" "$jobs" "$configure" "$build_s" "$best"
}

for ref in "$@"; do
  git -C "$root" worktree add --detach "$scratch/src-$ref" "$ref" > /dev/null 2>&1
  measure "$scratch/src-$ref" "$ref"
done
measure "$root" "working-tree"
