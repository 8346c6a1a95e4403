#!/bin/bash
# Packs what experiments/gpu_checks.sh needs into one folder, for a GPU machine that has CUDA and
# NCCL but not this project's build dependencies (no Open MPI, OpenBLAS, METIS or Boost):
#   bin/   the GPU checks' binaries of a CUDA build;
#   lib/   every shared library they and Open MPI's plugins load, except the C library's own and
#          CUDA's (the GPU machine's CUDA and NCCL are used);
#   root/  Open MPI's and PMIx's installation trees at their absolute paths (Debian's Open MPI is
#          built with prefix /usr and finds its plugins and help files there).
# On the GPU machine, unpack DIR.tar.xz and `source DIR/activate.sh`: copies root/ into / (over what is there: the
# machine is a throwaway one), puts bin/ on PATH and lib/ ahead of the CUDA libraries it finds on
# LD_LIBRARY_PATH. Then: experiments/gpu_checks.sh --build <pack>.
#
#   experiments/gpu_pack.sh [--build DIR] [--output DIR]     (also writes DIR.tar.xz)
set -euo pipefail

build=build
output=.gpu-pack
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu_pack.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

binaries=(exec/run_experiment exec/calibrate tests/test_backend_kernels_cuda
  tests/test_gpu_distributed experiments/bench_cuda_kernels experiments/bench_sampler)
for binary in "${binaries[@]}"; do
  [ -x "$build/$binary" ] || { echo "gpu_pack.sh: $build/$binary is missing (build it)" >&2; exit 2; }
done
mpi_trees=(/usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi
  /usr/share/pmix /etc/openmpi /etc/pmix-mca-params.conf)

rm -rf "$output"
mkdir -p "$output/bin" "$output/lib" "$output/root"
for binary in "${binaries[@]}"; do
  mkdir -p "$output/$(dirname "$binary")"
  cp "$build/$binary" "$output/$binary"
done
cp -L /usr/bin/orterun "$output/bin/mpirun"
for tree in "${mpi_trees[@]}"; do
  [ -e "$tree" ] && tar -cf - -C / --exclude='*.a' --exclude=include "${tree#/}" |
    tar -xf - -C "$output/root"
done

# Every library the binaries, mpirun and the MPI plugins load, but the C library's and CUDA's.
shared_objects=("${binaries[@]/#/$build/}" /usr/bin/orterun)
mapfile -t plugins < <(find /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 \
  -name '*.so' -type f)
for object in "${shared_objects[@]}" "${plugins[@]}"; do
  ldd "$object" 2>/dev/null | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so|/usr/local/cuda' |
  while read -r library; do cp -L "$library" "$output/lib/"; done

cat >"$output/activate.sh" <<'EOF'
# Sourced on the GPU machine: Open MPI at its absolute paths, the pack's libraries and binaries.
pack=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Over what is there: a system PMIx of another version at the same path (Ubuntu 24.04's PMIx 5)
# would be loaded through the plugins' run path and lacks symbols Open MPI 4.1 needs.
cp -a "$pack/root/." /
cuda_dirs=$(find / -xdev \( -name 'libcublasLt.so.13*' -o -name 'libnccl.so.2*' \
  -o -name 'libcudart.so.13*' \) -printf '%h\n' 2>/dev/null | sort -u | paste -sd:)
export PATH="$pack/bin:$PATH"
export LD_LIBRARY_PATH="$pack/lib:$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^ofi,psm,psm2
EOF
# One compressed file, so that the pack travels well under a transfer's size limit.
tar -cJf "$output.tar.xz" -C "$(dirname "$output")" "$(basename "$output")"
du -sh "$output" "$output.tar.xz"
