#!/usr/bin/env bash
# Fuzzes gnnbed's file readers with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer
# (clang; into ./build-fuzz, or $GNNBED_FUZZ_BUILD_DIR), SECONDS each, starting from the seeds each
# target writes, one reader per core at a time (GNNBED_FUZZ_PARALLEL). Prints a table (reader,
# seconds, executions, crashes, exit status) and writes it to
# build-fuzz/fuzz-report.csv; inputs that crashed a reader are kept in build-fuzz/crashes/<reader>/
# (replay one with build-fuzz/tests/fuzz/fuzz_<reader>_replay FILE). Exits 1 when any crashed.
#   scripts/fuzz.sh [SECONDS] [READER...]     (default: 600 s, every reader)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GNNBED_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-600}"
shift || true
readers=("$@")
if [ "${#readers[@]}" -eq 0 ]; then
  readers=(planetoid_tsv edge_list triples_tsv ogb_csv ogb_npz binary_workload shards
           experiment_json plans calibration_json cluster_json)
fi
# clang with its libFuzzer and sanitizer runtimes (Debian 12: clang 14).
"$root/scripts/install_deps.sh" clang libclang-rt-14-dev
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGNNBED_WITH_CUDA=OFF -DGNNBED_BUILD_FUZZERS=ON
targets=()
for reader in "${readers[@]}"; do targets+=("fuzz_$reader" "fuzz_${reader}_replay"); done
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN)" --target "${targets[@]}"

export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
# One thread per fuzzer: the fuzzers already take a core each, and a tiny input's parallel loops
# would only spin.
export OMP_NUM_THREADS=1
# Readers fuzzed at once (one process each); default: one per core.
parallel="${GNNBED_FUZZ_PARALLEL:-$(getconf _NPROCESSORS_ONLN)}"

# Fuzzes one reader; writes its row of the report to $build/fuzz-<reader>.csv.
fuzz_one() {
  local reader="$1" corpus="$build/corpus/$1" crashes="$build/crashes/$1" log="$build/fuzz-$1.log"
  mkdir -p "$corpus" "$crashes"
  "$build/tests/fuzz/fuzz_${reader}_replay" --write-seeds "$corpus" > /dev/null
  echo "fuzzing $reader for $seconds s (log: $log)"
  local status=0
  "$build/tests/fuzz/fuzz_$reader" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=65536 -artifact_prefix="$crashes/" "$corpus" > "$log" 2>&1 || status=$?
  local executions found
  executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  found="$(find "$crashes" -type f | wc -l)"
  echo "$reader,$seconds,${executions:-0},$found,$status" > "$build/fuzz-$reader.csv"
}

for reader in "${readers[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$reader" &
done
wait

report="$build/fuzz-report.csv"
echo "reader,seconds,executions,crashes,exit_status" > "$report"
failed=0
for reader in "${readers[@]}"; do
  row="$(cat "$build/fuzz-$reader.csv")"
  echo "$row" >> "$report"
  IFS=, read -r _ _ _ found status <<< "$row"
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then failed=1; fi
done
column -s, -t < "$report"
exit "$failed"
