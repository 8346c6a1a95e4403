#!/usr/bin/env bash
# The foundation's benchmarks, on the products-like preset:
#   1. neighbour-sampler throughput (full size, 1000 seeds, fanouts 25,10; 1 and 2 threads)
#   2. GraphSAGE layer forward+backward GFLOP/s on a sampled mini-batch (scale 0.1, hidden 32)
#   3. mini-batch GraphSAGE epoch time (scale 0.1, batch 1000, fanouts 25,10, hidden 32)
#   4. load time of the binary format for the full-size graph (123.7 M CSR entries)
# Results go to results/benchmarks/ (JSON); a summary is printed at the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GNNBED_BUILD_DIR:-$root/build}"
out="$root/results/benchmarks"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$out"

echo "== 1/4 sampler throughput (products-like, full size)"
"$build/experiments/bench_sampler" --seconds 5 | tee "$scratch/sampler.txt"
tail -n 1 "$scratch/sampler.txt" > "$out/sampler.json"

echo "== 2/4 GraphSAGE layer GFLOP/s (products-like@0.1)"
"$build/experiments/bench_sage_layer" --seconds 2 | tee "$scratch/layer.txt"
tail -n 1 "$scratch/layer.txt" > "$out/sage_layer.json"

echo "== 3/4 mini-batch GraphSAGE epoch (products-like@0.1)"
"$build/exec/train" --workload products-like --scale 0.1 --model sage --hidden 32 \
  --batch-size 1000 --fanouts 25,10 --epochs 3 --set training.eval_every=0 \
  --output "$out/sage_epoch.json"

echo "== 4/4 binary format load time (products-like, full size)"
"$build/workloads/workload" convert --workload products-like --features none \
  --output "$scratch/products.bin" | head -n 1
"$build/workloads/workload" info --workload binary --path "$scratch/products.bin" --features none \
  | tee "$scratch/load.txt" | head -n 1
sed -n '/^{/,$p' "$scratch/load.txt" > "$out/binary_load.json"

/usr/bin/python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
sampler = json.load(open(os.path.join(out, "sampler.json")))
layer = json.load(open(os.path.join(out, "sage_layer.json")))
epoch = json.load(open(os.path.join(out, "sage_epoch.json")))
load = json.load(open(os.path.join(out, "binary_load.json")))
print("\nsummary")
for run in sampler["runs"]:
    print(f"  sampler, {run['threads']} thread(s): {run['sampled_edges_per_second']/1e6:.1f} M sampled edges/s, "
          f"{run['batches_per_second']:.0f} batches/s")
for l in layer["layers"]:
    print(f"  SAGE layer {l['layer']} ({l['in_dim']}->{l['out_dim']}): {l['gflops_per_second']:.2f} GFLOP/s "
          f"(1024^3 sgemm: {layer['sgemm_1024_gflops_per_second']:.1f})")
e = epoch["epochs"][-1]
print(f"  mini-batch SAGE epoch on {epoch['dataset']['name']}: {epoch['epoch_seconds']:.2f} s mean "
      f"(last: sampling {e['sampling_seconds']:.2f}, features {e['gather_seconds']:.2f}, "
      f"compute {e['compute_seconds']:.2f} s, {e['steps']} steps)")
print(f"  binary load of {load['num_edges']} CSR entries: {load['load_seconds']:.2f} s")
PY
