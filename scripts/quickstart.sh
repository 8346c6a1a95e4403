#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the built-in default: GCN with
# Kipf & Welling's settings on the bundled Cora data, printing accuracy and epoch time, and
# drawing the training curve to results/quickstart/training_curve.png.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh"
build="${GNNBED_BUILD_DIR:-$root/build}"
out="$root/results/quickstart"
mkdir -p "$out"
"$build/exec/train" --workload cora --model gcn --epochs 200 --output "$out/cora_gcn.json"
/usr/bin/python3 "$root/plots/plot_training.py" "$out/cora_gcn.json" --output "$out/training_curve"
