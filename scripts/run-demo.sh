#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds seedrl and runs the main demo.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build/release -j "$(nproc)" --target imitate_controller
build/release/examples/imitate_controller "$@"
