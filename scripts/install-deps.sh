#!/usr/bin/env bash
# Installs the Debian 12 packages seedrl needs to build, test and run its examples.
# Idempotent: it runs apt-get (update, then install) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git
  libeigen3-dev libdnnl-dev ocl-icd-opencl-dev libboost-dev
  doctest-dev libcli11-dev nlohmann-json3-dev libgif-dev
  clang libclang-rt-14-dev  # the libFuzzer target of the wire codec
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
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
