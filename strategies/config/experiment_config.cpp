#include "strategies/config/experiment_config.hpp"

#include <cmath>

#include "strategies/roc_partition.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/json_config.hpp"

namespace gnnbed {

ExperimentConfig experiment_config_from_json(const nlohmann::json& document) {
  ExperimentConfig config;
  JsonFieldReader reader(document, "");
  if (const auto* workload = reader.child("workload")) {
    config.workload = workload_config_from_json(*workload, config.workload, "workload");
  }
  if (const auto* model = reader.child("model")) {
    config.model = model_config_from_json(*model, config.model, "model");
  }
  if (const auto* training = reader.child("training")) {
    config.training = training_config_from_json(*training, config.training, "training");
  }
  if (const auto* distribution = reader.child("distribution")) {
    config.distribution =
        distribution_config_from_json(*distribution, config.distribution, "distribution");
  }
  reader.finish();
  // Before any tool loads a dataset for it: the training settings need nothing from the data.
  validate(config.training, config.model.num_layers);
  return config;
}

nlohmann::json to_json(const ExperimentConfig& config) {
  return {{"workload", to_json(config.workload)},
          {"model", to_json(config.model)},
          {"training", to_json(config.training)},
          {"distribution", to_json(config.distribution)}};
}

namespace {

// SANCUS's bound and the options each bound takes: a field another bound would ignore is an error.
void check_sancus_bound(const DistributionConfig& config, const std::string& where) {
  require_one_of(where + ".sancus_bound", config.sancus_bound, {"epochs", "adaptive", "change"});
  const bool change = config.sancus_bound == "change";
  require(config.sancus_staleness_epochs >= 0, where + ".sancus_staleness_epochs",
          "must be at least 0 (0 = broadcast every epoch), not " +
              std::to_string(config.sancus_staleness_epochs));
  require(!change || config.sancus_staleness_epochs == 0, where + ".sancus_staleness_epochs",
          "counts epochs for the epochs and adaptive bounds; the change bound takes "
          "sancus_change_threshold");
  require(change || (!config.sancus_change_threshold && !config.sancus_broadcast_fraction),
          where + (config.sancus_change_threshold ? ".sancus_change_threshold"
                                                  : ".sancus_broadcast_fraction"),
          "is the change bound's (sancus_bound \"change\"), not the " + config.sancus_bound +
              " bound's");
  require(!change || config.sancus_change_threshold, where + ".sancus_change_threshold",
          "must be set for the change bound (SANCUS uses 0.01 to 0.05)");
  const auto& threshold = config.sancus_change_threshold;
  require(!threshold || (std::isfinite(*threshold) && *threshold > 0),
          where + ".sancus_change_threshold",
          "must be a positive relative change (e.g. 0.03 for 3 %)");
  const auto& fraction = config.sancus_broadcast_fraction;
  require(!fraction || (*fraction >= 0 && *fraction <= 1), where + ".sancus_broadcast_fraction",
          "must be a chance between 0 and 1");
}

}  // namespace

DistributionConfig distribution_config_from_json(const nlohmann::json& object,
                                                 const DistributionConfig& defaults,
                                                 const std::string& where) {
  DistributionConfig config = defaults;
  JsonFieldReader reader(object, where);
  reader.read("strategy", config.strategy);
  reader.read("partitioner", config.partitioner);
  reader.read("structure", config.structure);
  reader.read("partition_seed", config.partition_seed);
  reader.read("partition_costs", config.partition_costs);
  reader.read("cache_budget_bytes", config.cache_budget_bytes);
  reader.read("cache", config.cache);
  reader.read("pipeline", config.pipeline);
  reader.read("prefetch", config.prefetch);
  reader.read("p3_first_layer", config.p3_first_layer);
  reader.read("sancus_bound", config.sancus_bound);
  reader.read("sancus_staleness_epochs", config.sancus_staleness_epochs);
  reader.read("sancus_change_threshold", config.sancus_change_threshold);
  reader.read("sancus_broadcast_fraction", config.sancus_broadcast_fraction);
  reader.read("neutronstar_dependencies", config.neutronstar_dependencies);
  reader.read("neutronstar_vertex_seconds", config.neutronstar_vertex_seconds);
  reader.read("neutronstar_edge_seconds", config.neutronstar_edge_seconds);
  reader.read("neutronstar_transfer_seconds", config.neutronstar_transfer_seconds);
  reader.read("neutronstar_overlap", config.neutronstar_overlap);
  reader.read("ranks_per_machine", config.ranks_per_machine);
  reader.read("all_reduce", config.all_reduce);
  reader.read("all_to_all_block_steps", config.all_to_all_block_steps);
  reader.read("feature_store", config.feature_store);
  reader.read("p3_partials", config.p3_partials);
  reader.read("device_memory_bytes", config.device_memory_bytes);
  reader.read("progress_timeout_seconds", config.progress_timeout_seconds);
  reader.finish();
  // Named when read, so that no tool (train included, which does not distribute) records a
  // strategy or partitioner that does not exist.
  require_one_of(where + ".strategy", config.strategy, strategy_names());
  require_one_of(where + ".partitioner", config.partitioner, distribution_partitioner_names());
  require_one_of(where + ".structure", config.structure, {"replicated", "partitioned"});
  require(config.cache_budget_bytes >= 0, where + ".cache_budget_bytes",
          "must be at least 0 (0 = no caching), not " + std::to_string(config.cache_budget_bytes));
  require_one_of(where + ".cache", config.cache, {"structure", "features", "both"});
  require_one_of(where + ".p3_first_layer", config.p3_first_layer, {"push", "derive"});
  require(config.p3_first_layer != "derive" || config.structure == "replicated",
          where + ".p3_first_layer",
          "'derive' samples every rank's first-layer graph from a whole copy of the structure: it "
          "needs structure replicated");
  check_sancus_bound(config, where);
  require_one_of(where + ".neutronstar_dependencies", config.neutronstar_dependencies,
                 {"cache", "communicate", "hybrid"});
  for (const auto& [field, seconds] :
       {std::pair{"neutronstar_vertex_seconds", config.neutronstar_vertex_seconds},
        std::pair{"neutronstar_edge_seconds", config.neutronstar_edge_seconds},
        std::pair{"neutronstar_transfer_seconds", config.neutronstar_transfer_seconds}}) {
    require(!seconds || (std::isfinite(*seconds) && *seconds > 0), where + "." + field,
            "must be a positive number of seconds per value (or null: probed)");
  }
  require(config.ranks_per_machine >= 0, where + ".ranks_per_machine",
          "must be at least 1 (0: the machines the run finds), not " +
              std::to_string(config.ranks_per_machine));
  require_one_of(where + ".all_reduce", config.all_reduce, {"ring", "hierarchical"});
  require(config.all_to_all_block_steps >= 0, where + ".all_to_all_block_steps",
          "must be at least 0 (0 = every pair at once), not " +
              std::to_string(config.all_to_all_block_steps));
  require_one_of(where + ".feature_store", config.feature_store, {"rank", "machine"});
  require_one_of(where + ".p3_partials", config.p3_partials, {"owner", "machine"});
  require(config.device_memory_bytes >= 0, where + ".device_memory_bytes",
          "must be at least 0 (0 = no limit), not " + std::to_string(config.device_memory_bytes));
  require(std::isfinite(config.progress_timeout_seconds) && config.progress_timeout_seconds >= 0,
          where + ".progress_timeout_seconds", "must be a number of seconds, 0 for no limit");
  return config;
}

namespace {

// A value, or null when unset.
nlohmann::json or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const DistributionConfig& config) {
  return {{"strategy", config.strategy},
          {"partitioner", config.partitioner},
          {"structure", config.structure},
          {"partition_seed", config.partition_seed},
          {"partition_costs", config.partition_costs},
          {"cache_budget_bytes", config.cache_budget_bytes},
          {"cache", config.cache},
          {"pipeline", config.pipeline},
          {"prefetch", config.prefetch},
          {"p3_first_layer", config.p3_first_layer},
          {"sancus_bound", config.sancus_bound},
          {"sancus_staleness_epochs", config.sancus_staleness_epochs},
          {"sancus_change_threshold", or_null(config.sancus_change_threshold)},
          {"sancus_broadcast_fraction", or_null(config.sancus_broadcast_fraction)},
          {"neutronstar_dependencies", config.neutronstar_dependencies},
          {"neutronstar_vertex_seconds", or_null(config.neutronstar_vertex_seconds)},
          {"neutronstar_edge_seconds", or_null(config.neutronstar_edge_seconds)},
          {"neutronstar_transfer_seconds", or_null(config.neutronstar_transfer_seconds)},
          {"neutronstar_overlap", config.neutronstar_overlap},
          {"ranks_per_machine", config.ranks_per_machine},
          {"all_reduce", config.all_reduce},
          {"all_to_all_block_steps", config.all_to_all_block_steps},
          {"feature_store", config.feature_store},
          {"p3_partials", config.p3_partials},
          {"device_memory_bytes", config.device_memory_bytes},
          {"progress_timeout_seconds", config.progress_timeout_seconds}};
}

const std::vector<ConfigOption>& experiment_options() {
  static const std::vector<ConfigOption> options = [] {
    std::vector<ConfigOption> all = workload_options();
    all.insert(
        all.end(),
        {
            {"model", "model.kind", "gcn, sage, sgc or gat"},
            {"heads", "model.heads", "GAT attention heads in hidden layers"},
            {"layers", "model.num_layers", "number of GNN layers"},
            {"hidden", "model.hidden", "hidden width"},
            {"dropout", "model.dropout", "dropout before every layer"},
            {"epochs", "training.epochs", "training epochs"},
            {"optimizer", "training.optimizer", "adam or sgd"},
            {"lr", "training.learning_rate", "learning rate"},
            {"weight-decay", "training.weight_decay", "L2 penalty on weights"},
            {"batch-size", "training.batch_size", "training nodes per mini-batch (0 = full graph)"},
            {"fanouts", "training.fanouts",
             "neighbours sampled per hop from the seeds, e.g. 25,10"},
            {"seed", "training.seed", "seed for weights, dropout, shuffling and sampling"},
            {"strategy", "distribution.strategy",
             "dgl-pull, p3, roc, sancus or neutronstar (the last three full-graph: --batch-size "
             "0)"},
            {"partitioner", "distribution.partitioner",
             "hash, metis, contiguous or cost-balanced (node owners)"},
            {"partition-costs", "distribution.partition_costs",
             "a roc result (run_experiment or simulate) whose measured parts cost-balanced fits"},
            {"structure", "distribution.structure",
             "replicated, or partitioned (sampling over the network)"},
            {"cache-budget", "distribution.cache_budget_bytes",
             "bytes per rank for copies of other ranks' partitions (P3's caching; 0 = none)"},
            {"cache", "distribution.cache", "what to cache: structure, features or both"},
            {"pipeline", "distribution.pipeline",
             "true: P3's pipelining (3 mini-batches in flight, weights 3 steps stale; p3 only)"},
            {"prefetch", "distribution.prefetch",
             "true: pull the next mini-batch's features while this one computes (dgl-pull only)"},
            {"p3-first-layer", "distribution.p3_first_layer",
             "p3: push (the owner sends each batch's first-layer graph) or derive (it sends its "
             "seeds and every rank samples the graph itself; structure replicated)"},
            {"sancus-bound", "distribution.sancus_bound",
             "sancus: epochs (SCS-E), adaptive (SCS-A) or change (SCS-H)"},
            {"sancus-staleness", "distribution.sancus_staleness_epochs",
             "sancus, epochs and adaptive bounds: epochs of stale peer blocks (0 = none)"},
            {"sancus-change-threshold", "distribution.sancus_change_threshold",
             "sancus, change bound: relative change of a block that is broadcast (e.g. 0.03)"},
            {"sancus-broadcast-fraction", "distribution.sancus_broadcast_fraction",
             "sancus, change bound, simulate only: chance a block changed beyond the threshold"},
            {"neutronstar", "distribution.neutronstar_dependencies",
             "neutronstar: cache (DepCache), communicate (DepComm) or hybrid"},
            {"neutronstar-overlap", "distribution.neutronstar_overlap",
             "neutronstar: true computes what reads no fetched dependency while the fetch moves"},
            {"ranks-per-machine", "distribution.ranks_per_machine",
             "ranks per machine, consecutive (0 = the cluster's, or MPI's hosts)"},
            {"all-reduce", "distribution.all_reduce",
             "gradient all-reduce: ring, or hierarchical (within machines, then across)"},
            {"all-to-all-block-steps", "distribution.all_to_all_block_steps",
             "a plan's all-to-all posts its pairwise steps in blocks of this many (0 = every pair "
             "at once, 1 = step by step)"},
            {"feature-store", "distribution.feature_store",
             "dgl-pull: rank (own rows), or machine (one store per machine in host memory)"},
            {"p3-partials", "distribution.p3_partials",
             "p3: owner (partial results summed by the batch's owner), or machine (within each "
             "machine first, and each batch's first-layer graph sent once per machine)"},
            {"device-memory", "distribution.device_memory_bytes",
             "bytes of the modelled device per rank: an iteration that needs more is reported as "
             "out of memory (0 = no limit)"},
            {"progress-timeout", "distribution.progress_timeout_seconds",
             "seconds a rank waits for its peers without progress before every rank stops, naming "
             "the rank waited for (0 = no limit)"},
        });
    return all;
  }();
  return options;
}

ExperimentConfig resolve_experiment(const std::filesystem::path& config_file,
                                    const std::vector<std::string>& assignments,
                                    const std::vector<std::string>& defaults) {
  return experiment_config_from_json(resolve_config_document(config_file, assignments, defaults));
}

}  // namespace gnnbed
