#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the built-in default, the bundled
# Cora data:
#   1. single-process GCN with Kipf & Welling's settings: accuracy, epoch time, training curve;
#   2. distributed GraphSAGE on 2 MPI ranks with DGL-style feature pull and with P3, measured;
#   3. the same two runs simulated (SimGrid) on this machine, from a quick calibration of it;
#   4. measured and simulated side by side: a printed comparison (epoch-time breakdown, bytes per
#      kind, accuracy) and a figure of it.
# Everything lands in results/quickstart/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
build="${GNNBED_BUILD_DIR:-$root/build}"
out="$root/results/quickstart"
mkdir -p "$out"

echo "== single process: GCN on Cora"
"$build/exec/train" --workload cora --model gcn --epochs 200 --output "$out/cora_gcn.json"
/usr/bin/python3 "$root/plots/plot_training.py" "$out/cora_gcn.json" --output "$out/training_curve"

mpi_flags=(--oversubscribe)
if [ "$(id -u)" -eq 0 ]; then mpi_flags+=(--allow-run-as-root); fi
for strategy in dgl-pull p3; do
  echo "== 2 ranks: GraphSAGE on Cora with $strategy"
  OMP_NUM_THREADS=1 mpirun "${mpi_flags[@]}" -np 2 "$build/exec/run_experiment" --workload cora \
    --strategy "$strategy" --batch-size 16 --epochs 30 --set training.eval_every=0 --quiet \
    --output "$out/cora_$strategy.json"
done
echo "== calibration of this machine (quick: kernels and transport through run_experiment's code)"
OMP_NUM_THREADS=1 mpirun "${mpi_flags[@]}" -np 2 "$build/exec/calibrate" --quick \
  --output "$out/calibration.json"
echo "== simulated: the same two runs on this machine, in SimGrid"
"$build/sim/simulate" --workload cora --batch-size 16 --cluster this-machine \
  --calibration "$out/calibration.json" --sweep distribution.strategy=dgl-pull,p3 \
  --output "$out/cora_simulated.json"
echo "== comparison, measured and simulated"
/usr/bin/python3 "$root/plots/compare_runs.py" "$out/cora_dgl-pull.json" "$out/cora_p3.json" \
  "$out/cora_simulated.json" --output "$out/strategies"
