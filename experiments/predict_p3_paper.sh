#!/usr/bin/env bash
# The P3 paper's headline comparison, predicted (issue 4): products-like at full size, GraphSAGE,
# fanouts (25,10), batch 1000 per GPU, on the p3-cluster preset, dgl-pull vs p3 over hidden sizes.
# Two models of the deployment:
#   per-gpu:     one rank per GPU (16 ranks): our p3 splits features 16 ways and every GPU pushes
#                partials to every other GPU;
#   per-machine: one rank per machine with the rates of its 4 GPUs (their kernels, their 4 trainers'
#                sampling, gathering and assembling of features, their 4 PCIe links) and a
#                4000-seed batch: P3's per-machine feature split.
# Results in results/paper/ (JSON, CSV per model); about 10 minutes on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
simulate="${GNNBED_BUILD_DIR:-$root/build}/sim/simulate"
out="$root/results/paper"
mkdir -p "$out"
common=(--workload products-like --cluster p3-cluster --sweep distribution.strategy=dgl-pull,p3 -j 2)

"$simulate" "${common[@]}" --sweep model.hidden=16,32,64,128,256,512 \
  --output "$out/p3_cluster_per_gpu.json"

# The per-machine deployment model: experiments/figures/profiles.json's argument list (one rank per
# machine with the rates of its 4 GPUs), less the cluster and hidden size this script sets itself.
mapfile -t per_machine < <(/usr/bin/python3 - "$root/experiments/figures/profiles.json" <<'PY'
import json, sys
args = json.load(open(sys.argv[1]))["profiles"]["per-machine"]
pairs = zip(args[0::2], args[1::2])
print("\n".join(f"{flag}\n{value}" for flag, value in pairs if flag not in ("--cluster", "--hidden")))
PY
)
"$simulate" "${common[@]}" "${per_machine[@]}" --sweep model.hidden=16,32,64,128,256,512 \
  --output "$out/p3_cluster_per_machine.json"
