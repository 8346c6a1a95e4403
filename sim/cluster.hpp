#pragma once
// A modelled cluster, as data: machines with a CPU host and ranks' devices (GPUs, or CPU
// processes), the links between a device and its machine (PCIe), between devices of one machine
// (NVLink, when there is one), the machines' NICs and the fabric joining them (one switch, or a fat
// tree), and the cost models that time compute ops on the host and on the devices. Presets are JSON
// files in sim/presets/; any field can be overridden from the command line.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/cost_model/cost_model.hpp"

namespace gnnbed {

enum class DeviceKind { gpu, cpu };

struct LinkSpec {
  double bandwidth_bytes_per_second = 0;
  double latency_seconds = 0;
};

struct FatTreeSpec {
  // SimGrid's fat-tree parameters (levels, down/up links per switch, parallel links).
  std::vector<unsigned int> down;
  std::vector<unsigned int> up;
  std::vector<unsigned int> link_count;
};

// GPUs that share a PCIe switch: their traffic to and from the machine's CPU shares the switch's
// uplink, and two GPUs under one switch reach each other through it without crossing the uplink
// (peer-to-peer), as in servers whose GPUs hang in pairs or fours off PCIe switches.
struct PcieSwitchSpec {
  int devices_per_switch = 0;  // 0: no switch, every device has its own lanes to the CPU
  LinkSpec uplink;             // switch <-> CPU
};

// A link's settings that differ from the cluster's: each unset one is as the cluster says.
struct LinkChange {
  std::optional<double> bandwidth_bytes_per_second;
  std::optional<double> latency_seconds;
  // The link goes down at this simulated time (a cable pulled, a port that died): every transfer
  // over it then fails.
  std::optional<double> fails_at_seconds;

  bool empty() const {
    return !bandwidth_bytes_per_second && !latency_seconds && !fails_at_seconds;
  }
  LinkSpec applied_to(LinkSpec link) const;
};

// One machine, or one rank, unlike the rest of the cluster: a straggler (it computes slower), a
// degraded link. Real clusters are uneven (a machine with a slower or busier CPU, a GPU that
// throttles, a NIC that negotiated a lower speed, a cable with errors), and every synchronous
// exchange waits for the slowest part. Exactly one of `machine` and `rank` is set; a machine's
// deviation applies to its CPU and every one of its ranks, a rank's to its device (a GPU, or the
// CPU process of a CPU rank), multiplying with its machine's.
struct Deviation {
  std::optional<int> machine;
  std::optional<int> rank;
  // Multiplies the part's op times (above 1: slower), on top of the cluster's factors.
  double compute_time_factor = 1;
  LinkChange nic;          // a machine's NICs, each of them
  LinkChange device_link;  // a rank's device link (PCIe; shared memory for CPU ranks)
  // The part stops at this simulated time: a rank's process (or GPU) dies, or a whole machine
  // (its CPU and every rank on it).
  std::optional<double> fails_at_seconds;

  std::string part() const;  // "machine 7", "rank 12"
};

// A failure the replay applies (ClusterSpec::failures): what fails, and when.
struct PartFailure {
  enum class Kind : std::uint8_t { rank, machine, nic, device_link } kind = Kind::rank;
  int index = 0;  // the rank (rank, device_link) or the machine (machine, nic)
  double at_seconds = 0;
  std::string part;  // "rank 12", "machine 3", "the NIC of machine 3", "the device link of rank 5"
};

struct ClusterSpec {
  std::string name;
  std::string description;
  int machines = 1;
  int ranks_per_machine = 1;

  // The machine's CPU: it samples and gathers input features for its GPUs (a GPU cluster); with
  // CPU ranks it runs nothing itself.
  int host_cores = 1;
  std::int64_t host_memory_bytes = 0;
  // The machine's memory bus, which every copy between host memory and a device crosses (DMA), so
  // the copies of a machine's GPUs share it; 0 (the default): copies are bound by their device
  // links (and switch uplinks) alone.
  double host_memory_bytes_per_second = 0;
  CostModel host_cost_model;

  DeviceKind device_kind = DeviceKind::cpu;
  std::string device_name;
  std::int64_t device_memory_bytes = 0;  // per device (per rank)
  CostModel device_cost_model;
  // Whether a GPU keeps its rank's input features in its memory where they fit in half of it, as
  // run_experiment's engine does (--device-features auto) and GPU feature caches do: the rank's
  // inputs are then gathered on the GPU (at the device's gather_features cost, or its gather_rows
  // cost where it has none), and only the rows that came from peers cross the device link. Off by
  // default: the papers' systems gathered inputs on the host and copied every row.
  bool device_keeps_features = false;
  // Whether a rank holding `feature_bytes` of features keeps them on its device.
  bool keeps_features(std::int64_t feature_bytes) const;

  LinkSpec device_link;               // device <-> its machine (PCIe; shared memory for CPU ranks)
  PcieSwitchSpec pcie_switch;         // devices grouped under PCIe switches, if any
  std::optional<LinkSpec> peer_link;  // device <-> device in one machine (NVLink)
  LinkSpec nic;                       // machine <-> fabric, each of its NICs
  // NICs per machine (rails), each at `nic`'s bandwidth and latency: the machine's ranks split
  // into this many groups of consecutive ranks, group k sending and receiving over NIC k, as
  // servers with a NIC per GPU or per pair of GPUs are built (DGX-like nodes, rail-optimised
  // fabrics). The machine's CPU goes out over its first NIC (the one interface its sockets use).
  int nics_per_machine = 1;
  // Whether a GPU reaches its NIC directly over its PCIe lanes (GPUDirect RDMA, the NIC under the
  // GPU's PCIe switch) rather than through host memory: off, a GPU's transfer to another machine
  // crosses its switch's uplink and the memory bus, as staged copies do.
  bool gpu_direct = false;
  // The NIC (0 ... nics_per_machine - 1) of its machine that `rank` sends and receives over.
  int nic_index_of(int rank) const;
  // CPU time per byte a machine's network stack spends on each byte it sends or receives (kernel
  // TCP), on the CPU that computes for the rank, so it competes with computation. 0 for
  // offloaded transports (RDMA, NCCL between devices).
  double nic_cpu_seconds_per_byte = 0;
  // Whether CPU ranks' transfers progress on their own (0: RDMA, a progress thread) or only inside
  // their transport's calls, as MPI over TCP without a progress thread moves a large message's
  // fragments: after each call (the engine makes one between ops) a transfer moves at most about
  // this many bytes, then stalls while an end computes, until that end's next call
  // (experiments/bench/bench_transfer_overlap.cpp measures it). GPU ranks' transfers (NCCL, the
  // samplers' and feature stores' own threads) are never held.
  double progress_window_bytes = 0;
  std::string topology = "switch";  // "switch" or "fat-tree"
  FatTreeSpec fat_tree;
  std::string network_model = "LV08";  // SimGrid's network/model
  // TCP's acknowledgements load the reverse path of every transfer (SimGrid's
  // network/crosstraffic; LV08 and SMPI only, CM02 models RDMA without it). They tie every flow
  // to the flows its two ends receive and send, so all of a collective's flows share one system
  // of equations, re-solved at each completion: off, a 512-machine iteration replays 2.9x faster
  // (docs/simulator.md).
  bool crosstraffic = true;
  bool uses_crosstraffic() const { return crosstraffic && network_model != "CM02"; }

  // When positive, the machines are emulated on one physical host with this many cores (the
  // validation cluster: one network namespace per rank), rank r computing on core
  // r mod shared_cores. Per core, not pooled: MPI ranks busy-poll while they wait, so the OS sees
  // every rank busy at all times and never moves one to another core. A waiting rank yields to
  // the ranks of its own core (Open MPI's mpi_yield_when_idle), so it takes nothing from them.
  int shared_cores = 0;
  // With shared cores: how Linux gives a core to its ranks. 0 (the default) is processor
  // sharing: the computing ranks of a core progress together, each at its share of the core. A
  // positive value is the scheduler's time slice: a timer tick every that many seconds (4 ms at
  // 250 Hz), at which a computing rank hands the core to a core-mate that waits to compute, so
  // core-mates computing the same work do not finish together. A rank waiting in MPI polls and
  // yields: when a message releases it while a core-mate computes, it runs again at the next tick
  // or when the core-mate's op ends. The validation measures it
  // (experiments/bench/bench_shared_core_latency.cpp).
  double shared_core_time_slice_seconds = 0;

  // How much ranks' compute speeds differ, as a coefficient of variation: 0 (the default) is
  // identical ranks. Real ranks of one kind are not: on a shared or virtual machine one rank's
  // core is slower for a while (interrupts, the network stack, the hypervisor), and every
  // exchange waits for the slowest. Rank r computes for (1 + spread * z_r) times the cost model's
  // time, z_r the expected r-th smallest of num_ranks() standard normal draws (Blom's scores),
  // so the ranks' mean is the cost model's and rank 0 is the fastest. Calibration measures it.
  double rank_speed_spread = 0;
  // Every op computes for this many times the cost model's time: how much slower (above 1) or
  // faster the machine computes than when the cost model was calibrated, as a probe measures it
  // (calibrate --probe). 1 by default.
  double compute_time_factor = 1;
  // The rank's multiple of the cost model's time: compute_time_factor, the rank's speed and the
  // deviations of its machine and (but for `on_host`: an op its machine's CPU runs for a GPU
  // rank, such as sampling) of the rank itself.
  double compute_factor(int rank, bool on_host = false) const;

  // How much one op's compute time varies from one run of it to the next, independently on every
  // rank: the standard deviation of the log of its duration. 0 (the default) is none. On a shared
  // machine an op's time moves with what else the core does meanwhile (interrupts, the network
  // stack's soft interrupts, a core-mate, the hypervisor); over an epoch that averages out, but
  // every exchange waits for the ranks that drew slow ops since the last one. Op `op` of replayed
  // iteration `iteration` on `rank` computes for a lognormal factor of mean 1 times its time, drawn
  // from `compute_jitter_seed` and those three. Calibration measures it.
  double compute_jitter = 0;
  std::uint64_t compute_jitter_seed = 1;
  double jitter_factor(int rank, std::int64_t iteration, std::int64_t op) const;

  // Parts that differ from the above (Deviation), at most one per machine and one per rank.
  std::vector<Deviation> deviations;
  // The NIC of `machine` and the device link of `rank`, with their deviations.
  LinkSpec nic_of(int machine) const;
  LinkSpec device_link_of(int rank) const;
  // The deviations' failures, in time order.
  std::vector<PartFailure> failures() const;
  // How long the job goes on after a part fails before it is stopped: the time the transport
  // takes to notice and abort. 0 (the default): at once, as Open MPI's mpirun kills every rank
  // when one dies. A dead machine or link is noticed later: TCP gives up on a connection after
  // its retransmission timeout (about 15 minutes with Linux's defaults), NCCL's watchdog after
  // its timeout (10 to 30 minutes in PyTorch). Meanwhile the surviving ranks go on until they
  // need the failed part; none of the strategies here recovers from a failure.
  double failure_detection_seconds = 0;

  int num_ranks() const { return machines * ranks_per_machine; }
  int machine_of(int rank) const { return rank / ranks_per_machine; }
  // Ops the host runs for a GPU device (sampling, feature gathering: on the device where it keeps
  // the rank's features; PBG's training of a bucket, which is CPU training); every op runs on the
  // device when the ranks are CPU processes.
  bool runs_on_host(OpKind kind, bool features_on_device = false) const;
  // Seconds `op` computes for, on the host or the device as runs_on_host says. Throws Error naming
  // the cost model's field when it has no cost for the op.
  double compute_seconds(const Op& op, bool features_on_device = false) const;
  // How many ranks share the caches (CostModel::caches) of what runs a rank's ops: a GPU has its
  // own; a machine's CPU ranks share the machine's. On the validation rig (shared_cores) they are
  // the one host's: the near level (the cores' private caches) goes to the ranks that run at once,
  // one per core, since a core-mate's 4 ms time slice refills a private cache in a fraction of it;
  // the far level to every rank, whose data the last level keeps across their turns.
  CacheSharers cache_sharers(bool on_host) const;

  nlohmann::json to_json() const;
};

// Reads a cluster: `source` is a preset name (a file sim/presets/<name>.json) or a path to a JSON
// file; `overrides` are "field=value" settings applied before validation ("nic.bandwidth_gbps=25",
// "machines=16"). Throws ConfigError/InputError naming the field or file.
ClusterSpec load_cluster(const std::string& source, const std::vector<std::string>& overrides);
ClusterSpec cluster_from_json(const nlohmann::json& document, const std::string& origin);
std::vector<std::string> cluster_preset_names();
std::filesystem::path cluster_preset_directory();

// The cluster of `machines` x `ranks_per_machine` timed by a calibration (the machine that was
// calibrated, cut into network namespaces or not): both cost models are the calibration's, but
// for a train_bucket cost the calibration lacks (calibrate does not time it): the cluster's stays.
// A CPU calibration makes CPU ranks whose device link is the calibrated transport; a GPU
// calibration (one with a device link) makes GPU ranks whose device link is its host-to-device
// copies.
ClusterSpec apply_calibration(ClusterSpec cluster, const Calibration& calibration);

}  // namespace gnnbed
