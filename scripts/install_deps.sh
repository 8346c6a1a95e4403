#!/usr/bin/env bash
# Installs the Debian packages gnnbed builds and runs with, and any packages named as arguments
# (scripts/fuzz.sh adds clang's). Idempotent: installs only what is missing, and runs
# `apt-get update` only when something is.
set -euo pipefail

packages=(
  g++ make cmake pkg-config git
  libsimgrid-dev
  libopenmpi-dev openmpi-bin
  libboost-program-options-dev
  libgtest-dev
  libmetis-dev
  libopenblas-openmp-dev
  nlohmann-json3-dev
  zlib1g-dev
  python3 python3-matplotlib
  "$@"
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install_deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
