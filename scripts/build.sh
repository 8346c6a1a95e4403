#!/usr/bin/env bash
# Configures and builds gnnbed (Release) into ./build, or into $GNNBED_BUILD_DIR.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GNNBED_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN)"
