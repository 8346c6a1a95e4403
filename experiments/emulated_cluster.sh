# shellcheck shell=bash
# An emulated cluster on this machine (docs/validation.md, "The fidelity loop"): one network
# namespace per machine (of one rank, or of ranks_per_machine), each joined by a veth pair to a
# bridge and shaped with tc tbf in both directions, Open MPI launched across them through a
# plm_rsh_agent that runs its command inside the named namespace. Sourced by the scripts that
# measure on it (validate_emulated_cluster.sh, validate_advise.sh): they define `fail MESSAGE` and
# set `build`, `cores` (online cores), `ranks_per_machine` and `clean_stale` (1: delete what a
# killed run left instead of refusing) before `emulated_cluster_open NAMESPACES`.
#
# Needs root (ip netns, tc). Everything it creates (namespaces, veths, bridge, temporary files,
# processes in the namespaces) is removed on exit, error or interrupt.

# What the sourcing script sets, checked as it sources this.
: "${build:?}" "${cores:?}" "${clean_stale:?}" "${ranks_per_machine:?}"
# What this sets for the sourcing script: stack_cpu_seconds_per_byte, time_slice_seconds,
# progress_window_bytes.
stack_cpu_seconds_per_byte=0
time_slice_seconds=0
progress_window_bytes=0

# Names: namespaces gnnbed-v<i> with address 10.213.0.<i+1>, veth gv<i>-n inside, gv<i>-h on the
# bridge gnnbed-vbr (no address: only the namespaces' addresses are used).
prefix="gnnbed-v"
bridge="gnnbed-vbr"
subnet_base="10.213.0"
subnet="$subnet_base.0/24"

mpirun_pid=""
created=()

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n "$mpirun_pid" ]]; then kill "$mpirun_pid" 2> /dev/null || true; fi
  local ns pid
  for ns in "${created[@]}"; do
    for pid in $(ip netns pids "$ns" 2> /dev/null); do kill -9 "$pid" 2> /dev/null || true; done
    ip netns delete "$ns" 2> /dev/null || true
    # A deleted namespace lingers while the kernel holds its sockets (after a killed run), and
    # its veth with it: delete the pair from this end.
    ip link delete "gv${ns#"$prefix"}-h" 2> /dev/null || true
  done
  ip link delete "$bridge" 2> /dev/null || true
  rm -rf "$scratch"
  exit "$status"
}

# Refuses (or, with clean_stale=1, deletes) namespaces and links another run left.
emulated_cluster_clear_stale() {
  local existing stale_links stale ns pid link
  existing=$(ip netns list | awk '{print $1}' | grep "^${prefix}[0-9]" || true)
  stale_links=$(ip -o link show | grep -o "$bridge\|gv[0-9]*-h" | sort -u || true)
  if [[ -n "$existing$stale_links" ]]; then
    stale="$(tr "\n" " " <<< "$existing $stale_links")"
    [[ $clean_stale -eq 1 ]] || fail "left from another run: $stale; rerun with --clean-stale to delete them"
    echo "deleting what another run left: $stale"
  fi
  if [[ $clean_stale -eq 1 ]]; then
    for ns in $existing; do
      for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2> /dev/null || true; done
      ip netns delete "$ns"
      ip link delete "gv${ns#"$prefix"}-h" 2> /dev/null || true
    done
    for link in $stale_links; do ip link delete "$link" 2> /dev/null || true; done
  fi
}

# Open MPI's rsh launcher calls the agent as `agent [options] HOST COMMAND...` and expects a
# remote shell: run COMMAND with sh inside the namespace that owns HOST's address. The
# environment (PATH, LD_LIBRARY_PATH, OMPI_*) is inherited, so orted starts as it would locally.
# Every namespace has this machine's host name, so each orted gets its own session directory
# (sharing one, two orteds raced to create it and a run failed now and then).
write_netns_agent() {
  agent="$scratch/netns_agent.sh"
  cat > "$agent" <<EOF
#!/bin/bash
while [[ \$# -gt 0 && \$1 == -* ]]; do shift; done
host=\$1
shift
case "\$host" in
  $subnet_base.*)
    namespace=\$(( \${host##*.} - 1 ))
    exec ip netns exec "$prefix\$namespace" env OMPI_MCA_orte_tmpdir_base="$scratch/orte\$namespace" \\
      /bin/sh -c "\$*" ;;
  *) echo "netns_agent: \$host is not in $subnet" >&2; exit 255 ;;
esac
EOF
  chmod +x "$agent"
}

# Creates NAMESPACES namespaces, the bridge and the launcher, and checks that ranks start in
# every one. Sets `scratch` (a temporary folder, removed on exit) and `num_namespaces`.
emulated_cluster_open() {
  num_namespaces="$1"
  local i ns seen
  emulated_cluster_clear_stale
  scratch="$(mktemp -d /tmp/gnnbed-emulated.XXXXXX)"
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  echo "== namespaces: $num_namespaces (${prefix}0..$((num_namespaces - 1)), $subnet, bridge $bridge)"
  ip link add "$bridge" type bridge
  ip link set "$bridge" up
  for ((i = 0; i < num_namespaces; ++i)); do
    ns="$prefix$i"
    ip netns add "$ns"
    created+=("$ns")
    ip link add "gv$i-h" type veth peer name "gv$i-n"
    ip link set "gv$i-n" netns "$ns"
    ip link set "gv$i-h" master "$bridge"
    ip link set "gv$i-h" up
    ip -n "$ns" addr add "$subnet_base.$((i + 1))/24" dev "gv$i-n"
    ip -n "$ns" link set "gv$i-n" up
    ip -n "$ns" link set lo up
  done
  write_netns_agent
  echo "== launch check: $num_namespaces ranks, one per namespace"
  mpirun_in_cluster "$num_namespaces" --per-machine 1 sh -c "ip -o -4 addr show | grep -o '$subnet_base\.[0-9]*/'" \
    > "$scratch/where.txt"
  seen=$(sort -u "$scratch/where.txt" | wc -l)
  [[ $seen -eq $num_namespaces ]] || fail "ranks ran in $seen namespaces, not $num_namespaces: $(tr '\n' ' ' < "$scratch/where.txt")"
  echo "ranks ran in $seen distinct namespaces: $(sort -u "$scratch/where.txt" | tr -d '/' | tr '\n' ' ')"
}

# tbf on both ends of every veth: gv<i>-n shapes what the namespace sends, gv<i>-h what it
# receives. Burst: 1 ms at the rate, at least 64 KiB (one GSO segment); a 50 us bucket left a
# 10 Gbit/s link at 1.5 Gbit/s on a loaded machine (the refill timer fires late). Queue: 32 MiB,
# more than a TCP send buffer, so that nothing is dropped: with a 20 ms queue a 1 Gbit/s
# all-to-all lost packets now and then, and each retransmission timeout (200 ms at least) added
# up to 45 % to a measured epoch at random. Data-centre links (flow control) do not drop either.
shape() {
  local rate_gbps="$1" burst_bytes i
  burst_bytes=$(awk -v r="$rate_gbps" 'BEGIN { b = r * 1e9 / 8 * 1e-3; if (b < 65536) b = 65536; printf "%d", b }')
  for ((i = 0; i < num_namespaces; ++i)); do
    tc qdisc replace dev "gv$i-h" root tbf rate "${rate_gbps}gbit" burst "$burst_bytes" limit 33554432
    ip netns exec "$prefix$i" tc qdisc replace dev "gv$i-n" root tbf rate "${rate_gbps}gbit" \
      burst "$burst_bytes" limit 33554432
  done
}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# A machine's ranks per namespace, consecutive (Open MPI fills a host's slots first); no binding
# (every namespace's orted would bind its ranks to core 0). Ranks of one machine talk to each
# other's address in their namespace, which the kernel delivers locally, not through the shaped
# link (shared memory, vader, crashed Open MPI 4.1 between namespaces that share a host name).
# Ranks busy-poll: when they outnumber the cores they yield, or a waiting rank starves a working
# one.
mpi_args() {
  local ranks="$1" per_machine="${2:-$ranks_per_machine}"
  local hostfile="$scratch/hosts$ranks-$per_machine"
  : > "$hostfile"
  for ((i = 0; i < ranks / per_machine; ++i)); do
    echo "$subnet_base.$((i + 1)) slots=$per_machine" >> "$hostfile"
  done
  local yield=0
  [[ $ranks -gt $cores ]] && yield=1
  echo "-np $ranks --hostfile $hostfile --bind-to none --mca plm_rsh_agent $agent" \
    "--mca btl tcp,self --mca btl_tcp_if_include $subnet --mca oob_tcp_if_include $subnet" \
    "--mca mpi_yield_when_idle $yield -x OMP_NUM_THREADS"
}

# mpirun itself runs in namespace 0 (whose address is then local to it); in the background, so
# that an interrupt reaches the trap at once.
# The benchmarks give `--per-machine 1` first: one rank per namespace.
mpirun_in_cluster() {
  local ranks="$1" per_machine="$ranks_per_machine"
  shift
  if [[ "$1" == --per-machine ]]; then
    per_machine="$2"
    shift 2
  fi
  # shellcheck disable=SC2046  # mpi_args is a word list
  ip netns exec "${prefix}0" mpirun $(mpi_args "$ranks" "$per_machine") "$@" &
  mpirun_pid=$!
  local status=0
  wait "$mpirun_pid" || status=$?
  mpirun_pid=""
  return "$status"
}

# Runs a benchmark on RANKS namespaces, one rank each: its output in OUTPUT/logs/NAME.txt (WHAT
# names it if it fails), its JSON line in OUTPUT/NAME.json.
run_rig_benchmark() {
  local output="$1" name="$2" what="$3" ranks="$4"
  shift 4
  mpirun_in_cluster "$ranks" --per-machine 1 "$@" > "$output/logs/$name.txt" 2>&1 ||
    fail "$what failed: $output/logs/$name.txt"
  grep '^{' "$output/logs/$name.txt" > "$output/$name.json"
}

# A benchmark's output but its JSON line, indented.
print_rig_benchmark() {
  grep -v '^{' "$1/logs/$2.txt" | sed 's/^/  /'
}

# Kernel TCP between namespaces costs CPU time per byte, on the cores the ranks compute on; the
# simulator charges it at both ends of every transfer. Measured as training moves bytes: two ranks
# exchange 16 MiB both ways at once after a pause over the unshaped path, each rank's core sending
# and receiving R bytes a second, so spending 1 / (2 R) seconds per byte. A one-way ping-pong reads
# about half that cost, and predicted the 10 Gbit/s exchanges at two thirds of their time
# (docs/validation.md). R is the median of 21 exchanges: the mean of 5 moved from run to run by a
# factor of 3 (0.31 to 0.94 ns per byte).
# Sets stack_cpu_seconds_per_byte (0 without the benchmark); logs and JSON under OUTPUT.
measure_stack_cpu_seconds_per_byte() {
  local output="$1"
  local link_bench="$build/experiments/bench_link_exchange"
  stack_cpu_seconds_per_byte=0
  if [[ -x "$link_bench" ]]; then
    echo "== network stack: 16 MiB both ways after a pause, over the unshaped namespaces"
    run_rig_benchmark "$output" link-unshaped "unshaped exchange" 2 "$link_bench" --sizes-mib 16 \
      --pause-ms 250 --repetitions 21
    stack_cpu_seconds_per_byte=$(stack_cpu_seconds_per_byte_of "$output/link-unshaped.json")
    echo "  $stack_cpu_seconds_per_byte CPU seconds per byte sent or received"
  fi
}

# Ranks that outnumber the cores take turns on them, a time slice each, and a rank that a message
# releases while its core-mate computes runs again only at the next timer tick. The slice is
# measured with a sender on one core and a receiver beside a computing rank on the other (3 ranks,
# pinned by the benchmark): messages sent at random moments wait half a slice on average.
# Sets time_slice_seconds (0 where the namespaces do not outnumber the cores); logs and JSON
# under OUTPUT.
measure_time_slice_seconds() {
  local output="$1"
  time_slice_seconds=0
  local shared_core_bench="$build/experiments/bench_shared_core_latency"
  if [[ $num_namespaces -gt $cores && -x "$shared_core_bench" ]]; then
    echo "== shared cores: the time slice, from how long a message waits beside a computing rank"
    run_rig_benchmark "$output" shared-core "shared-core latency benchmark" 3 "$shared_core_bench" \
      --seconds 2
    print_rig_benchmark "$output" shared-core
    time_slice_seconds=$(time_slice_seconds_of "$output/shared-core.json")
  fi
}

# Open MPI's TCP transport moves a large message only inside MPI calls (it has no progress
# thread): after each call a transfer moves about a window of bytes, then stalls while its ranks
# compute, and the engine calls MPI only between ops. Measured as training overlaps: two ranks
# post an exchange both ways, compute for 100 or 400 ms testing it every 5 or 20 ms, then wait;
# the window is the median of the bytes moved per test where not everything moved. On a 1 Gbit/s
# link, where the window takes longer than a test's interval would leave: the callers shape again.
# Sets progress_window_bytes (0 without the benchmark, or where every transfer moved in full);
# logs and JSON under OUTPUT.
measure_progress_window_bytes() {
  local output="$1"
  local overlap_bench="$build/experiments/bench_transfer_overlap"
  progress_window_bytes=0
  if [[ -x "$overlap_bench" ]]; then
    echo "== transport progress: what a transfer moves per MPI call while both ranks compute (1 Gbit/s)"
    shape 1
    run_rig_benchmark "$output" transfer-overlap "transfer overlap benchmark" 2 "$overlap_bench" \
      --sizes-mib 16,64 --compute-ms 100,400 --test-every-ms 5,20 --repetitions 5
    print_rig_benchmark "$output" transfer-overlap
    progress_window_bytes=$(progress_window_bytes_of "$output/transfer-overlap.json")
    echo "  $progress_window_bytes bytes per MPI call"
  fi
}

# The values the measurements above wrote (JSON), for a run that reuses them.
stack_cpu_seconds_per_byte_of() {
  /usr/bin/python3 -c 'import json, sys
both = [r for r in json.load(open(sys.argv[1]))["results"] if r["both_ways"]]
print(1 / (2 * both[0]["median_gbps_per_direction"] * 1e9 / 8))' "$1"
}
time_slice_seconds_of() {
  /usr/bin/python3 -c 'import json, sys
print(max(0.0, json.load(open(sys.argv[1]))["shared_core_time_slice_seconds"]))' "$1"
}
progress_window_bytes_of() {
  /usr/bin/python3 -c 'import json, statistics, sys
rows = json.load(open(sys.argv[1]))["results"]
per_call = [r["bytes_moved_while_computing"] * r["test_every_seconds"] / r["compute_seconds"]
            for r in rows if r["test_every_seconds"] > 0 and r["compute_seconds"] > 0
            and r["bytes_moved_while_computing"] < 0.95 * r["bytes"]]
print(int(statistics.median(per_call)) if per_call else 0)' "$1"
}
