#pragma once
// A strategy is a pure function from (workload partition, model, training, mini-batches) to
// per-rank plans. Planning an iteration takes two steps, because a rank's plan depends on what
// its peers need from it:
//   1. every rank samples its own mini-batch and `announce`s to every peer what that peer must
//      know (DGL: the ids of the peer's nodes whose features it will pull; P3: its first-layer
//      computation graph, pushed to everyone);
//   2. every rank builds its `plan` from its own mini-batch and what its peers announced.
// The real engine performs the announcement over the network; the simulator computes it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/announcement.hpp"
#include "strategies/announcement_relay.hpp"
#include "strategies/batch_schedule.hpp"
#include "strategies/config/experiment_config.hpp"
#include "strategies/config/model_spec.hpp"
#include "strategies/config/training_config.hpp"
#include "strategies/plan/collective_schedule.hpp"
#include "strategies/plan/plan.hpp"
#include "strategies/replication.hpp"
#include "workloads/partition.hpp"
#include "workloads/rank_shard.hpp"  // FeaturePlacement
#include "workloads/sampler.hpp"
#include "workloads/shared_array.hpp"

namespace gnnbed {

class Strategy;

// What every rank's strategy knows about the run.
struct StrategyContext {
  int num_ranks = 1;
  ModelSpec model;
  TrainingConfig training;
  NodePartition partition;             // owners of nodes: structure, labels (and DGL's features)
  bool structure_partitioned = false;  // sampling over the network, or structure replicated
  int feature_dim = 0;
  // P3's caching: copies of other ranks' structure partitions (with partitioned structure) and
  // feature placements. A rank samples the nodes of the structure it holds locally, and reads
  // the features it holds without asking their owner.
  Replication structure_replicas;
  Replication feature_replicas;
  // The run's strategy with its own options, built once from the configuration
  // (make_strategy_context) and shared by everything that plans or places data for the run.
  std::shared_ptr<const Strategy> strategy;
  // Machines: every `ranks_per_machine` consecutive ranks share one (its host memory and NIC).
  // Set from distribution.ranks_per_machine, or where the run learns it (the simulated cluster,
  // MPI's shared-memory groups); plans depend on it only where the strategy uses the hierarchy.
  int ranks_per_machine = 1;
  // distribution.all_reduce "hierarchical": gradients are reduced within each machine before they
  // cross the network (collective_schedule.hpp).
  bool hierarchical_all_reduce = false;
  // distribution.all_to_all_block_steps: how a plan's all-to-all is posted (collective_schedule).
  int all_to_all_block_steps = kDefaultAllToAllBlockSteps;
  // The machines emit_all_reduce follows: ranks_per_machine when hierarchical, 1 for one ring.
  int all_reduce_ranks_per_machine() const {
    return hierarchical_all_reduce ? ranks_per_machine : 1;
  }
  // Input features as sparse rows: set where the workload stores them sparse (bag-of-words
  // features) and the model's first layer multiplies sparse rows as they are. Every node's stored
  // entries, which size the sparse tensors of the strategies that gather and send feature rows
  // (dgl-pull, ROC): their bytes on the wire are those of the entries. Empty: dense rows.
  SharedArray<std::int32_t> feature_row_entries{};
  bool sparse_feature_rows() const { return !feature_row_entries.empty(); }
  // The stored entries of `nodes`' feature rows (sparse_feature_rows() only).
  std::int64_t feature_entries(std::span<const NodeId> nodes) const;
};

// Another rank's first-layer computation graph, sampled again here.
struct DerivedFirstLayer {
  Block block;                     // the batch's blocks.front()
  std::int64_t sampled_edges = 0;  // over all hops: what sampling the batch again costs
};

// One rank's iteration, after sampling.
struct RankIteration {
  int rank = 0;
  int epoch = 0;
  int iteration = 0;
  std::int64_t step = 0;  // global optimizer step (BatchSchedule::global_step)
  double loss_scale = 1;  // 1 / seeds over all ranks this iteration
  std::uint64_t dropout_key = 0;
  MiniBatch batch;  // this rank's own mini-batch
  // The first-layer block of the mini-batch rank `owner` sampled from `seeds` in this iteration,
  // as this rank's engine samples it again, with the edges that took (P3's derived first-layer
  // graphs: the sampler is a pure function of the seeds and the iteration's key); unset where
  // the engine cannot.
  std::function<DerivedFirstLayer(int owner, std::span<const NodeId> seeds)> derive_first_layer;
  // Full-graph strategies (Strategy::full_graph): the rank's share of the graph, the same every
  // iteration and shared rather than copied (full_graph.hpp: its nodes as destinations with all
  // their in-edges, the whole graph's GCN degrees); batch.seeds are then all of the rank's
  // training nodes and batch.blocks is empty.
  std::shared_ptr<const Block> local_block;
  // Full-graph strategies with the structure replicated: the whole graph, and every node's GCN
  // degree in it, for strategies that compute beyond the rank's own nodes (NeutronStar's cached
  // dependencies); null where the structure is partitioned.
  const Graph* structure = nullptr;
  std::shared_ptr<const std::vector<std::int32_t>> gcn_degrees;
  // Traffic and work of sampling over partitioned structure (one entry per hop; empty when the
  // structure is replicated), as sampling_traffic() computes it.
  std::vector<SamplingHop> sampling_hops;
  // The carried_state of the plan the engine prepared before this one for the rank (empty for its
  // first), for strategies whose decisions depend on the ones before (Strategy::carries_state).
  std::vector<std::int32_t> carried_state;
  // The values of one of the rank's persistent tensors as the plans before left them (row-major;
  // empty where no plan has held it), for strategies that decide from the run's values (SANCUS's
  // change bound). Unset where there are none: the simulator computes no values.
  std::function<std::span<const float>(const std::string& name)> persistent_values;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;

  // Throws ConfigError when the strategy cannot run `context` (e.g. more ranks than P3 can split
  // the feature columns into).
  virtual void check(const StrategyContext& context) const = 0;

  // Full-graph strategies train every epoch in one step on the whole graph (training.batch_size
  // 0): each rank computes its own nodes at every layer on its share of the graph instead of
  // sampling mini-batches.
  virtual bool full_graph() const { return false; }

  // The features `rank` holds (its own feature partition, without replicas).
  virtual FeaturePlacement feature_placement(const StrategyContext& context, int rank) const = 0;

  // Whether the strategy's plans read replicas of other ranks' feature placements
  // (`context.feature_replicas`); without, features are never cached for it.
  virtual bool uses_feature_replicas() const { return false; }

  // How many epochs the plans take to repeat: those of epochs e and e + epoch_cycle() do the same
  // work (SANCUS broadcasts every few epochs and reuses what it received in between). The
  // simulator replays that many epochs and reports their mean.
  virtual int epoch_cycle() const { return 1; }

  // Whether a rank's plan depends on its plan of the iteration before (Plan::carried_state): the
  // simulator then plans the epochs before the first it replays, as the run went through them.
  virtual bool carries_state() const { return false; }

  // The depth of the pipeline its plans form (Plan::pipeline_depth; P3's pipelining), 0: none.
  virtual int pipeline_depth() const { return 0; }
  // Whether a rank's engine samples the first-layer graphs of its peers' mini-batches again from
  // their seeds (RankIteration::derive_first_layer) instead of receiving them.
  virtual bool derives_peer_first_layers() const { return false; }

  // The model parameters as `rank` holds them (full tensors, or its rows of a split one).
  virtual std::vector<ParameterSpec> parameters(const StrategyContext& context, int rank) const = 0;

  // How the announcements travel where they go through one relay per machine
  // (announcement_relay.hpp): then every rank's prologue has both exchanges, the engines run them
  // and the plans carry their bytes. None (the default): straight from sender to receiver. The
  // relays refer to `context`, which must outlive them.
  virtual std::optional<AnnouncementRelays> announcement_relays(
      const StrategyContext& /*context*/) const {
    return std::nullopt;
  }

  // What `iteration.rank` tells every peer before planning (entry [rank] is ignored).
  virtual Announcement announce(const StrategyContext& context,
                                const RankIteration& iteration) const = 0;

  // The rank's plan, given its own announcement (`sent`, what announce returned: planning uses it
  // rather than working it out again) and every peer's to it (received[q] is what q announced).
  virtual Plan plan(const StrategyContext& context, const RankIteration& iteration,
                    const Announcement& sent, const Announcement& received) const = 0;
};

// What a rank's engine hands P3 for another rank's batch it sampled again (the first block, and
// every hop's sampled edges).
DerivedFirstLayer derived_first_layer(const MiniBatch& batch);

// Everything a strategy needs to know about a run of `config` on `num_ranks` ranks: the model
// resolved for the dataset, the node partition (computed by the configured partitioner) and the
// structure mode. Throws ConfigError when the configuration does not fit (no mini-batches, more
// ranks than nodes, or more than the strategy can split the work into).
StrategyContext make_strategy_context(const ExperimentConfig& config, const Dataset& dataset,
                                      int num_ranks);
// Feature rows stored sparse with these entries per node (a sharded workload's, or the dataset's,
// which make_strategy_context(config, dataset, ...) passes): the context's feature_row_entries,
// shared, where the model's first layer takes sparse rows.
void use_sparse_feature_rows(StrategyContext& context, SharedArray<std::int32_t> row_entries);

// The same for a run whose node owners are already known (a sharded workload's), without the
// graph: one rank per part of `partition`.
StrategyContext make_strategy_context(const ExperimentConfig& config, NodePartition partition,
                                      int feature_dim, int num_classes);

// The strategy `distribution` names, with the options it sets for it (P3's pipelining and
// first-layer graphs). Known names: "dgl-pull", "neutronstar", "p3", "roc", "sancus". Throws
// ConfigError listing them for any other name, and naming the field for an option the strategy does
// not take.
std::unique_ptr<Strategy> make_strategy(const DistributionConfig& distribution);
// The named strategy with its default options.
std::unique_ptr<Strategy> make_strategy(std::string_view name);
std::vector<std::string> strategy_names();

// The traffic of sampling every rank's mini-batch over partitioned structure: for rank r and hop
// h, node-id requests (4 bytes each) to the owners of r's remote frontier nodes, and replies of a
// count plus the sampled neighbour ids (4 bytes each). result[r][h]. With caching, r samples
// the nodes of every part whose structure it holds itself and asks the rest of the rank of its
// group that holds their part (`structure_replicas.server`) instead of their owner.
std::vector<std::vector<SamplingHop>> sampling_traffic(const std::vector<MiniBatch>& batches,
                                                       const NodePartition& partition,
                                                       const Replication& structure_replicas = {});

// Everything one iteration of every rank needs, computed in one process (the simulator's and the
// tests' view): samples every rank's mini-batch with the sampler the real run uses (or, for a
// full-graph strategy, cuts every rank's share of `structure`), delivers the announcements and
// builds every rank's plan. `finish`, when given, runs on each plan as soon as it is built: the
// simulator accounts for a plan's memory there and drops its payloads (blocks, index values),
// which the plans of hundreds of ranks could not all hold at once. `carried_states`, when given,
// holds every rank's Plan::carried_state from the iteration before, and the new plans' after.
std::vector<Plan> plan_iteration(const Strategy& strategy, const StrategyContext& context,
                                 const Graph& structure, const BatchSchedule& schedule,
                                 std::uint64_t sampler_seed, int epoch, int iteration,
                                 const std::function<void(Plan&)>& finish = {},
                                 std::vector<std::vector<std::int32_t>>* carried_states = nullptr);

// The payload bytes of an announcement entry.
std::int64_t announcement_bytes(const std::vector<std::int32_t>& payload);

}  // namespace gnnbed
