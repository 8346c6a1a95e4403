// PyTorch-BigGraph's distributed epoch as per-rank plans (pbg.hpp).
#include "strategies/pbg.hpp"

#include <algorithm>
#include <memory>
#include <string_view>
#include <tuple>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// A bucket's modelled duration for the schedule, in edges: its edges plus a lock round trip's
// worth, so that empty buckets take time too and every trainer's events are strictly ordered.
constexpr double kLockRoundTripEdges = 1000;

// What happens at one place in the epoch's order. At one time: relation parameters synchronised
// after a bucket, partitions given back, then requests (and the final "done"), then grants, then
// fetches, then training.
enum class Step : std::uint8_t { sync, give_back, request, grant, fetch, train };

// PBG's parameter client: at most 100 updates a second and 1 GB/s.
constexpr double kSyncIntervalSeconds = 0.01;
constexpr double kSyncBytesPerSecond = 1e9;

struct Exchange {
  double time = 0;
  Step step = Step::give_back;
  int trainer = 0;
  int item = 0;      // the partition moved, or -1
  int position = 0;  // the trainer's bucket: its place in the trainer's schedule
  auto key() const { return std::tuple(time, step, trainer, item); }
};

// The epoch's exchanges in order (see pbg.hpp).
std::vector<Exchange> epoch_order(const BucketSchedule& schedule, bool shares_relations) {
  std::vector<Exchange> order;
  for (int t = 0; t < static_cast<int>(schedule.by_trainer.size()); ++t) {
    const std::vector<ScheduledBucket>& mine = schedule.by_trainer[static_cast<std::size_t>(t)];
    for (int i = 0; i < static_cast<int>(mine.size()); ++i) {
      const ScheduledBucket& b = mine[static_cast<std::size_t>(i)];
      const double asked = i == 0 ? 0.0 : mine[static_cast<std::size_t>(i - 1)].end;
      for (const int p : b.released) order.push_back({asked, Step::give_back, t, p, i});
      order.push_back({asked, Step::request, t, -1, i});
      order.push_back({b.start, Step::grant, t, -1, i});
      for (const int p : b.fetched) order.push_back({b.start, Step::fetch, t, p, i});
      order.push_back({b.start, Step::train, t, -1, i});
      if (shares_relations) order.push_back({b.end, Step::sync, t, -1, i});
    }
    if (mine.empty()) continue;
    const auto last = static_cast<int>(mine.size());  // "position" one past: after the last
    for (const int p : mine.back().bucket.partitions())
      order.push_back({mine.back().end, Step::give_back, t, p, last});
    order.push_back({mine.back().end, Step::request, t, -1, last});
  }
  std::sort(order.begin(), order.end(),
            [](const Exchange& a, const Exchange& b) { return a.key() < b.key(); });
  return order;
}

// Edges per bucket, by EdgeBuckets::index.
std::vector<std::int64_t> bucket_sizes(const EdgeBuckets& buckets) {
  const int partitions = buckets.num_partitions();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(partitions) * partitions);
  for (int l = 0; l < partitions; ++l) {
    for (int r = 0; r < partitions; ++r)
      counts[static_cast<std::size_t>(buckets.index({l, r}))] = buckets.count({l, r});
  }
  return counts;
}

std::shared_ptr<const std::vector<std::int32_t>> no_edges() {
  static const auto none = std::make_shared<const std::vector<std::int32_t>>();
  return none;
}

class EpochPlanner {
 public:
  EpochPlanner(const PbgStrategy& strategy, const EntityPartitioning& partitioning,
               const std::vector<std::shared_ptr<const std::vector<std::int32_t>>>& edges,
               const EmbeddingExperimentConfig& config, int epoch)
      : strategy_(strategy),
        partitioning_(partitioning),
        edges_(edges),
        config_(config),
        epoch_(epoch),
        num_ranks_(strategy.num_ranks()),
        num_relations_(strategy.shared_relations()),
        relations_(static_cast<std::size_t>(num_ranks_), -1),
        tensors_(static_cast<std::size_t>(num_ranks_),
                 std::vector<int>(static_cast<std::size_t>(partitioning.num_partitions()), -1)),
        release_marker_(static_cast<std::size_t>(partitioning.num_partitions())),
        request_of_(static_cast<std::size_t>(num_ranks_)),
        grants_(static_cast<std::size_t>(num_ranks_)),
        trains_(static_cast<std::size_t>(num_ranks_)),
        given_back_(static_cast<std::size_t>(num_ranks_)),
        holder_(static_cast<std::size_t>(partitioning.num_partitions()), -1) {
    for (int r = 0; r < num_ranks_; ++r)
      builders_.emplace_back(kPbgStrategyName, r, num_ranks_, epoch, 0);
  }

  std::vector<Plan> plans(const std::vector<Exchange>& order) {
    for (const Exchange& e : order) {
      switch (e.step) {
        case Step::give_back:
          give_back(e);
          break;
        case Step::request:
          request(e);
          break;
        case Step::grant:
          grant(e);
          break;
        case Step::fetch:
          fetch(e);
          break;
        case Step::train:
          train(e);
          break;
        case Step::sync:
          sync(e);
          break;
      }
    }
    std::vector<Plan> plans;
    for (PlanBuilder& builder : builders_) plans.push_back(builder.finish());
    return plans;
  }

 private:
  const ScheduledBucket& scheduled(int trainer, int position) const {
    return strategy_.schedule()
        .by_trainer[static_cast<std::size_t>(trainer)][static_cast<std::size_t>(position)];
  }
  int bucket_code(const Bucket& b) const { return b.lhs * partitioning_.num_partitions() + b.rhs; }
  // The code of a trainer's "done" message: past every bucket's.
  int done_code() const { return partitioning_.num_partitions() * partitioning_.num_partitions(); }

  int table(int rank, int partition) {
    int& id = tensors_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(partition)];
    if (id < 0) {
      id = builders_[static_cast<std::size_t>(rank)].add_persistent(pbg_partition_tensor(partition),
                                                                    partitioning_.size(partition),
                                                                    config_.model.dimension + 1);
    }
    return id;
  }

  // What a message carries: a tensor of the sender's into one of the receiver's, or (no tensor) a
  // control message naming `code`.
  struct Payload {
    int from_tensor = -1;
    int to_tensor = -1;
    Traffic traffic = Traffic::control;
    std::uint64_t code = 0;
    bool changes = false;
    double throttle_seconds = 0;
  };
  Payload partition(int from, int to, int p) {
    return {table(from, p), table(to, p), Traffic::embeddings};
  }
  static Payload control(int code) {
    return {-1, -1, Traffic::control, static_cast<std::uint64_t>(code)};
  }

  // A send on `from` and the matching receive on `to`. Returns the two ops.
  std::pair<int, int> message(int from, Stream from_stream, int to, Stream to_stream,
                              const Payload& payload, const std::string& what,
                              std::vector<int> send_deps = {}, std::vector<int> receive_deps = {}) {
    PlanBuilder& sender = builders_[static_cast<std::size_t>(from)];
    PlanBuilder& receiver = builders_[static_cast<std::size_t>(to)];
    Op send;
    send.kind = OpKind::send;
    send.stream = from_stream;
    send.label = what + " to rank " + std::to_string(to);
    send.peer = to;
    send.deps = std::move(send_deps);
    send.throttle_seconds = payload.throttle_seconds;
    Op receive;
    receive.kind = OpKind::receive;
    receive.stream = to_stream;
    receive.label = what + " from rank " + std::to_string(from);
    receive.peer = from;
    receive.deps = std::move(receive_deps);
    send.changes = receive.changes = payload.changes;
    send.traffic = receive.traffic = payload.traffic;
    std::int64_t bytes = kControlMessageBytes;
    if (payload.from_tensor >= 0) {
      send.inputs = {payload.from_tensor};
      receive.outputs = {payload.to_tensor};
      bytes = sender.tensor(payload.from_tensor).bytes();
    } else {
      send.key = receive.key = payload.code;
    }
    send.bytes_to.assign(static_cast<std::size_t>(num_ranks_), 0);
    send.bytes_from = send.bytes_to;
    receive.bytes_to = send.bytes_to;
    receive.bytes_from = send.bytes_to;
    send.bytes_to[static_cast<std::size_t>(to)] = bytes;
    receive.bytes_from[static_cast<std::size_t>(from)] = bytes;
    return {sender.add_op(std::move(send)), receiver.add_op(std::move(receive))};
  }

  // Relation parameters: each trainer's copy, and on rank 0 the parameter server's.
  int relations(int rank) {
    return shared(relations_[static_cast<std::size_t>(rank)], rank, kPbgRelationsTensor);
  }
  int server_relations() { return shared(server_relations_, 0, kPbgServerRelationsTensor); }
  // `id`, the tensor's id in `rank`'s plan, declaring it first (-1: not yet).
  int shared(int& id, int rank, const char* name) {
    if (id < 0) {
      id = builders_[static_cast<std::size_t>(rank)].add_persistent(name, num_relations_,
                                                                    config_.model.dimension);
    }
    return id;
  }

  // After a bucket, the trainer pushes its changes to the parameter server and pulls its values
  // (rank 0's trainer too: PBG's server is a process of its own beside it).
  void sync(const Exchange& e) {
    Payload changes{relations(e.trainer), server_relations(), Traffic::weights, 0, true};
    const double bytes = static_cast<double>(builders_[0].tensor(server_relations()).bytes());
    changes.throttle_seconds = std::max(kSyncIntervalSeconds, bytes / kSyncBytesPerSecond);
    message(e.trainer, Stream::network, 0, Stream::server, changes, "relation changes");
    message(0, Stream::server, e.trainer, Stream::network,
            {server_relations(), relations(e.trainer), Traffic::weights}, "relation values");
  }

  // Partition e.item goes back from trainer e.trainer to its server.
  void give_back(const Exchange& e) {
    const int server = pbg_partition_server(e.item, num_ranks_);
    const std::vector<int>& trained = trains_[static_cast<std::size_t>(e.trainer)];
    if (server == e.trainer) {
      given_back_[static_cast<std::size_t>(e.trainer)].push_back(trained.back());
      return;
    }
    const int send =
        message(e.trainer, Stream::network, server, Stream::server,
                partition(e.trainer, server, e.item), "partition " + std::to_string(e.item))
            .first;
    given_back_[static_cast<std::size_t>(e.trainer)].push_back(send);
  }

  // The trainer asks rank 0 for its next bucket (or says it is done), which releases the one
  // before: once what it gives back is sent. On rank 0 itself, what marks the release are those
  // sends and the training before them.
  void request(const Exchange& e) {
    const auto t = static_cast<std::size_t>(e.trainer);
    const bool done = e.position == static_cast<int>(strategy_.schedule().by_trainer[t].size());
    std::vector<int>& given = given_back_[t];
    std::vector<int> marker;
    if (e.trainer == 0) {
      marker = given;
      if (!trains_[t].empty()) marker.push_back(trains_[t].back());
    } else {
      std::vector<int> deps = given;
      if (!trains_[t].empty()) deps.push_back(trains_[t].back());
      const int code = done ? done_code() : bucket_code(scheduled(e.trainer, e.position).bucket);
      const std::string what = done ? "done" : "request bucket " + std::to_string(code);
      marker = {message(e.trainer, Stream::network, 0, Stream::server, control(code), what,
                        std::move(deps))
                    .second};
    }
    given.clear();
    if (e.position > 0) {
      for (const int p : scheduled(e.trainer, e.position - 1).bucket.partitions())
        release_marker_[static_cast<std::size_t>(p)] = marker;
    }
    if (!done) request_of_[t] = marker;
  }

  // Rank 0 grants the bucket once every other trainer that held its partitions released them.
  void grant(const Exchange& e) {
    const Bucket bucket = scheduled(e.trainer, e.position).bucket;
    std::vector<int> deps;
    for (const int p : bucket.partitions()) {
      const int holder = holder_[static_cast<std::size_t>(p)];
      if (holder >= 0 && holder != e.trainer) {
        const std::vector<int>& marker = release_marker_[static_cast<std::size_t>(p)];
        deps.insert(deps.end(), marker.begin(), marker.end());
      }
      holder_[static_cast<std::size_t>(p)] = e.trainer;
    }
    const auto t = static_cast<std::size_t>(e.trainer);
    if (e.trainer == 0) {
      grants_[t] = deps;  // the lock server is local: training waits for the releases themselves
      return;
    }
    deps.insert(deps.end(), request_of_[t].begin(), request_of_[t].end());
    const int code = bucket_code(bucket);
    grants_[t] = {message(0, Stream::server, e.trainer, Stream::network, control(code),
                          "grant bucket " + std::to_string(code), std::move(deps))
                      .second};
  }

  // The trainer fetches partition e.item from its server, after the grant.
  void fetch(const Exchange& e) {
    const int server = pbg_partition_server(e.item, num_ranks_);
    if (server == e.trainer) return;  // at home: training reads the table where it is
    message(server, Stream::server, e.trainer, Stream::network,
            partition(server, e.trainer, e.item), "partition " + std::to_string(e.item), {},
            grants_[static_cast<std::size_t>(e.trainer)]);
  }

  void train(const Exchange& e) {
    const Bucket bucket = scheduled(e.trainer, e.position).bucket;
    const int code = bucket_code(bucket);
    PlanBuilder& builder = builders_[static_cast<std::size_t>(e.trainer)];
    const std::int64_t count = strategy_.bucket_counts()[static_cast<std::size_t>(code)];
    Op op;
    op.kind = OpKind::train_bucket;
    op.stream = Stream::compute;
    op.label =
        "train bucket (" + std::to_string(bucket.lhs) + ", " + std::to_string(bucket.rhs) + ")";
    TensorSpec edges;
    edges.name = "edges " + op.label.substr(13);
    edges.kind = TensorKind::index;
    edges.rows = 3 * count;
    edges.cols = 1;
    // Planned from bucket sizes alone (the simulator's), the plan carries none of its edges.
    edges.index = edges_.empty() ? no_edges() : edges_[static_cast<std::size_t>(code)];
    op.set_input(Input::edges, builder.add_tensor(std::move(edges)));
    op.set_input(Input::lhs, table(e.trainer, bucket.lhs));
    op.set_input(Input::rhs, table(e.trainer, bucket.rhs));
    op.outputs = bucket.partitions();
    for (int& p : op.outputs) p = table(e.trainer, p);
    if (num_relations_ > 0) {
      const int shared = relations(e.trainer);
      op.set_input(Input::relations, shared);
      op.outputs.push_back(shared);
    }
    op.deps = grants_[static_cast<std::size_t>(e.trainer)];
    op.key = bucket_seed(config_.training, epoch_, code);
    op.flops = bucket_flops(count, config_.model.dimension, config_.training);
    trains_[static_cast<std::size_t>(e.trainer)].push_back(builder.add_op(std::move(op)));
  }

  const PbgStrategy& strategy_;
  const EntityPartitioning& partitioning_;
  const std::vector<std::shared_ptr<const std::vector<std::int32_t>>>& edges_;
  const EmbeddingExperimentConfig& config_;
  int epoch_;
  int num_ranks_;
  int num_relations_;           // shared relation parameters' rows, 0 for none
  std::vector<int> relations_;  // [rank]: the trainer's copy's id, -1 until used
  int server_relations_ = -1;   // the parameter server's, on rank 0
  std::vector<PlanBuilder> builders_;
  std::vector<std::vector<int>> tensors_;  // [rank][partition]: its table's id, -1 until used
  // On rank 0: what marks the last release of each partition, and each trainer's last request.
  std::vector<std::vector<int>> release_marker_;
  std::vector<std::vector<int>> request_of_;  // per trainer
  std::vector<std::vector<int>> grants_;      // per trainer: what its next training waits for
  std::vector<std::vector<int>> trains_;      // per trainer: its train ops so far
  std::vector<std::vector<int>> given_back_;  // per trainer: ops giving back since its request
  std::vector<int> holder_;                   // per partition: the trainer granted it last
};

}  // namespace

bool asks_for_pbg(int argc, char** argv) {
  const std::string name = kPbgStrategyName;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--strategy=" + name) return true;
    if (argument == "--strategy" && i + 1 < argc && std::string_view(argv[i + 1]) == name)
      return true;
  }
  return false;
}

std::string pbg_partition_tensor(int partition) { return "partition " + std::to_string(partition); }

std::optional<int> pbg_partition_of(const std::string& tensor_name) {
  const std::string prefix = "partition ";
  if (!tensor_name.starts_with(prefix)) return std::nullopt;
  const std::string digits = tensor_name.substr(prefix.size());
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

double bucket_flops(std::int64_t edges, int dimension, const EmbeddingTrainingConfig& training) {
  const double candidates = 2.0 * (training.batch_negatives + training.uniform_negatives);
  return static_cast<double>(edges) * (1.0 + candidates) * dimension * 2.0 * 3.0;
}

PbgStrategy::PbgStrategy(const EntityPartitioning& partitioning,
                         std::vector<std::int64_t> bucket_counts, int num_relations,
                         const EmbeddingExperimentConfig& config, int num_ranks)
    : partitioning_(partitioning),
      config_(config),
      shared_relations_(config.model.scoring == "translation" ? num_relations : 0),
      num_ranks_(num_ranks),
      bucket_counts_(std::move(bucket_counts)) {
  check(config, num_ranks);
  const int partitions = partitioning.num_partitions();
  if (bucket_counts_.size() != static_cast<std::size_t>(partitions) * partitions) {
    throw Error("PBG plans: " + std::to_string(bucket_counts_.size()) + " bucket sizes for " +
                std::to_string(partitions) + " partitions");
  }
  schedule_ = schedule_epoch(partitions, num_ranks, [&](const Bucket& b) {
    return static_cast<double>(
               bucket_counts_[static_cast<std::size_t>(b.lhs * partitions + b.rhs)]) +
           kLockRoundTripEdges;
  });
}

PbgStrategy::PbgStrategy(const EntityPartitioning& partitioning, const EdgeBuckets& buckets,
                         int num_relations, const EmbeddingExperimentConfig& config, int num_ranks)
    : PbgStrategy(partitioning, bucket_sizes(buckets), num_relations, config, num_ranks) {
  const int partitions = partitioning.num_partitions();
  edges_.resize(static_cast<std::size_t>(partitions) * static_cast<std::size_t>(partitions));
  for (int l = 0; l < partitions; ++l) {
    for (int r = 0; r < partitions; ++r) {
      std::vector<std::int32_t> triples;
      triples.reserve(static_cast<std::size_t>(buckets.count({l, r})) * 3);
      for (const Triple& edge : buckets.edges({l, r}))
        triples.insert(triples.end(), {edge.source, edge.relation, edge.target});
      edges_[static_cast<std::size_t>(buckets.index({l, r}))] =
          std::make_shared<const std::vector<std::int32_t>>(std::move(triples));
    }
  }
}

void PbgStrategy::check(const EmbeddingExperimentConfig& config, int num_ranks) {
  if (num_ranks < 1) throw ConfigError("ranks", "must be at least 1");
  if (!config.training.swap_directory.empty()) {
    throw ConfigError("training.swap_directory",
                      "is for one machine: the pbg strategy's trainers hold only their bucket's "
                      "partitions, the rest are with their partition servers");
  }
}

std::vector<Plan> PbgStrategy::epoch_plans(int epoch) const {
  EpochPlanner planner(*this, partitioning_, edges_, config_, epoch);
  std::vector<Plan> plans = planner.plans(epoch_order(schedule_, shared_relations_ > 0));
  for (const Plan& plan : plans) plan.validate();
  return plans;
}

}  // namespace gnnbed
