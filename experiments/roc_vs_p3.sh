#!/usr/bin/env bash
# The P3 paper's comparison with ROC (section 5.9, Fig. 16), predicted: full-graph 2-layer GCN,
# hidden 32, on products-like at several sizes, on the p3-cluster preset (16 ranks). roc trains the
# full graph on contiguous ranges, then, as ROC refits its partitioner, on cost-balanced ranges
# fitted on the contiguous run's simulated parts; p3 trains mini-batches of 1000 seeds per rank
# with full neighbourhoods (sampling off, as the paper runs every system), its epoch extrapolated
# from 3 iterations. Usage: experiments/roc_vs_p3.sh [SCALE ...] (default 0.1 0.25). p3 plans every
# rank's pushed computation graphs in one process: at scale 1 that outgrows 23 GB of memory.
# Results in results/roc/ (JSON and CSV per point) and a table on stdout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
simulate="${GNNBED_BUILD_DIR:-$root/build}/sim/simulate"
out="$root/results/roc"
mkdir -p "$out"
scales=("$@")
[ ${#scales[@]} -gt 0 ] || scales=(0.1 0.25)
common=(--workload products-like --cluster p3-cluster --model gcn --hidden 32 --quiet)

for scale in "${scales[@]}"; do
  "$simulate" "${common[@]}" --scale "$scale" --strategy roc --batch-size 0 \
    --partitioner contiguous --output "$out/roc-$scale-contiguous.json"
  "$simulate" "${common[@]}" --scale "$scale" --strategy roc --batch-size 0 \
    --partitioner cost-balanced --partition-costs "$out/roc-$scale-contiguous.json" \
    --output "$out/roc-$scale-cost-balanced.json"
  "$simulate" "${common[@]}" --scale "$scale" --strategy p3 --batch-size 1000 --fanouts -1,-1 \
    --iterations 3 --output "$out/p3-$scale.json"
done

/usr/bin/python3 - "$out" "${scales[@]}" <<'PY'
import json
import sys

out, scales = sys.argv[1], sys.argv[2:]
print(f"{'scale':>6} {'run':<26} {'epoch s':>8} {'MB sent/rank':>13} {'p3 / roc':>9}")
for scale in scales:
    times = {}
    for run in ("roc-contiguous", "roc-cost-balanced", "p3"):
        name = run.replace("roc-", f"roc-{scale}-") if run != "p3" else f"p3-{scale}"
        result = json.load(open(f"{out}/{name}.json"))["points"][0]["result"]
        if result["out_of_memory"]:
            print(f"{scale:>6} {run:<26} out of memory: {result['out_of_memory_reason']}")
            continue
        sent = sum(r["bytes_sent_per_epoch"]["total"] for r in result["ranks"]) / len(result["ranks"])
        times[run] = result["epoch_seconds"]
        ratio = f"{times['p3'] / times['roc-cost-balanced']:.2f}" if run == "p3" else ""
        print(f"{scale:>6} {run:<26} {result['epoch_seconds']:>8.3f} {sent / 1e6:>13.1f} {ratio:>9}")
PY
