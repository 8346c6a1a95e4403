#!/usr/bin/env bash
# Validation on an emulated cluster (docs/design.md, "The fidelity loop"): one network namespace
# per machine (of one rank, or of --ranks-per-machine) on this machine, each joined by a veth pair
# to a bridge and shaped with tc tbf in both
# directions, Open MPI launched across them through a plm_rsh_agent that runs its command inside
# the named namespace. For every configuration (rate x hidden x ranks x strategy) the same
# experiment runs for real (run_experiment) and in the simulator (simulate --cluster
# emulated-cluster), and a table of predicted vs measured epoch time and a figure are written.
#
# Needs root (ip netns, tc). Refuses to start when namespaces or the bridge with its prefix exist
# (another run, or a killed one); --clean-stale deletes them first. Everything it creates
# (namespaces, veths, bridge, temporary files, processes in the namespaces) is removed on exit,
# error or interrupt.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: experiments/validate_emulated_cluster.sh [options]
  --rates LIST        shaped link rates in Gbit/s (default 1,2.5,10)
  --hidden LIST       hidden widths (default 16,128)
  --ranks LIST        ranks (default 2,4)
  --ranks-per-machine G
                      ranks per emulated machine (default 1): G consecutive ranks share one
                      namespace and its shaped link, and reach each other at its address,
                      delivered locally; the simulator's cluster has ranks/G machines of G ranks
  --strategies LIST   strategies (default dgl-pull,p3)
  --calibration FILE  calibration file for the simulator (from calibrate; default: none, the
                      preset's cost model)
  --workload "ARGS"   workload and experiment options for both sides
                      (default "--workload products-like --scale 0.05 --features stored":
                      stored features, as real datasets have, not generated on every read)
  --epochs N          epochs per measured run (default 8; the table takes the median of those
                      after the warm-up)
  --warmup-epochs N   epochs not measured (default 4): until a rank's buffers have grown to the
                      largest batch, epochs fault in new pages (run_experiment reports the faults
                      per epoch), which the simulator's steady state does not have
  --output DIR        results directory (default results/validation)
  --build DIR         build directory (default $GNNBED_BUILD_DIR or build)
  --bandwidth-check   first|all|none: MPI ping-pong (calibrate --quick) and exchanges one way
                      and both ways, through MPI (bench_link_exchange) and plain TCP
                      (tcp_link_exchange.py), through the shaped link at the first rate or at
                      every rate (default first)
  --evaluation        also measure one evaluation after the last epoch (run_experiment's
                      evaluation_seconds) and predict it (simulate --evaluation)
  --record            also write each run's first-epoch timeline (runs/LABEL.trace.json, Chrome
                      trace) and its first measured iteration's plans with their measured op
                      durations (runs/LABEL.plans.json, for simulate --replay-plans)
  --clean-stale       delete existing gnnbed-v* namespaces and the bridge instead of refusing
  --quick             smoke run: 1 Gbit/s, hidden 16, 2 ranks, both strategies
  -h, --help          this help
EOF
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command_line="$0 $*"
rates="1,2.5,10"
hidden_list="16,128"
ranks_list="2,4"
ranks_per_machine=1
strategies="dgl-pull,p3"
calibration=""
workload_args="--workload products-like --scale 0.05 --features stored"
epochs=8
warmup_epochs=4
output="$root/results/validation"
build="${GNNBED_BUILD_DIR:-$root/build}"
bandwidth_check="first"
clean_stale=0
record=0
evaluation=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rates) rates="$2"; shift 2 ;;
    --hidden) hidden_list="$2"; shift 2 ;;
    --ranks) ranks_list="$2"; shift 2 ;;
    --ranks-per-machine) ranks_per_machine="$2"; shift 2 ;;
    --strategies) strategies="$2"; shift 2 ;;
    --calibration) calibration="$(realpath "$2")"; shift 2 ;;
    --workload) workload_args="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --warmup-epochs) warmup_epochs="$2"; shift 2 ;;
    --output) output="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --bandwidth-check) bandwidth_check="$2"; shift 2 ;;
    --record) record=1; shift ;;
    --evaluation) evaluation=1; shift ;;
    --clean-stale) clean_stale=1; shift ;;
    --quick) rates="1"; hidden_list="16"; ranks_list="2"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "validate_emulated_cluster: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

fail() { echo "validate_emulated_cluster: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (ip netns, tc)"
case "$bandwidth_check" in first | all | none) ;; *) fail "--bandwidth-check: first, all or none" ;; esac
[[ "$warmup_epochs" =~ ^[0-9]+$ ]] || fail "--warmup-epochs must be a number of epochs"
[[ "$epochs" =~ ^[0-9]+$ && "$epochs" -gt "$warmup_epochs" ]] ||
  fail "--epochs must be more than --warmup-epochs ($warmup_epochs)"
run_experiment="$build/exec/run_experiment"
simulate="$build/sim/simulate"
calibrate="$build/exec/calibrate"
link_bench="$build/experiments/bench_link_exchange"
for tool in "$run_experiment" "$simulate"; do [[ -x "$tool" ]] || fail "$tool is not built"; done
[[ -z "$calibration" || -f "$calibration" ]] || fail "no calibration file $calibration"
for tool in ip tc mpirun; do command -v "$tool" > /dev/null || fail "$tool not found"; done

# Not nproc: it answers OMP_NUM_THREADS when that is set (as it is for the ranks).
cores=$(getconf _NPROCESSORS_ONLN)
load_average=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load_average" 'BEGIN { exit !(l > 0.5) }'; then
  echo "warning: load average $load_average: other processes share the cores, so measured epochs" \
    "stretch and the simulator (which assumes the cores are the ranks') under-predicts" >&2
fi

IFS=, read -r -a rate_values <<< "$rates"
IFS=, read -r -a hidden_values <<< "$hidden_list"
IFS=, read -r -a rank_values <<< "$ranks_list"
IFS=, read -r -a strategy_values <<< "$strategies"
read -r -a workload_words <<< "$workload_args"
[[ "$ranks_per_machine" =~ ^[0-9]+$ && "$ranks_per_machine" -ge 1 ]] ||
  fail "--ranks-per-machine must be a number of ranks, at least 1"
for value in "${rank_values[@]}"; do
  [[ "$value" =~ ^[0-9]+$ && "$value" -ge 2 && "$value" -le 200 ]] || fail "ranks must be 2..200"
  ((value % ranks_per_machine == 0)) || fail "$value ranks are not machines of $ranks_per_machine"
done
# One namespace per machine.
num_namespaces=$(($(printf '%s\n' "${rank_values[@]}" | sort -n | tail -n 1) / ranks_per_machine))
machine_values=()
for value in "${rank_values[@]}"; do machine_values+=($((value / ranks_per_machine))); done
machines_list=$(IFS=,; echo "${machine_values[*]}")

# shellcheck source=experiments/emulated_cluster.sh
source "$root/experiments/emulated_cluster.sh"
emulated_cluster_open "$num_namespaces"

mkdir -p "$output/runs" "$output/logs"
output="$(realpath "$output")"

# What a run on real machines starts with (docs/cluster.md): every namespace sees the same tools,
# and the links between them, before any shaping. The namespaces share a host name: every pair.
echo "== cluster check: the tools every namespace sees, and the unshaped links"
mpirun_in_cluster "$num_namespaces" --per-machine 1 "$build/exec/cluster_check" --pairs ranks \
  --path "$run_experiment" --path "$build/sim/simulate" --output "$output/cluster_check.json" \
  > "$output/logs/cluster-check.txt" 2>&1 || fail "cluster check failed: $output/logs/cluster-check.txt"
sed 's/^/  /' "$output/logs/cluster-check.txt"

# A simulate sweep spread over the namespaces as over machines (docs/cluster.md): one share per
# namespace, then the final run; its points must be the one-process sweep's.
echo "== a sweep spread over the namespaces"
sweep_args="--workload cora --batch-size 64 --strategy p3 -q --sweep model.hidden=16,32,64 --sweep cluster.machines=2,4"
sweep_dir="$output/sweep-shards"
rm -rf "$sweep_dir"
mkdir -p "$sweep_dir"
mpirun_in_cluster "$num_namespaces" --per-machine 1 sh -c \
  "exec $build/sim/simulate $sweep_args --points-dir $sweep_dir/points --shard \$OMPI_COMM_WORLD_RANK/\$OMPI_COMM_WORLD_SIZE" \
  > "$output/logs/sweep-shards.txt" 2>&1 || fail "sharded sweep failed: $output/logs/sweep-shards.txt"
"$build/sim/simulate" $sweep_args --points-dir "$sweep_dir/points" -o "$sweep_dir/merged.json" \
  >> "$output/logs/sweep-shards.txt" 2>&1 || fail "merging the sweep failed: $output/logs/sweep-shards.txt"
"$build/sim/simulate" $sweep_args -o "$sweep_dir/one-process.json" \
  >> "$output/logs/sweep-shards.txt" 2>&1 || fail "the one-process sweep failed"
python3 - "$sweep_dir/merged.json" "$sweep_dir/one-process.json" <<'PYTHON' || fail "the sharded sweep differs from the one-process sweep"
import json, sys
def predicted(path):
    points = json.load(open(path))["points"]
    for point in points:  # wall-clock times of the process that computed the point
        point.pop("load_seconds", None)
        for key in ("planning_seconds", "replay_seconds"):
            point["result"].pop(key, None)
    return points
merged, single = (predicted(path) for path in sys.argv[1:3])
print(f"  {len(merged)} points equal to the one-process sweep: {merged == single}")
sys.exit(0 if merged == single else 1)
PYTHON
grep '^shard' "$output/logs/sweep-shards.txt" | sed 's/^/  /'
manifest="$output/runs.tsv"
printf 'rate_gbps\thidden\tranks\tstrategy\tresult\texit_code\twall_seconds\tload_average_before\tcompute_time_ratio\n' > "$manifest"

# This virtual machine's speed drifts by more than the model's error over the minutes the grid
# takes (docs/validation.md), and the calibration records one moment. With a calibration, a probe
# times a few of its compute cases again just before and just after every run (calibrate --probe,
# 3 s each); the mean ratio is the run's compute_time_ratio, and every configuration is also
# predicted with its own (compute_time_factor), beside the prediction from the calibration alone.
probe_ratio() {
  "$mpirun_host" -np 2 --oversubscribe --bind-to none "$calibrate" --probe "$calibration" \
    > "$scratch/probe.txt" 2>&1 || fail "speed probe failed: $(cat "$scratch/probe.txt")"
  /usr/bin/python3 -c 'import json, sys
print([json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]["compute_time_ratio"])' \
    "$scratch/probe.txt"
}
mpirun_host=$(command -v mpirun)

measure_stack_cpu_seconds_per_byte "$output"
measure_time_slice_seconds "$output"
measure_progress_window_bytes "$output"

echo "== predictions: simulate over the grid"
# The namespaces share this machine's cores and its network stack: the simulator shares them the
# same way.
# The cluster and the experiment every prediction shares; the grid's points are sweeps.
simulate_base=("$simulate" --cluster emulated-cluster --cluster-set "shared_cores=$cores"
  --cluster-set "ranks_per_machine=$ranks_per_machine"
  --cluster-set "nic.cpu_seconds_per_byte=$stack_cpu_seconds_per_byte"
  --cluster-set "shared_core_time_slice_seconds=$time_slice_seconds"
  --cluster-set "nic.progress_window_bytes=$progress_window_bytes"
  "${workload_words[@]}" --epochs "$epochs" --set training.eval_every=-1
  --set "training.warmup_epochs=$warmup_epochs" --quiet)
[[ -n "$calibration" ]] && simulate_base+=(--calibration "$calibration")
# An evaluation after the last epoch only (training.eval_every 0), measured and predicted.
eval_every=-1
if [[ $evaluation -eq 1 ]]; then
  eval_every=0
  simulate_base+=(--evaluation --set training.eval_every=0)
fi
[[ -z "$calibration" ]] && echo "note: no --calibration: the preset's cost model, not this machine's"
"${simulate_base[@]}" --sweep "cluster.nic.bandwidth_gbps=$rates" --sweep "model.hidden=$hidden_list" \
  --sweep "cluster.machines=$machines_list" --sweep "distribution.strategy=$strategies" \
  --jobs "$cores" --output "$output/simulate.json"

first_rate=1
for rate in "${rate_values[@]}"; do
  echo "== rate $rate Gbit/s"
  shape "$rate"
  if [[ "$bandwidth_check" == all || ("$bandwidth_check" == first && $first_rate -eq 1) ]]; then
    if [[ -x "$calibrate" ]]; then
      mpirun_in_cluster 2 --per-machine 1 "$calibrate" --quick --output "$output/link-${rate}gbps.json" \
        > "$output/logs/link-${rate}gbps.txt" 2>&1 || fail "bandwidth check failed: $output/logs/link-${rate}gbps.txt"
      /usr/bin/python3 "$root/experiments/validation_table.py" --link "$output/link-${rate}gbps.json"
    else
      echo "  (no $calibrate: bandwidth check skipped)"
    fi
    # What training's exchanges get (both directions at once, after a pause: it computes between
    # them), through MPI and over plain TCP: where the two differ, the MPI transport, not the
    # link, is what a prediction at the link's rate misses (docs/validation.md).
    if [[ -x "$link_bench" ]]; then
      mpirun_in_cluster 2 --per-machine 1 "$link_bench" --sizes-mib 1,16 --pause-ms 0,250 --repetitions 5 \
        > "$output/logs/link-exchange-${rate}gbps.txt" 2>&1 ||
        fail "link exchange benchmark failed: $output/logs/link-exchange-${rate}gbps.txt"
      grep -v '^{' "$output/logs/link-exchange-${rate}gbps.txt" | sed 's/^/  /'
      grep '^{' "$output/logs/link-exchange-${rate}gbps.txt" > "$output/link-exchange-${rate}gbps.json"
    fi
    tcp_bench="$root/experiments/bench/tcp_link_exchange.py"
    tcp_points=(--sizes-mib "1,16" --pause-ms "0,250")
    ip netns exec "${prefix}1" /usr/bin/python3 "$tcp_bench" server "$subnet_base.2" "${tcp_points[@]}" &
    tcp_server_pid=$!
    ip netns exec "${prefix}0" /usr/bin/python3 "$tcp_bench" client "$subnet_base.2" "${tcp_points[@]}" \
      > "$output/logs/tcp-exchange-${rate}gbps.txt" 2>&1 ||
      fail "plain TCP exchange benchmark failed: $output/logs/tcp-exchange-${rate}gbps.txt"
    wait "$tcp_server_pid" || fail "plain TCP exchange benchmark's server failed"
    grep -v '^{' "$output/logs/tcp-exchange-${rate}gbps.txt" | sed 's/^/  /'
    grep '^{' "$output/logs/tcp-exchange-${rate}gbps.txt" > "$output/tcp-exchange-${rate}gbps.json"
  fi
  first_rate=0
  for ranks in "${rank_values[@]}"; do
    for hidden in "${hidden_values[@]}"; do
      for strategy in "${strategy_values[@]}"; do
        label="$strategy-r$ranks-h$hidden-${rate}gbps"
        result="$output/runs/$label.json"
        ratio=""
        [[ -n "$calibration" ]] && ratio=$(probe_ratio)
        load_before=$(cut -d' ' -f1 /proc/loadavg)
        start=$(date +%s.%N)
        code=0
        recording=()
        if [[ $record -eq 1 ]]; then
          recording=(--trace "$output/runs/$label.trace.json" --plans "$output/runs/$label.plans.json")
        fi
        # The machines are the namespaces, whatever MPI makes of their shared host name.
        machines=()
        [[ $ranks_per_machine -gt 1 ]] && machines=(--ranks-per-machine "$ranks_per_machine")
        mpirun_in_cluster "$ranks" "$run_experiment" "${workload_words[@]}" "${machines[@]}" \
          --strategy "$strategy" \
          --hidden "$hidden" --epochs "$epochs" --set "training.eval_every=$eval_every" \
          --set "training.warmup_epochs=$warmup_epochs" --quiet \
          "${recording[@]}" --output "$result" > "$output/logs/$label.txt" 2>&1 || code=$?
        wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
        probed=""
        if [[ -n "$calibration" ]]; then
          ratio=$(awk -v a="$ratio" -v b="$(probe_ratio)" 'BEGIN { printf "%.4f", (a + b) / 2 }')
          probed=", compute x$ratio of the calibration's"
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$hidden" "$ranks" "$strategy" \
          "runs/$label.json" "$code" "$wall" "$load_before" "$ratio" >> "$manifest"
        epoch=$(grep -o 'epoch time [0-9.]* s' "$output/logs/$label.txt" || echo "FAILED (exit $code)")
        echo "  $label: $epoch (${wall} s wall, load $load_before$probed)"
      done
    done
  done
done

if [[ -n "$calibration" ]]; then
  echo "== predictions at each run's probed speed"
  mkdir -p "$output/probed"
  tail -n +2 "$manifest" | while IFS=$'\t' read -r rate hidden ranks strategy _ _ _ _ ratio; do
    "${simulate_base[@]}" --cluster-set "compute_time_factor=$ratio" \
      --sweep "cluster.nic.bandwidth_gbps=$rate" --sweep "model.hidden=$hidden" \
      --sweep "cluster.machines=$((ranks / ranks_per_machine))" --sweep "distribution.strategy=$strategy" \
      --output "$output/probed/$strategy-r$ranks-h$hidden-${rate}gbps.json" > /dev/null ||
      fail "simulate failed for $strategy, $ranks ranks, hidden $hidden, $rate Gbit/s"
  done
fi

echo "== table"
/usr/bin/python3 "$root/experiments/validation_table.py" --output "$output" \
  --command "$command_line" --calibration "$calibration"
/usr/bin/python3 "$root/plots/plot_validation.py" "$output/validation.csv" \
  --output "$output/validation"
