#include "strategies/strategy.hpp"

#include <functional>
#include <map>

#include "workloads/common/errors.hpp"

namespace gnnbed {

std::unique_ptr<Strategy> make_dgl_pull_strategy();
std::unique_ptr<Strategy> make_p3_strategy();

namespace {

const std::map<std::string, std::function<std::unique_ptr<Strategy>()>, std::less<>>& registry() {
  static const std::map<std::string, std::function<std::unique_ptr<Strategy>()>, std::less<>>
      known = {
          {"dgl-pull", make_dgl_pull_strategy},
          {"p3", make_p3_strategy},
      };
  return known;
}

void check_fits(const ExperimentConfig& config, std::int64_t num_nodes, int num_ranks) {
  require(config.training.batch_size > 0, "training.batch_size",
          "distributed training runs mini-batches: set a batch size (full-graph strategies come "
          "with ROC, issue 5)");
  require(num_ranks <= num_nodes, "ranks",
          std::to_string(num_ranks) + " ranks for " + std::to_string(num_nodes) +
              " nodes: every rank must own a node");
}

}  // namespace

std::unique_ptr<Strategy> make_strategy(std::string_view name) {
  const auto it = registry().find(name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& entry : registry()) known += (known.empty() ? "" : ", ") + entry.first;
    throw ConfigError("strategy", "'" + std::string(name) + "' is not one of: " + known);
  }
  return it->second();
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

StrategyContext make_strategy_context(const ExperimentConfig& config, const Dataset& dataset,
                                      int num_ranks) {
  check_fits(config, dataset.num_nodes(), num_ranks);
  NodePartition partition =
      make_partitioner(config.distribution.partitioner)
          ->partition(dataset.graph, num_ranks, config.distribution.partition_seed);
  return make_strategy_context(config, std::move(partition), dataset.feature_dim(),
                               dataset.num_classes);
}

StrategyContext make_strategy_context(const ExperimentConfig& config, NodePartition partition,
                                      int feature_dim, int num_classes) {
  const int num_ranks = partition.num_parts();
  check_fits(config, partition.num_nodes(), num_ranks);
  const ModelSpec spec(config.model, feature_dim, num_classes);
  validate(config.training, spec.num_layers());
  StrategyContext context{num_ranks,
                          spec,
                          config.training,
                          std::move(partition),
                          config.distribution.structure == "partitioned",
                          feature_dim};
  make_strategy(config.distribution.strategy)->check(context);
  return context;
}

std::int64_t announcement_bytes(const std::vector<std::int32_t>& payload) {
  return static_cast<std::int64_t>(payload.size() * sizeof(std::int32_t));
}

std::vector<std::vector<SamplingHop>> sampling_traffic(const std::vector<MiniBatch>& batches,
                                                       const NodePartition& partition) {
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
        const auto owner =
            static_cast<std::size_t>(partition.owner(block.src_nodes[static_cast<std::size_t>(d)]));
        if (owner == r) {
          traffic[r][h].edges_sampled_locally += degree;
          continue;
        }
        const std::int64_t reply = 4 + 4 * degree;
        traffic[r][h].request_bytes_to[owner] += 4;
        traffic[r][h].reply_bytes_from[owner] += reply;
        traffic[owner][h].request_bytes_from[r] += 4;
        traffic[owner][h].reply_bytes_to[r] += reply;
        traffic[owner][h].edges_sampled_for_peers += degree;
      }
    }
  }
  return traffic;
}

std::vector<Plan> plan_iteration(const Strategy& strategy, const StrategyContext& context,
                                 const Graph& structure, const BatchSchedule& schedule,
                                 std::uint64_t sampler_seed, int epoch, int iteration) {
  const int num_ranks = context.num_ranks;
  const NeighborSampler sampler(structure, context.training.fanouts, sampler_seed);
  std::vector<RankIteration> iterations(static_cast<std::size_t>(num_ranks));
  std::vector<MiniBatch> batches;
  for (int r = 0; r < num_ranks; ++r) {
    RankIteration& it = iterations[static_cast<std::size_t>(r)];
    it.rank = r;
    it.epoch = epoch;
    it.iteration = iteration;
    it.loss_scale = 1.0 / static_cast<double>(std::max<std::int64_t>(
                              1, schedule.seeds_in_iteration(epoch, iteration)));
    it.dropout_key = schedule.dropout_key(epoch, iteration);
    const std::vector<NodeId> seeds = schedule.seeds(r, epoch, iteration);
    it.batch = sampler.sample(seeds, schedule.batch_key(epoch, iteration));
    batches.push_back(it.batch);
  }
  if (context.structure_partitioned) {
    auto traffic = sampling_traffic(batches, context.partition);
    for (int r = 0; r < num_ranks; ++r) {
      iterations[static_cast<std::size_t>(r)].sampling_hops =
          std::move(traffic[static_cast<std::size_t>(r)]);
    }
  }
  std::vector<Announcement> announcements;
  for (const RankIteration& it : iterations)
    announcements.push_back(strategy.announce(context, it));
  std::vector<Plan> plans;
  for (int r = 0; r < num_ranks; ++r) {
    Announcement received(static_cast<std::size_t>(num_ranks));
    for (int q = 0; q < num_ranks; ++q) {
      if (q != r)
        received[static_cast<std::size_t>(q)] =
            announcements[static_cast<std::size_t>(q)][static_cast<std::size_t>(r)];
    }
    plans.push_back(strategy.plan(context, iterations[static_cast<std::size_t>(r)], received));
  }
  return plans;
}

}  // namespace gnnbed
