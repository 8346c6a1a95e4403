#pragma once
// One experiment: workload, model and training, read from one JSON file and overridden from the
// command line. The resolved config is stored with every result.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strategies/config/model_spec.hpp"
#include "strategies/config/training_config.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/workload_config.hpp"

namespace gnnbed {

// How the work is distributed.
struct DistributionConfig {
  std::string strategy = "dgl-pull";  // see strategy_names()
  std::string partitioner = "hash";   // node owners: structure, labels, DGL's features
  std::string structure =
      "replicated";  // "replicated" or "partitioned" (sampling over the network)
  std::uint64_t partition_seed = 1;
  // A roc result file (run_experiment's or simulate's; strategies/partition_costs.hpp) whose
  // partition cost samples the cost-balanced partitioner fits its model on (empty: the default
  // model) and every roc run records before its own.
  std::string partition_costs;
  // P3's caching (strategies/replication.hpp): bytes every rank may hold beyond its own partitions
  // for copies of other ranks' (0 = no caching), and what to copy: "structure" (partitioned
  // structure only), "features", or "both" (a rank's structure and features copied together).
  std::int64_t cache_budget_bytes = 0;
  std::string cache = "both";
  // P3's pipelining (section 3.3; strategies/plan/plan.hpp): the static schedule with
  // kPipelineDepth earlier mini-batches in flight and stale weights. p3 only.
  bool pipeline = false;
  // dgl-pull's prefetching: every rank pulls the next mini-batch's input features while it
  // computes this one (a two-stage pipeline whose model work is all in its last stage, so the
  // weights are never stale and training computes what it computes without). dgl-pull only.
  bool prefetch = false;
  // How P3's ranks learn the first-layer computation graph of every other rank's mini-batch:
  // "push": the owner sends it (an id per edge, P3's section 3.2); "derive": the owner sends its
  // seeds and every rank samples the graph itself from its copy of the structure (sampling is a
  // pure function of the seeds and the shared sampling seed), which trades the network for
  // (ranks - 1) times the sampling work and needs the structure replicated (docs/plans.md).
  std::string p3_first_layer = "push";
  // SANCUS's skip-broadcast (strategies/sancus.hpp); sancus only. The bound on staleness:
  // "epochs" (SCS-E: every rank broadcasts every sancus_staleness_epochs + 1 epochs; 0 = every
  // epoch, no staleness), "adaptive" (SCS-A: a rank broadcasts once it has computed
  // sancus_staleness_epochs epochs with a stale copy of a peer's block) or "change" (SCS-H: a rank
  // broadcasts a block that changed by more than sancus_change_threshold, relative, since the
  // copy its peers hold).
  std::string sancus_bound = "epochs";
  int sancus_staleness_epochs = 0;
  std::optional<double> sancus_change_threshold;
  // SCS-H in simulate, which computes no values: the chance that a block changed by more than the
  // threshold in an epoch (a seeded draw per rank, layer and epoch). run_experiment measures the
  // change itself, and reports the share of blocks it broadcast.
  std::optional<double> sancus_broadcast_fraction;
  // NeutronStar's dependency management (strategies/neutronstar.hpp): "cache" (DepCache),
  // "communicate" (DepComm) or "hybrid", and its cost model's Tv, Te and Tc in seconds per value.
  // Unset, they are probed where the cluster is known, as NeutronStar probes them on its
  // machines: simulate derives them from the cluster's cost model and links (a calibration's,
  // with --calibration; sim/probed_costs.hpp); run_experiment takes NeutronStarOptions' defaults.
  std::string neutronstar_dependencies = "hybrid";
  std::optional<double> neutronstar_vertex_seconds;
  std::optional<double> neutronstar_edge_seconds;
  std::optional<double> neutronstar_transfer_seconds;
  // Whether a neutronstar rank computes the destinations of a layer that read no fetched
  // dependency while the fetch moves, and sends the fetched rows' gradients back while it
  // computes the others' (overlap by destination; NeutronStar's own overlaps by source chunk,
  // docs/plans.md). Off by default: on high-degree graphs few destinations read no fetched row.
  bool neutronstar_overlap = false;
  // The machines the ranks run on: every ranks_per_machine consecutive ranks share one, its host
  // memory and its NIC (0: where the run learns it: simulate from its cluster, run_experiment from
  // MPI's shared-memory groups, which must then be equal blocks of consecutive ranks).
  int ranks_per_machine = 0;
  // The gradient all-reduce: "ring" over every rank, or "hierarchical": reduced within each
  // machine, across the machines, then gathered within each machine (every strategy).
  std::string all_reduce = "ring";
  // A plan's all-to-all posts its pairwise steps in blocks of this many, each block once the one
  // before has completed (collective_schedule.hpp): 0 posts every pair at once, 1 one step at a
  // time. Both engines follow it.
  int all_to_all_block_steps = kDefaultAllToAllBlockSteps;
  // Where P3's partial results of a batch are summed: "owner" (every rank sends its own to the
  // batch's owner) or "machine" (within each machine first, so that one sum per machine crosses
  // the network, and the owner's gradients cross it once per machine).
  std::string p3_partials = "owner";
  // Where dgl-pull's feature rows are read: "rank" (every rank holds its own nodes' rows and pulls
  // the others from their owners) or "machine" (DistDGL's shared store: the rows of every rank of
  // a machine are read from its host memory, and only other machines' rows cross the network).
  std::string feature_store = "rank";
  // The modelled device's memory per rank (0 = no limit): run_experiment stops every rank, and
  // reports the run as out of memory, before an iteration whose tensors (with parameters and
  // stashed weights, strategies/plan_memory.hpp) would not fit, as simulate does for its
  // cluster's devices. For P3's Fig. 7 setting (no sampling), where DGL's inputs outgrow a GPU.
  std::int64_t device_memory_bytes = 0;
  // run_experiment over MPI: a rank that waits this long for its peers without progress ends
  // every rank, naming the rank it waited for and the call (0 = wait forever). It must exceed the
  // longest wait a healthy run has, loading and evaluation included.
  double progress_timeout_seconds = 0;
};

// P3's pipeline: while a mini-batch starts, this many earlier ones are in flight, and the update
// of step t applies the gradient computed with the weights after step t - kPipelineDepth.
inline constexpr int kPipelineDepth = 3;

struct ExperimentConfig {
  WorkloadConfig workload;
  ModelConfig model;
  TrainingConfig training;
  DistributionConfig distribution;
};

DistributionConfig distribution_config_from_json(const nlohmann::json& object,
                                                 const DistributionConfig& defaults,
                                                 const std::string& where);
nlohmann::json to_json(const DistributionConfig& config);

// Reads {"workload": {...}, "model": {...}, "training": {...}, "distribution": {...}} over the
// defaults; unknown fields and wrong types throw ConfigError naming the field.
ExperimentConfig experiment_config_from_json(const nlohmann::json& document);
nlohmann::json to_json(const ExperimentConfig& config);

// The command-line options that set one field of the experiment each (`--hidden 64` is
// `--set model.hidden=64`): the workload's (workload_options()), then the others.
const std::vector<ConfigOption>& experiment_options();

// The experiment described by `defaults` (assignments such as "model.hidden=64", a program's own
// defaults), overridden by an optional JSON file, overridden by `assignments` in order. Errors
// name the file (InputError) or the field (ConfigError).
ExperimentConfig resolve_experiment(const std::filesystem::path& config_file,
                                    const std::vector<std::string>& assignments,
                                    const std::vector<std::string>& defaults = {});

}  // namespace gnnbed
