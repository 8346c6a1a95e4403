#!/usr/bin/env bash
# Issue 5's "show it" for P3, predicted on the p3-cluster preset (4 machines x 4 P100, 10 GbE;
# one rank per GPU), products-like, GraphSAGE, hidden 32:
#   1. pipelining gain: p3 with and without distribution.pipeline (batch 1000 per rank, fanouts
#      25,10, full epochs), with the stash each rank holds;
#      also with one rank per machine (the paper's 4-way feature split, batch 4000);
#   2. caching gain: p3 without copies and with every partition copied onto every machine
#      (cache budget 1.1 GB per rank, structure replicated), with and without pipelining;
#   3. p3 vs dgl-pull without sampling (fanouts -1,-1, P3's Fig. 7 setting), the P100s' 16 GB
#      enforced (a point that does not fit is reported as out of memory), the epoch extrapolated
#      from 2 iterations;
# and, when MEASURE=1, the pipelining gain measured with run_experiment on 2 ranks of this machine
# (shared memory) next to simulate's prediction for the same run on the this-machine preset.
# Usage: experiments/p3_show_it.sh [SCALE [SCALE_NO_SAMPLING]] (default 1 and 0.1; planning
# without sampling at full size outgrows 23 GB of host memory). Results in results/show_it/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GNNBED_BUILD_DIR:-$root/build}"
out="$root/results/show_it"
mkdir -p "$out"
scale="${1:-1}"
scale_full="${2:-0.1}"
common=(--workload products-like --cluster p3-cluster --hidden 32 --strategy p3 --quiet)

"$build/sim/simulate" "${common[@]}" --scale "$scale" \
  --sweep distribution.pipeline=false,true --output "$out/pipelining.json"
# The per-machine deployment model: experiments/figures/profiles.json's argument list (one rank per
# machine with the rates of its 4 GPUs), less the cluster and hidden size this script sets itself.
mapfile -t per_machine < <(/usr/bin/python3 - "$root/experiments/figures/profiles.json" <<'PY'
import json, sys
args = json.load(open(sys.argv[1]))["profiles"]["per-machine"]
pairs = zip(args[0::2], args[1::2])
print("\n".join(f"{flag}\n{value}" for flag, value in pairs if flag not in ("--cluster", "--hidden")))
PY
)
"$build/sim/simulate" "${common[@]}" --scale "$scale" "${per_machine[@]}" \
  --sweep distribution.pipeline=false,true --output "$out/per_machine.json"
"$build/sim/simulate" "${common[@]}" --scale "$scale" --cache-budget 1100000000 \
  --sweep distribution.pipeline=false,true --output "$out/caching.json"
"$build/sim/simulate" --workload products-like --cluster p3-cluster --hidden 32 --quiet \
  --scale "$scale_full" --fanouts -1,-1 --iterations 2 \
  --sweep distribution.strategy=dgl-pull,p3 --output "$out/no_sampling.json"

if [ "${MEASURE:-0}" = 1 ]; then
  # Small enough for 2 shared cores: 49k nodes, batches of 250 (8 iterations per epoch).
  measured=(--workload products-like --scale 0.02 --hidden 32 --strategy p3 --batch-size 250
            --epochs 4 --set training.warmup_epochs=1 --set training.eval_every=-1 --quiet)
  for pipeline in false true; do
    OMP_NUM_THREADS=1 mpirun -np 2 --oversubscribe ${MPIRUN_FLAGS:-} "$build/exec/run_experiment" \
      "${measured[@]}" --pipeline "$pipeline" --output "$out/measured-$pipeline.json"
  done
  "$build/sim/simulate" --cluster this-machine "${measured[@]}" \
    --sweep distribution.pipeline=false,true --output "$out/measured-predicted.json"
fi

/usr/bin/python3 - "$out" <<'PY'
import json
import os
import sys

out = sys.argv[1]

def points(name):
    return json.load(open(f"{out}/{name}.json"))["points"]

def epoch(result):
    if result["out_of_memory"]:
        return None
    return result["epoch_seconds"]

print("1-2. p3 on p3-cluster (products-like, GraphSAGE, hidden 32, batch 1000 per rank):")
rows = {}
names = {"pipelining": "no copies", "caching": "cached", "per_machine": "per machine"}
for name in ("pipelining", "caching", "per_machine"):
    for point in points(name):
        result = point["result"]
        key = (name, str(point["assignments"]["distribution.pipeline"]).lower())
        rows[key] = epoch(result)
        stash = max(r.get("stash_bytes", 0) for r in result["ranks"])
        device = max(r["device_peak_bytes"] for r in result["ranks"])
        b = result.get("breakdown_max_seconds", {})
        print(f"  {names[name]:<11} pipeline={key[1]:<5}"
              f" epoch {rows[key]:8.3f} s  stash {stash / 1e3:8.1f} kB  device peak "
              f"{device / 2**20:8.1f} MiB  communication {b.get('communication', 0):7.3f} s"
              f"  compute {b.get('compute', 0):7.3f} s")
for name in ("pipelining", "caching", "per_machine"):
    off, on = rows[(name, "false")], rows[(name, "true")]
    print(f"  pipelining gain ({names[name]}): {off / on:.2f}x ({100 * (off - on) / on:.0f} % faster)")
print(f"  caching gain: {rows[('pipelining', 'false')] / rows[('caching', 'false')]:.2f}x without "
      f"pipelining, {rows[('pipelining', 'true')] / rows[('caching', 'true')]:.2f}x with")

print("3. without sampling (fanouts -1,-1), P100 memory enforced:")
times = {}
for point in points("no_sampling"):
    result = point["result"]
    strategy = point["assignments"]["distribution.strategy"]
    if result["out_of_memory"]:
        print(f"  {strategy:<9} out of memory: {result['out_of_memory_reason']}")
        continue
    times[strategy] = result["epoch_seconds"]
    sent = sum(r["bytes_sent_per_epoch"]["total"] for r in result["ranks"]) / len(result["ranks"])
    device = max(r["device_peak_bytes"] for r in result["ranks"])
    print(f"  {strategy:<9} epoch {result['epoch_seconds']:8.3f} s  {sent / 1e6:9.1f} MB sent per "
          f"rank  device peak {device / 2**30:6.2f} GiB")
if len(times) == 2:
    print(f"  p3 vs dgl-pull: {times['dgl-pull'] / times['p3']:.2f}x")

if os.path.exists(f"{out}/measured-true.json"):
    print("measured on 2 ranks of this machine (products-like 0.02, batch 250), epoch seconds:")
    measured = {p: json.load(open(f"{out}/measured-{p}.json"))["epoch_seconds"]
                for p in ("false", "true")}
    predicted = {str(pt["assignments"]["distribution.pipeline"]).lower(): epoch(pt["result"])
                 for pt in points("measured-predicted")}
    for p in ("false", "true"):
        print(f"  pipeline={p:<5} measured {measured[p]:7.3f} s  predicted {predicted[p]:7.3f} s")
    print(f"  gain: measured {measured['false'] / measured['true']:.2f}x, "
          f"predicted {predicted['false'] / predicted['true']:.2f}x")
PY
