#!/usr/bin/env bash
# The P3 paper's headline comparison, predicted (issue 4): products-like at full size, GraphSAGE,
# fanouts (25,10), batch 1000 per GPU, on the p3-cluster preset, dgl-pull vs p3 over hidden sizes.
# Two models of the deployment:
#   per-gpu:     one rank per GPU (16 ranks): our p3 splits features 16 ways and every GPU pushes
#                partials to every other GPU;
#   per-machine: one rank per machine with the rates of its 4 GPUs and a 4000-seed batch: P3's
#                per-machine feature split.
# Results in results/paper/ (JSON, CSV per model); about 10 minutes on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
simulate="${GNNBED_BUILD_DIR:-$root/build}/sim/simulate"
out="$root/results/paper"
mkdir -p "$out"
common=(--workload products-like --cluster p3-cluster --sweep distribution.strategy=dgl-pull,p3 -j 2)

"$simulate" "${common[@]}" --sweep model.hidden=16,32,64,128,256,512 \
  --output "$out/p3_cluster_per_gpu.json"

per_machine=(--batch-size 4000 --cluster-set ranks_per_machine=1
  --cluster-set device.memory_bytes=68719476736)
for op in layer_forward layer_backward; do
  per_machine+=(--cluster-set "device.cost_model.$op.dense_flops_per_second=1.6e13"
                --cluster-set "device.cost_model.$op.sparse_flops_per_second=4.8e11"
                --cluster-set "device.cost_model.$op.memory_bytes_per_second=1.6e12")
done
per_machine+=(--cluster-set host.cost_model.sample.sampled_edges_per_second=4e7
              --cluster-set host.cost_model.sample.planned_nodes_per_second=2.8e7
              --cluster-set host.cost_model.gather_features.memory_bytes_per_second=1.6e10)
"$simulate" "${common[@]}" "${per_machine[@]}" --sweep model.hidden=16,32,64,128,256,512 \
  --output "$out/p3_cluster_per_machine.json"
