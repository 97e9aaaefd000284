#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds seedrl and trains a V-trace agent
# on CartPole in one process (actors, batched inference, learner), printing progress and, last,
# one JSON line with the result. Extra arguments go to cartpole_vtrace (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build/release -j "$(nproc)" --target cartpole_vtrace
build/release/examples/cartpole_vtrace "$@"
