#!/usr/bin/env bash
# bench/compile_time.sh BUILD_DIR REF FILE...: what single translation units cost to compile, as
# JSON lines, at REF and in the working tree, one after the other on the same machine.
#
# Each FILE (a path in the repository: an example program, test/package/train.cpp) is compiled
# alone with g++ -O3 -std=c++20, as the Release build compiles it (without the CUDA or MPI parts
# of the examples), against the headers of REF (checked out into a temporary worktree) and then of
# the working tree; BUILD_DIR gives the generated headers (build/include). The best of 2:
#   {"bench":"compile_time","tree":"<REF>"|"working-tree","commit":...,"file":...,"seconds":...}
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
[ "$#" -ge 3 ] || { echo "usage: bench/compile_time.sh BUILD_DIR REF FILE..." >&2; exit 2; }
build=$(cd "$1" && pwd)
ref=$2
shift 2
scratch=$(mktemp -d /tmp/seedrl-compile-time.XXXXXX)
trap 'rm -rf "$scratch"; git -C "$root" worktree prune' EXIT
git -C "$root" worktree add --detach "$scratch/src" "$ref" > /dev/null 2>&1

measure() {  # measure <source dir> <label> <file>
  local src=$1 label=$2 file=$3 best=""
  [ -e "$src/$file" ] || { echo "compile_time: $file is not in $label" >&2; return; }
  for _ in 1 2; do
    local t0 t1
    t0=$(date +%s.%N)
    g++ -std=c++20 -O3 -DNDEBUG -I "$src/examples" -I "$src/include" -I "$build/include" \
      -isystem /usr/include/eigen3 -c "$src/$file" -o "$scratch/out.o"
    t1=$(date +%s.%N)
    local s; s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    if [ -z "$best" ] || awk -v s="$s" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$s; fi
  done
  printf '{"bench":"compile_time","tree":"%s","commit":"%s","file":"%s","seconds":%s}\n' \
    "$label" "$(git -C "$src" rev-parse --short HEAD)" "$file" "$best"
}

for file in "$@"; do
  measure "$scratch/src" "$ref" "$file"
  measure "$root" "working-tree" "$file"
done
