#!/bin/bash
# The checks of the CUDA/NCCL engine that need an NVIDIA GPU (docs/gpu.md), in one run, most
# important first, each under its own time limit so that a slow step cannot starve the rest:
#   1. the device;
#   2. test_backend_kernels_cuda: every CUDA kernel against the CPU's;
#   3. test_gpu_distributed on 1 and 2 ranks (2 ranks share one GPU over MPI; NCCL cases need a
#      GPU per rank and skip otherwise);
#   4. bench_cuda_kernels: kernel throughput against the device's peaks, our aggregation kernel
#      against cuSPARSE;
#   5. a GPU calibration for simulate: the network over MPI between two ranks of this machine
#      (--quick), then every compute case on one rank's GPU (full); and the host's sampling rate
#      on the calibration's graph and on products-like (bench_sampler);
#   6. one epoch of mini-batch GraphSAGE on the full products-like preset with stored features
#      (batch 1000, fanouts 25,10), hidden 32 and 256, on the GPU and on the CPU of the same
#      machine, one rank each; on the GPU with inputs gathered there and gathered on the host;
#      one over NCCL; one of GAT (its attention on the GPU); and p3 on 2 ranks sharing the GPU;
#   7. full-graph roc, neutronstar and sancus (each of its bounds) on 2 ranks sharing the GPU,
#      against the same runs on the CPU (experiments/gpu_full_graph_check.sh).
# Writes every log and result under --output, a summary line per step in summary.tsv, and prints
# a table of the epoch times at the end.
#
#   experiments/gpu_checks.sh [--build DIR] [--output DIR] [--skip STEP,...]
# DIR is a build tree (or a copy of its exec/, tests/ and experiments/ binaries). Needs mpirun.
set -uo pipefail

build=build
output=results/gpu-checks
skip=","
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --skip) skip=",$2,"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "gpu_checks.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$output" || exit 2
summary=$output/summary.tsv
printf 'step\texit_code\tseconds\n' >"$summary"
mpirun_flags=(--oversubscribe)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)

# step NAME LIMIT_SECONDS COMMAND...: runs COMMAND with its output in NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  if [[ $skip == *",$name,"* ]]; then
    printf '%s\tskipped\t0\n' "$name" >>"$summary"
    return
  fi
  echo "== $name (limit ${limit} s): $*"
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$output/$name.log" 2>&1
  local code=$?
  printf '%s\t%s\t%s\n' "$name" "$code" "$((SECONDS - start))" >>"$summary"
  echo "   exit $code after $((SECONDS - start)) s"
  if [ "$code" = 0 ]; then
    tail -n 2 "$output/$name.log" | sed 's/^/   | /'
  else
    { grep -m 6 -i -E 'error|fail|what\(\)|abort|not found' "$output/$name.log" ||
        tail -n 6 "$output/$name.log"; } | sed 's/^/   | /'
  fi
}

step device 30 nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max --format=csv
step kernels 120 "$build/tests/test_backend_kernels_cuda" --gtest_output="xml:$output/kernels.xml"
step distributed_np1 180 mpirun "${mpirun_flags[@]}" -np 1 "$build/tests/test_gpu_distributed" \
  --gtest_output="xml:$output/distributed_np1.xml"
step distributed_np2 180 mpirun "${mpirun_flags[@]}" -np 2 "$build/tests/test_gpu_distributed" \
  --gtest_output="xml:$output/distributed_np2.xml"
step bench 180 "$build/experiments/bench_cuda_kernels" --output "$output/bench_cuda_kernels.json"

# Unbound like the epoch runs below, so that calibration's host ops (sampling, gathers) run with
# the threads training has.
step calibrate_network 180 mpirun "${mpirun_flags[@]}" --bind-to none -np 2 "$build/exec/calibrate" \
  --quick --device cuda -o "$output/calibration-gpu.json"
step calibrate_compute 600 mpirun "${mpirun_flags[@]}" --bind-to none -np 1 "$build/exec/calibrate" \
  --device cuda -o "$output/calibration-gpu.json"
# The host's sampling rate on the calibration's graph (csbm, 262,144 nodes, degree 16) and on the
# products-like graph the epochs below run on: how much a larger graph slows it down.
step sampler-calibration-graph 60 "$build/experiments/bench_sampler" --threads 1 --seconds 3 \
  --workload csbm --set workload.num_nodes=262144 --set workload.average_degree=16
step sampler-products 120 "$build/experiments/bench_sampler" --threads 1 --seconds 3 \
  --workload products-like

# Unbound, so that the CPU run's OpenMP kernels use every core (mpirun binds a lone rank to one
# core, which leaves it one thread): execution.omp_threads in each result says what it had.
# epoch_run DEVICE HIDDEN [TRANSPORT [FEATURES [MODEL]]]: FEATURES is --device-features (auto:
# gathered on the GPU from a device copy of the features; host: gathered on the host into
# page-locked memory); MODEL is sage unless named.
epoch_run() {
  local device=$1 hidden=$2 transport=${3:-mpi} features=${4:-auto} model=${5:-sage}
  local name="epoch-$device-$transport-h$hidden"
  [ "$features" = auto ] || name="$name-$features-gather"
  [ "$model" = sage ] || name="$name-$model"
  step "$name" 300 mpirun "${mpirun_flags[@]}" --bind-to none -np 1 \
    "$build/exec/run_experiment" --workload products-like --features stored --strategy dgl-pull \
    --model "$model" --batch-size 1000 --fanouts 25,10 --hidden "$hidden" --epochs 1 --device "$device" \
    --transport "$transport" --device-features "$features" --set training.eval_every=-1 -q \
    -o "$output/$name.json"
}
epoch_run cuda 32
epoch_run cuda 32 mpi host
epoch_run cuda 256
epoch_run cuda 32 nccl
epoch_run cuda 32 mpi auto gat
# P3 on the GPU end to end: 2 ranks sharing it over MPI, products-like at a tenth of its size.
step p3-cuda-np2 240 mpirun "${mpirun_flags[@]}" -np 2 "$build/exec/run_experiment" \
  --workload products-like --features stored --scale 0.1 --strategy p3 --model sage \
  --batch-size 1000 --fanouts 25,10 --hidden 32 --epochs 2 --device cuda \
  --set training.eval_every=-1 -q \
  -o "$output/p3-cuda-np2.json"
# Full-graph strategies on the GPU: 2 ranks sharing it over MPI, each run beside the same run on
# the CPU; the loss of every epoch must agree within float32 rounding and the bytes equal.
step full-graph-np2 300 experiments/gpu_full_graph_check.sh --build "$build" \
  --output "$output/full-graph" "${mpirun_flags[@]/#/--mpirun-flag=}"
epoch_run cpu 32
epoch_run cpu 256

echo
echo "== steps"
sed 's/\t/  /g' "$summary"
echo
echo "== epochs (products-like, dgl-pull, GraphSAGE unless named, batch 1000, fanouts 25,10, 1 rank)"
python3 - "$output" <<'EOF'
import glob, json, os, sys
print(f"{'run':30} {'epoch s':>8} {'sampling':>9} {'copy':>7} {'compute':>8} {'comm':>6}")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "epoch-*.json"))):
    try:
        run = json.load(open(path))
    except (OSError, ValueError) as error:
        print(f"{os.path.basename(path):30} unreadable: {error}")
        continue
    epoch = run["epochs"][-1]
    b = epoch["breakdown_max_seconds"]
    print(f"{os.path.basename(path)[6:-5]:30} {epoch['seconds']:8.3f} {b['sampling']:9.3f} "
          f"{b['copy']:7.3f} {b['compute']:8.3f} {b['communication']:6.3f}")
EOF
