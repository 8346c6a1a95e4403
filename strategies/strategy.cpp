#include "strategies/strategy.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "strategies/caching.hpp"
#include "strategies/dgl_pull.hpp"
#include "strategies/full_graph.hpp"
#include "strategies/halo.hpp"
#include "strategies/neutronstar.hpp"
#include "strategies/p3.hpp"
#include "strategies/roc_partition.hpp"
#include "strategies/sancus.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {

std::unique_ptr<Strategy> make_roc_strategy();

namespace {

using StrategyMaker = std::function<std::unique_ptr<Strategy>(const DistributionConfig&)>;

const std::map<std::string, StrategyMaker, std::less<>>& registry() {
  static const std::map<std::string, StrategyMaker, std::less<>> known = {
      {"dgl-pull",
       [](const DistributionConfig& d) { return make_dgl_pull_strategy(dgl_pull_options(d)); }},
      {"neutronstar",
       [](const DistributionConfig& d) {
         return make_neutronstar_strategy(neutronstar_options(d));
       }},
      {"p3", [](const DistributionConfig& d) { return make_p3_strategy(p3_options(d)); }},
      {"roc",
       [](const DistributionConfig& d) {
         refuse_mini_batch_options(d, "roc");
         return make_roc_strategy();
       }},
      {"sancus",
       [](const DistributionConfig& d) { return make_sancus_strategy(sancus_options(d)); }},
  };
  return known;
}

void check_fits(const Strategy& strategy, const ExperimentConfig& config, std::int64_t num_nodes,
                int num_ranks) {
  const std::string name = strategy.name();
  if (strategy.full_graph()) {
    require(config.training.batch_size == 0, "training.batch_size",
            name + " trains on the full graph: set it to 0 (--batch-size 0)");
  } else {
    require(
        config.training.batch_size > 0, "training.batch_size",
        "distributed training with " + name +
            " runs mini-batches: set a batch size (roc, sancus and neutronstar train full-graph)");
  }
  require(num_ranks <= num_nodes, "ranks",
          std::to_string(num_ranks) + " ranks for " + std::to_string(num_nodes) +
              " nodes: every rank must own a node");
}

// The machines of distribution.ranks_per_machine and what the strategy does with them: the
// hierarchical all-reduce, dgl-pull's per-machine feature store.
void use_machines(StrategyContext& context, const DistributionConfig& distribution) {
  const int num_ranks = context.num_ranks;
  const int ranks_per_machine = std::max(distribution.ranks_per_machine, 1);
  require(num_ranks % ranks_per_machine == 0, "distribution.ranks_per_machine",
          std::to_string(num_ranks) + " ranks are not whole machines of " +
              std::to_string(ranks_per_machine));
  const bool hierarchical = distribution.all_reduce == "hierarchical";
  const bool machine_store = distribution.feature_store == "machine";
  const bool machine_sums = distribution.p3_partials == "machine";
  const char* user = hierarchical ? "all_reduce" : machine_store ? "feature_store" : "p3_partials";
  require(
      !(hierarchical || machine_store || machine_sums) || distribution.ranks_per_machine > 0,
      "distribution.ranks_per_machine",
      "distribution." + std::string(user) + " follows the machines: say how many ranks each has");
  context.ranks_per_machine = ranks_per_machine;
  context.hierarchical_all_reduce = hierarchical;
  context.all_to_all_block_steps = distribution.all_to_all_block_steps;
  if (!machine_store) return;
  const Strategy& strategy = *context.strategy;
  require(
      strategy.uses_feature_replicas() && strategy.feature_placement(context, 0).owned_rows_only,
      "distribution.feature_store",
      "'machine' shares the feature rows of a machine's ranks: " + strategy.name() +
          " does not read other ranks' rows (dgl-pull does)");
  require(distribution.cache_budget_bytes == 0, "distribution.cache_budget_bytes",
          "caching places copies by budget, the per-machine store by machine: choose one");
  context.feature_replicas = Replication::machine_store(num_ranks, ranks_per_machine);
}

StrategyContext make_context(const ExperimentConfig& config, NodePartition partition,
                             int feature_dim, int num_classes,
                             std::shared_ptr<const Strategy> strategy) {
  const int num_ranks = partition.num_parts();
  check_fits(*strategy, config, partition.num_nodes(), num_ranks);
  const ModelSpec spec(config.model, feature_dim, num_classes);
  validate(config.training, spec.num_layers());
  StrategyContext context{num_ranks,
                          spec,
                          config.training,
                          std::move(partition),
                          config.distribution.structure == "partitioned",
                          feature_dim,
                          {},
                          {},
                          std::move(strategy)};
  context.strategy->check(context);
  use_machines(context, config.distribution);
  return context;
}

}  // namespace

void use_sparse_feature_rows(StrategyContext& context, SharedArray<std::int32_t> row_entries) {
  if (context.model.first_layer_takes_sparse_input())
    context.feature_row_entries = std::move(row_entries);
}

std::int64_t StrategyContext::feature_entries(std::span<const NodeId> nodes) const {
  if (!sparse_feature_rows()) throw Error("the run's feature rows are dense, not sparse");
  std::int64_t total = 0;
  for (const NodeId v : nodes) total += feature_row_entries[static_cast<std::size_t>(v)];
  return total;
}

std::unique_ptr<Strategy> make_strategy(const DistributionConfig& distribution) {
  const auto it = registry().find(distribution.strategy);
  if (it == registry().end()) {
    std::string known;
    for (const auto& entry : registry()) known += (known.empty() ? "" : ", ") + entry.first;
    throw ConfigError("strategy", "'" + distribution.strategy + "' is not one of: " + known);
  }
  // Checked here rather than where the configuration is read: a sweep may set the strategy after.
  require(distribution.p3_partials == "owner" || distribution.strategy == "p3",
          "distribution.p3_partials", "is P3's: " + distribution.strategy + " does not take it");
  require(!distribution.neutronstar_overlap || distribution.strategy == "neutronstar",
          "distribution.neutronstar_overlap",
          "is NeutronStar's: " + distribution.strategy + " does not take it");
  if (distribution.strategy != "sancus") {
    for (const auto& [field, set] :
         {std::pair{"sancus_bound", distribution.sancus_bound != "epochs"},
          {"sancus_staleness_epochs", distribution.sancus_staleness_epochs != 0},
          {"sancus_change_threshold", distribution.sancus_change_threshold.has_value()},
          {"sancus_broadcast_fraction", distribution.sancus_broadcast_fraction.has_value()}}) {
      require(!set, std::string("distribution.") + field,
              "is SANCUS's staleness bound: " + distribution.strategy + " does not take it");
    }
  }
  return it->second(distribution);
}

std::unique_ptr<Strategy> make_strategy(std::string_view name) {
  DistributionConfig distribution;
  distribution.strategy = std::string(name);
  return make_strategy(distribution);
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

DerivedFirstLayer derived_first_layer(const MiniBatch& batch) {
  DerivedFirstLayer derived{batch.blocks.front(), 0};
  for (const Block& block : batch.blocks) derived.sampled_edges += block.num_edges();
  return derived;
}

StrategyContext make_strategy_context(const ExperimentConfig& config, const Dataset& dataset,
                                      int num_ranks) {
  std::shared_ptr<const Strategy> strategy = make_strategy(config.distribution);
  check_fits(*strategy, config, dataset.num_nodes(), num_ranks);
  NodePartition partition = partition_nodes(config.distribution, dataset.graph, num_ranks);
  StrategyContext context = make_context(config, std::move(partition), dataset.feature_dim(),
                                         dataset.num_classes, std::move(strategy));
  if (dataset.features != nullptr) {
    context.model.set_input_nonzero_group_fraction(dataset.features->nonzero_group_fraction());
  }
  if (const auto* sparse = dynamic_cast<const SparseFeatures*>(dataset.features.get())) {
    use_sparse_feature_rows(context, sparse->row_entries());
  }
  if (config.distribution.cache_budget_bytes > 0) {
    add_replicas(context, config.distribution, *context.strategy,
                 partition_sizes(dataset.graph, context.partition));
  }
  return context;
}

StrategyContext make_strategy_context(const ExperimentConfig& config, NodePartition partition,
                                      int feature_dim, int num_classes) {
  return make_context(config, std::move(partition), feature_dim, num_classes,
                      make_strategy(config.distribution));
}

std::int64_t announcement_bytes(const std::vector<std::int32_t>& payload) {
  return static_cast<std::int64_t>(payload.size() * sizeof(std::int32_t));
}

std::vector<std::vector<SamplingHop>> sampling_traffic(const std::vector<MiniBatch>& batches,
                                                       const NodePartition& partition,
                                                       const Replication& structure_replicas) {
  const std::size_t num_ranks = batches.size();
  std::vector<std::vector<SamplingHop>> traffic(num_ranks);
  for (std::size_t r = 0; r < num_ranks; ++r) {
    const std::size_t num_hops = batches[r].blocks.size();
    traffic[r].resize(num_hops);
    for (SamplingHop& hop : traffic[r]) {
      hop.request_bytes_to.assign(num_ranks, 0);
      hop.request_bytes_from.assign(num_ranks, 0);
      hop.reply_bytes_to.assign(num_ranks, 0);
      hop.reply_bytes_from.assign(num_ranks, 0);
    }
  }
  for (std::size_t r = 0; r < num_ranks; ++r) {
    const std::size_t num_hops = batches[r].blocks.size();
    for (std::size_t h = 0; h < num_hops; ++h) {
      // Hop h samples the destinations of the block that feeds layer L-1-h.
      const Block& block = batches[r].blocks[num_hops - 1 - h];
      for (std::int64_t d = 0; d < block.num_dst; ++d) {
        const std::int64_t degree = block.offsets[static_cast<std::size_t>(d) + 1] -
                                    block.offsets[static_cast<std::size_t>(d)];
        const auto server = static_cast<std::size_t>(structure_replicas.server(
            static_cast<int>(r), partition.owner(block.src_nodes[static_cast<std::size_t>(d)])));
        if (server == r) {
          traffic[r][h].edges_sampled_locally += degree;
          continue;
        }
        const std::int64_t reply = 4 + 4 * degree;
        traffic[r][h].request_bytes_to[server] += 4;
        traffic[r][h].reply_bytes_from[server] += reply;
        traffic[server][h].request_bytes_from[r] += 4;
        traffic[server][h].reply_bytes_to[r] += reply;
        traffic[server][h].edges_sampled_for_peers += degree;
      }
    }
  }
  return traffic;
}

std::vector<Plan> plan_iteration(const Strategy& strategy, const StrategyContext& context,
                                 const Graph& structure, const BatchSchedule& schedule,
                                 std::uint64_t sampler_seed, int epoch, int iteration,
                                 const std::function<void(Plan&)>& finish,
                                 std::vector<std::vector<std::int32_t>>* carried_states) {
  const int num_ranks = context.num_ranks;
  if (carried_states) carried_states->resize(static_cast<std::size_t>(num_ranks));
  const NeighborSampler sampler(structure, context.training.fanouts, sampler_seed);
  const bool full_graph = strategy.full_graph();
  // The whole graph's GCN degrees, computed once: every rank's share carries them, and strategies
  // that compute beyond their share read them (RankIteration::gcn_degrees).
  const auto degrees =
      full_graph ? std::make_shared<const std::vector<std::int32_t>>(gcn_degrees(structure))
                 : nullptr;
  const std::vector<std::shared_ptr<const Block>> local_blocks =
      full_graph ? local_graph_blocks(structure, context.partition, *degrees)
                 : std::vector<std::shared_ptr<const Block>>{};
  std::vector<RankIteration> iterations(static_cast<std::size_t>(num_ranks));
  std::vector<MiniBatch> batches;
  for (int r = 0; r < num_ranks; ++r) {
    RankIteration& it = iterations[static_cast<std::size_t>(r)];
    it.rank = r;
    it.epoch = epoch;
    it.iteration = iteration;
    it.step = schedule.global_step(epoch, iteration);
    it.loss_scale = 1.0 / static_cast<double>(std::max<std::int64_t>(
                              1, schedule.seeds_in_iteration(epoch, iteration)));
    it.dropout_key = schedule.dropout_key(epoch, iteration);
    if (carried_states) it.carried_state = (*carried_states)[static_cast<std::size_t>(r)];
    const std::vector<NodeId> seeds = schedule.seeds(r, epoch, iteration);
    if (full_graph) {
      it.batch.seeds = seeds;
      it.local_block = local_blocks[static_cast<std::size_t>(r)];
      if (!context.structure_partitioned) {
        it.structure = &structure;
        it.gcn_degrees = degrees;
      }
      continue;
    }
    it.batch = sampler.sample(seeds, schedule.batch_key(epoch, iteration));
    batches.push_back(it.batch);
  }
  if (context.structure_partitioned && !full_graph) {
    auto traffic = sampling_traffic(batches, context.partition, context.structure_replicas);
    for (int r = 0; r < num_ranks; ++r) {
      iterations[static_cast<std::size_t>(r)].sampling_hops =
          std::move(traffic[static_cast<std::size_t>(r)]);
    }
  }
  // Every rank's batch is sampled above, and sampling is a pure function of the seeds and the
  // iteration's key: a rank that samples another's batch again gets that batch, so it is shared
  // rather than drawn again (tests/strategies/test_plans.cpp checks the two agree).
  auto derive_first_layer = [&](int owner, std::span<const NodeId> seeds) {
    const MiniBatch& batch = iterations.at(static_cast<std::size_t>(owner)).batch;
    if (!std::equal(seeds.begin(), seeds.end(), batch.seeds.begin(), batch.seeds.end())) {
      return derived_first_layer(sampler.sample(seeds, schedule.batch_key(epoch, iteration)));
    }
    return derived_first_layer(batch);
  };
  for (RankIteration& it : iterations) it.derive_first_layer = derive_first_layer;
  std::vector<Announcement> announcements;
  for (const RankIteration& it : iterations)
    announcements.push_back(strategy.announce(context, it));
  std::vector<Plan> plans;
  for (int r = 0; r < num_ranks; ++r) {
    Announcement received(static_cast<std::size_t>(num_ranks));
    for (int q = 0; q < num_ranks; ++q) {
      if (q != r)
        received.set(static_cast<std::size_t>(q), announcements[static_cast<std::size_t>(q)].shared(
                                                      static_cast<std::size_t>(r)));
    }
    plans.push_back(strategy.plan(context, iterations[static_cast<std::size_t>(r)],
                                  announcements[static_cast<std::size_t>(r)], received));
    if (carried_states) (*carried_states)[static_cast<std::size_t>(r)] = plans.back().carried_state;
    if (finish) finish(plans.back());
  }
  return plans;
}

}  // namespace gnnbed
