#!/bin/bash
# Full-graph strategies on a GPU against the CPU: roc, neutronstar and sancus (each of its three
# bounds), GCN and GAT, on Cora, 2 ranks over MPI (they may share one GPU). Every case runs twice,
# `--device cpu` and `--device cuda`, and must give
#   - the plan's bytes on the wire in both runs (bytes_match_plans);
#   - the same bytes per rank and kind on both devices (the same transfers were decided);
#   - the loss of every epoch within float32 rounding of the CPU's (cuBLAS sums gemms in its own
#     order, so the two runs drift apart by a few units in the last place per epoch).
# Prints one line per case and exits non-zero when any case fails.
#
#   experiments/gpu_full_graph_check.sh [--build DIR] [--output DIR] [--epochs N]
#                                       [--mpirun-flag FLAG ...]
set -uo pipefail

build=build
output=results/gpu-full-graph
epochs=20
mpirun_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --mpirun-flag=*) mpirun_flags+=("${1#--mpirun-flag=}"); shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "gpu_full_graph_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$build/exec/run_experiment" ] ||
  { echo "gpu_full_graph_check.sh: $build/exec/run_experiment is missing" >&2; exit 2; }
mkdir -p "$output" || exit 2

# NAME then run_experiment's options for it.
cases=(
  "roc-gcn|--strategy roc --model gcn"
  "roc-gat|--strategy roc --model gat"
  "neutronstar-hybrid-gcn|--strategy neutronstar --neutronstar hybrid --model gcn"
  "sancus-e1-gcn|--strategy sancus --sancus-staleness 1 --model gcn"
  "sancus-e1-gat|--strategy sancus --sancus-staleness 1 --model gat"
  "sancus-a1-gcn|--strategy sancus --sancus-bound adaptive --sancus-staleness 1 --model gcn"
  "sancus-h-gcn|--strategy sancus --sancus-bound change --sancus-change-threshold 0.6 --model gcn"
)

failed=0
for entry in "${cases[@]}"; do
  name=${entry%%|*}
  read -r -a options <<<"${entry#*|}"
  for device in cpu cuda; do
    mpirun "${mpirun_flags[@]}" -np 2 "$build/exec/run_experiment" --workload cora --batch-size 0 \
      --partitioner contiguous --epochs "$epochs" --set training.eval_every=-1 -q \
      --device "$device" "${options[@]}" -o "$output/$name-$device.json" \
      >"$output/$name-$device.log" 2>&1 ||
      { echo "$name: the $device run failed (exit $?, $output/$name-$device.log)"; failed=1; continue 2; }
  done
  python3 - "$output/$name-cpu.json" "$output/$name-cuda.json" "$name" <<'EOF' || failed=1
import json, sys
cpu, cuda = (json.load(open(path)) for path in sys.argv[1:3])
name = sys.argv[3]
# Relative: float32 rounding (2^-24 per operation) grown over the epochs' chained updates.
loss_tolerance = 1e-3
problems = []
for run, device in ((cpu, "cpu"), (cuda, "cuda")):
    if not run["bytes_match_plans"]:
        problems.append(f"{device}: transport bytes differ from the plans'")
for rank_cpu, rank_cuda in zip(cpu["ranks"], cuda["ranks"]):
    if rank_cpu["bytes_sent"] != rank_cuda["bytes_sent"]:
        problems.append(f"rank {rank_cpu['rank']} sent {rank_cuda['bytes_sent']} on cuda, "
                        f"{rank_cpu['bytes_sent']} on cpu")
worst = 0.0
for epoch_cpu, epoch_cuda in zip(cpu["epochs"], cuda["epochs"]):
    difference = abs(epoch_cuda["loss"] - epoch_cpu["loss"]) / max(abs(epoch_cpu["loss"]), 1e-30)
    worst = max(worst, difference)
    if difference > loss_tolerance:
        problems.append(f"epoch {epoch_cpu['epoch']}: loss {epoch_cuda['loss']:.7g} on cuda, "
                        f"{epoch_cpu['loss']:.7g} on cpu")
last_cpu, last_cuda = cpu["epochs"][-1], cuda["epochs"][-1]
print(f"{name}: {'ok' if not problems else 'FAILED'}; largest relative loss difference "
      f"{worst:.2e}; last loss {last_cuda['loss']:.7g} (cuda) {last_cpu['loss']:.7g} (cpu); "
      f"epoch {last_cuda['seconds']:.4f} s (cuda) {last_cpu['seconds']:.4f} s (cpu); "
      f"bytes sent by rank 0 {cpu['ranks'][0]['bytes_sent']['total']}")
for problem in problems[:5]:
    print("   " + problem)
sys.exit(1 if problems else 0)
EOF
done
exit $failed
