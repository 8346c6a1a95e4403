#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (ctest: unit, accuracy, ... labels).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
build="${GNNBED_BUILD_DIR:-$root/build}"
ctest --test-dir "$build" --output-on-failure -j "$(getconf _NPROCESSORS_ONLN)" "$@"
