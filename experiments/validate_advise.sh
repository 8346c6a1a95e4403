#!/usr/bin/env bash
# Is advise's first choice the fastest when run for real? On the emulated cluster
# (experiments/emulated_cluster.sh: one shaped network namespace per machine), for every setting
# of a grid (link rate x ranks x hidden width x feature width): experiments/advise ranks its
# candidate configurations for the emulated-cluster preset at that setting, then every candidate
# that fits is trained for real (run_experiment) in an order drawn with a fixed seed, and
# advise_validation_table.py reports, per setting, where advise's first choice lands among the
# measured epochs and whether it is the measured fastest or within the tolerance of it.
#
# Needs root (ip netns, tc); refuses to start when another run's namespaces exist (--clean-stale
# deletes them). Everything it creates is removed on exit, error or interrupt.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: experiments/validate_advise.sh [options]
  --rates LIST          shaped link rates in Gbit/s (default 1,10)
  --ranks LIST          ranks, one per emulated machine (default 2,4)
  --hidden LIST         hidden widths (default 16,128)
  --feature-widths LIST input feature widths, workload.feature_dim (default 64,512)
  --calibration FILE    calibration for advise's simulations (from calibrate; default: the
                        preset's cost model)
  --workload "ARGS"     workload options for both sides (default "--workload products-like
                        --scale 0.05 --features stored")
  --advise-args "ARGS"  more options for advise (e.g. "--cache-budgets 0,8e6")
  --epochs N            epochs per measured run (default 8; the median after the warm-up)
  --warmup-epochs N     epochs not measured (default 3)
  --tolerance F         advise's first counts as right within this fraction of the measured
                        fastest (default 0.05)
  --seed N              seed of the order candidates are measured in (default 1)
  --output DIR          results directory (default results/advise-validation)
  --build DIR           build directory (default $GNNBED_BUILD_DIR or build)
  --clean-stale         delete another run's namespaces and bridge instead of refusing
  --repredict           run advise again over the measured runs already in --output (with
                        another --calibration, say), reusing the rig's measurements there;
                        trains nothing, needs no root
  --quick               smoke run: 1 Gbit/s, 2 ranks, hidden 16, 64 features, 4 epochs
  -h, --help            this help
EOF
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command_line="$0 $*"
rates="1,10"
ranks_list="2,4"
hidden_list="16,128"
widths="64,512"
calibration=""
workload_args="--workload products-like --scale 0.05 --features stored"
advise_args=""
epochs=8
warmup_epochs=3
tolerance=0.05
seed=1
output="$root/results/advise-validation"
build="${GNNBED_BUILD_DIR:-$root/build}"
clean_stale=0
repredict=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rates) rates="$2"; shift 2 ;;
    --ranks) ranks_list="$2"; shift 2 ;;
    --hidden) hidden_list="$2"; shift 2 ;;
    --feature-widths) widths="$2"; shift 2 ;;
    --calibration) calibration="$(realpath "$2")"; shift 2 ;;
    --workload) workload_args="$2"; shift 2 ;;
    --advise-args) advise_args="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --warmup-epochs) warmup_epochs="$2"; shift 2 ;;
    --tolerance) tolerance="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --output) output="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --clean-stale) clean_stale=1; shift ;;
    --repredict) repredict=1; shift ;;
    --quick) rates="1"; ranks_list="2"; hidden_list="16"; widths="64"; epochs=4; warmup_epochs=2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "validate_advise: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

fail() { echo "validate_advise: $*" >&2; exit 1; }
[[ $repredict -eq 1 || $(id -u) -eq 0 ]] || fail "needs root (ip netns, tc)"
[[ "$warmup_epochs" =~ ^[0-9]+$ ]] || fail "--warmup-epochs must be a number of epochs"
[[ "$epochs" =~ ^[0-9]+$ && "$epochs" -gt "$warmup_epochs" ]] ||
  fail "--epochs must be more than --warmup-epochs ($warmup_epochs)"
[[ "$seed" =~ ^[0-9]+$ ]] || fail "--seed must be a whole number"
awk -v t="$tolerance" 'BEGIN { exit !(t + 0 == t && t >= 0) }' || fail "--tolerance must be a fraction, at least 0"
run_experiment="$build/exec/run_experiment"
for tool in "$run_experiment" "$build/sim/simulate"; do [[ -x "$tool" ]] || fail "$tool is not built"; done
[[ -z "$calibration" || -f "$calibration" ]] || fail "no calibration file $calibration"
for tool in ip tc mpirun; do command -v "$tool" > /dev/null || fail "$tool not found"; done

IFS=, read -r -a rate_values <<< "$rates"
IFS=, read -r -a rank_values <<< "$ranks_list"
IFS=, read -r -a hidden_values <<< "$hidden_list"
IFS=, read -r -a width_values <<< "$widths"
read -r -a workload_words <<< "$workload_args"
read -r -a advise_words <<< "$advise_args"
for value in "${rank_values[@]}"; do
  [[ "$value" =~ ^[0-9]+$ && "$value" -ge 2 && "$value" -le 200 ]] || fail "ranks must be 2..200"
done
for value in "${hidden_values[@]}" "${width_values[@]}"; do
  [[ "$value" =~ ^[0-9]+$ && "$value" -ge 1 ]] || fail "hidden and feature widths must be whole numbers, at least 1"
done

# The output folder is checked before anything runs.
if [[ $repredict -eq 1 ]]; then
  [[ -f "$output/runs.tsv" && -f "$output/link-unshaped.json" ]] ||
    fail "--repredict: $output holds no measured runs (runs.tsv, link-unshaped.json)"
fi
mkdir -p "$output/settings" "$output/logs" || fail "cannot create $output"
[[ -w "$output" ]] || fail "cannot write to $output"
output="$(realpath "$output")"

# Not nproc: it answers OMP_NUM_THREADS when that is set (as it is for the ranks).
cores=$(getconf _NPROCESSORS_ONLN)
ranks_per_machine=1
load_average=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load_average" 'BEGIN { exit !(l > 0.5) }'; then
  echo "warning: load average $load_average: other processes share the cores and stretch the" \
    "measured epochs unevenly" >&2
fi

# shellcheck source=experiments/emulated_cluster.sh
source "$root/experiments/emulated_cluster.sh"
if [[ $repredict -eq 1 ]]; then
  stack_cpu_seconds_per_byte=$(stack_cpu_seconds_per_byte_of "$output/link-unshaped.json")
  [[ -f "$output/shared-core.json" ]] && time_slice_seconds=$(time_slice_seconds_of "$output/shared-core.json")
  [[ -f "$output/transfer-overlap.json" ]] &&
    progress_window_bytes=$(progress_window_bytes_of "$output/transfer-overlap.json")
else
  emulated_cluster_open "$(printf '%s\n' "${rank_values[@]}" | sort -n | tail -n 1)"
  measure_stack_cpu_seconds_per_byte "$output"
  measure_time_slice_seconds "$output"
  measure_progress_window_bytes "$output"
fi

# What every measured run and advise's simulations share: the namespaces share this machine's
# cores and network stack, and the simulator shares them the same way (as in
# validate_emulated_cluster.sh).
experiment=("${workload_words[@]}" --epochs "$epochs" --set training.eval_every=-1
  --set "training.warmup_epochs=$warmup_epochs")
cluster=(--cluster emulated-cluster --cluster-set "shared_cores=$cores"
  --cluster-set "ranks_per_machine=1"
  --cluster-set "nic.cpu_seconds_per_byte=$stack_cpu_seconds_per_byte"
  --cluster-set "shared_core_time_slice_seconds=$time_slice_seconds"
  --cluster-set "nic.progress_window_bytes=$progress_window_bytes")
[[ -n "$calibration" ]] && cluster+=(--calibration "$calibration")

manifest="$output/runs.tsv"
if [[ $repredict -eq 0 ]]; then
  printf 'setting\trate_gbps\tranks\thidden\tfeature_width\tcandidate\tresult\texit_code\twall_seconds\tload_average_before\n' > "$manifest"
fi

# Advise's candidates at one setting as lines "NAME<TAB>STRATEGY<TAB>FIELD=VALUE ...", the ones
# that fit, in an order shuffled with the seed and the setting's name (not advise's ranking: the
# machine's speed drifts over minutes, and measuring the favourite first would bias the check).
candidates_to_measure() {
  /usr/bin/python3 - "$1" "$seed" "$2" <<'PYTHON'
import json, random, sys
ranked = json.load(open(sys.argv[1]))["ranked"]
order = list(range(len(ranked)))
random.Random(f"{sys.argv[2]}/{sys.argv[3]}").shuffle(order)
for i in order:
    c = ranked[i]
    sets = " ".join(f"{k}={v}" for k, v in sorted(c["assignments"].items()))
    print(f"{c['name']}\t{c['strategy']}\t{sets}")
PYTHON
}

# One candidate trained for real; stdin from /dev/null, or mpirun would read the candidate list.
measure_candidate() {
  local setting="$1" rate="$2" ranks="$3" hidden="$4" width="$5" name="$6" strategy="$7"
  local assignments="$8" index="$9" label result code start wall load_before
  label="$setting-c$index"
  result="settings/$setting/run-c$index.json"
  local sets=()
  for assignment in $assignments; do sets+=(--set "$assignment"); done
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s.%N)
  code=0
  mpirun_in_cluster "$ranks" "$run_experiment" "${experiment[@]}" --set "workload.feature_dim=$width" \
    --hidden "$hidden" --strategy "$strategy" "${sets[@]}" --quiet --output "$output/$result" \
    < /dev/null > "$output/logs/$label.txt" 2>&1 || code=$?
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$setting" "$rate" "$ranks" "$hidden" "$width" \
    "$name" "$result" "$code" "$wall" "$load_before" >> "$manifest"
  echo "    $name: $(grep -o 'epoch time [0-9.]* s' "$output/logs/$label.txt" || echo "FAILED (exit $code)")"
}

for rate in "${rate_values[@]}"; do
  [[ $repredict -eq 1 ]] || shape "$rate"
  for ranks in "${rank_values[@]}"; do
    for hidden in "${hidden_values[@]}"; do
      for width in "${width_values[@]}"; do
        setting="${rate}gbps-r$ranks-h$hidden-f$width"
        mkdir -p "$output/settings/$setting"
        echo "== $setting: advise"
        "$root/experiments/advise" --build "$build" "${cluster[@]}" \
          --cluster-set "nic.bandwidth_gbps=$rate" --cluster-set "machines=$ranks" \
          "${experiment[@]}" --set "workload.feature_dim=$width" --hidden "$hidden" \
          "${advise_words[@]}" -j "$cores" --quiet --output "$output/settings/$setting/advise.json" \
          > "$output/logs/$setting-advise.txt" 2>&1 || fail "advise failed: $output/logs/$setting-advise.txt"
        head -n 2 "$output/logs/$setting-advise.txt" | tail -n 1 | sed 's/^/  first: /'
        [[ $repredict -eq 0 ]] || continue
        index=0
        while IFS=$'\t' read -r name strategy assignments; do
          measure_candidate "$setting" "$rate" "$ranks" "$hidden" "$width" "$name" "$strategy" "$assignments" "$index"
          index=$((index + 1))
        done < <(candidates_to_measure "$output/settings/$setting/advise.json" "$setting")
      done
    done
  done
done

echo "== table"
/usr/bin/python3 "$root/experiments/advise_validation_table.py" --output "$output" \
  --tolerance "$tolerance" --command "$command_line" --calibration "$calibration"
