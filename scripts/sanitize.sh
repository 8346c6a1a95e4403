#!/usr/bin/env bash
# Builds gnnbed with AddressSanitizer and UndefinedBehaviorSanitizer (into ./build-sanitize, or
# $GNNBED_SANITIZE_BUILD_DIR) and runs the tests there; a memory error or undefined behaviour
# fails the test that meets it. Arguments go to ctest (default: every test but the slow
# accuracy ones; pass -L mpi, -R Loader, ... to choose).
#   scripts/sanitize.sh [ctest arguments]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GNNBED_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
"$root/scripts/install_deps.sh"
# The fuzz smoke tests run a fifth of their inputs: instrumented readers are about ten times
# slower, and scripts/fuzz.sh is the long run.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGNNBED_WITH_CUDA=OFF \
  -DGNNBED_SANITIZE=address,undefined -DGNNBED_FUZZ_SMOKE_PERCENT=20
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN)"
# Open MPI and OpenBLAS keep memory to the end of the process on purpose: leaks are not reported.
# The ranks' own allocations are still checked for overflows and use after free.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
if [ "$#" -eq 0 ]; then set -- -LE accuracy; fi
ctest --test-dir "$build" --output-on-failure -j "$(getconf _NPROCESSORS_ONLN)" "$@"
