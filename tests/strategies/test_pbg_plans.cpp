// PyTorch-BigGraph's plans (strategies/pbg.hpp), checked without an engine: every rank's plan is
// interpreted by the engines' rule (each stream in order, each op after its dependencies, a
// message matched to the peer's of the same number) with messages that complete as soon as both
// ends are started, tracking where each partition's table is and which version of it. Every run
// must finish, every bucket train the latest version of its partitions on the rank that holds
// them, and every partition be back at its server at the end.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <tuple>

#include "strategies/pbg.hpp"
#include "tests/support/planted_embeddings.hpp"
#include "workloads/link_prediction/link_prediction_data.hpp"

namespace gnnbed {
namespace {

struct Message {
  int partition = -1;
  int version = 0;
  std::uint64_t code = 0;
  bool relations = false;  // relation parameters (not tracked here)
};

class TokenRun {
 public:
  TokenRun(const std::vector<Plan>& plans, int partitions)
      : plans_(plans),
        heads_(plans.size()),
        done_(plans.size()),
        numbers_(plans.size()),
        version_(plans.size(), std::vector<int>(static_cast<std::size_t>(partitions), -1)),
        latest_(static_cast<std::size_t>(partitions), 0) {
    for (std::size_t r = 0; r < plans.size(); ++r) {
      done_[r].assign(plans[r].ops.size(), 0);
      std::vector<int> sent(plans.size(), 0);
      std::vector<int> received(plans.size(), 0);
      for (const Op& op : plans[r].ops) {
        int number = 0;
        if (op.kind == OpKind::send) number = sent[static_cast<std::size_t>(op.peer)]++;
        if (op.kind == OpKind::receive) number = received[static_cast<std::size_t>(op.peer)]++;
        numbers_[r].push_back(number);
      }
      for (int p = 0; p < partitions; ++p) {
        if (pbg_partition_server(p, static_cast<int>(plans.size())) == static_cast<int>(r))
          version_[r][static_cast<std::size_t>(p)] = 0;
      }
    }
  }

  // Runs to the end; the first problem, or "" when none.
  std::string run() {
    while (true) {
      bool progressed = false;
      for (std::size_t r = 0; r < plans_.size(); ++r) {
        for (std::size_t s = 0; s < heads_[r].size(); ++s) {
          const std::string problem = step(r, s, progressed);
          if (!problem.empty()) return problem;
        }
      }
      if (!progressed) break;
    }
    for (std::size_t r = 0; r < plans_.size(); ++r) {
      for (std::size_t i = 0; i < plans_[r].ops.size(); ++i) {
        if (done_[r][i] == 0)
          return "rank " + std::to_string(r) + " never runs op " + plans_[r].ops[i].label;
      }
    }
    return "";
  }

  const std::vector<std::vector<int>>& versions() const { return version_; }
  const std::vector<int>& latest() const { return latest_; }

 private:
  // The next op of stream `s` of rank `r` not yet done, or -1.
  int head(std::size_t r, std::size_t s) {
    const Plan& plan = plans_[r];
    std::size_t& at = heads_[r][s];
    while (at < plan.ops.size() &&
           (static_cast<std::size_t>(plan.ops[at].stream) != s || done_[r][at] != 0)) {
      ++at;
    }
    return at < plan.ops.size() ? static_cast<int>(at) : -1;
  }

  // The partition whose table `tensor` is, or -1 for relation parameters.
  int partition_of(std::size_t r, int tensor) const {
    return pbg_partition_of(plans_[r].tensors[static_cast<std::size_t>(tensor)].name).value_or(-1);
  }

  std::string step(std::size_t r, std::size_t s, bool& progressed) {
    const int i = head(r, s);
    if (i < 0) return "";
    const Op& op = plans_[r].ops[static_cast<std::size_t>(i)];
    for (const int d : op.deps) {
      if (done_[r][static_cast<std::size_t>(d)] == 0) return "";
    }
    const std::string where = "rank " + std::to_string(r) + ", " + op.label + ": ";
    std::vector<int>& version = version_[r];
    if (op.kind == OpKind::send) {
      Message message{-1, 0, op.key};
      message.relations = !op.inputs.empty() && partition_of(r, op.inputs[0]) < 0;
      if (!op.inputs.empty() && !message.relations) {
        message.partition = partition_of(r, op.inputs[0]);
        int& held = version[static_cast<std::size_t>(message.partition)];
        if (held < 0) return where + "sends a table it does not hold";
        message.version = held;
        held = -1;  // moved
      }
      in_flight_[{static_cast<int>(r), op.peer, numbers_[r][static_cast<std::size_t>(i)]}] =
          message;
    } else if (op.kind == OpKind::receive) {
      const auto key =
          std::tuple(op.peer, static_cast<int>(r), numbers_[r][static_cast<std::size_t>(i)]);
      const auto it = in_flight_.find(key);
      if (it == in_flight_.end()) return "";
      const Message message = it->second;
      in_flight_.erase(it);
      if (op.outputs.empty()) {
        if (message.partition >= 0 || message.code != op.key) return where + "mismatched message";
      } else if (partition_of(r, op.outputs[0]) < 0) {
        if (!message.relations) return where + "relation parameters from another message";
      } else {
        if (message.partition != partition_of(r, op.outputs[0]))
          return where + "received partition " + std::to_string(message.partition);
        version[static_cast<std::size_t>(message.partition)] = message.version;
      }
    } else {
      for (const int t : {op.input(Input::lhs), op.input(Input::rhs)}) {
        const auto p = static_cast<std::size_t>(partition_of(r, t));
        if (version[p] < 0) return where + "trains partition " + std::to_string(p) + " not held";
        if (version[p] != latest_[p]) {
          return where + "trains version " + std::to_string(version[p]) + " of partition " +
                 std::to_string(p) + ", latest " + std::to_string(latest_[p]);
        }
      }
      for (const int p : op.outputs) {
        if (partition_of(r, p) < 0) continue;
        const auto at = static_cast<std::size_t>(partition_of(r, p));
        version[at] = ++latest_[at];
      }
    }
    done_[r][static_cast<std::size_t>(i)] = 1;
    progressed = true;
    return "";
  }

  const std::vector<Plan>& plans_;
  std::vector<std::array<std::size_t, 5>> heads_;
  std::vector<std::vector<char>> done_;
  std::vector<std::vector<int>> numbers_;
  std::vector<std::vector<int>> version_;  // [rank][partition]: held version, -1 not held
  std::vector<int> latest_;
  std::map<std::tuple<int, int, int>, Message> in_flight_;  // (from, to, number)
};

EmbeddingExperimentConfig planted(std::int64_t entities, int partitions) {
  return testing::planted_embedding_config(entities, 5, partitions);
}

TEST(PbgPlans, RunToTheEndTrainingTheLatestVersionOfEveryPartition) {
  for (const int partitions : {1, 2, 4, 6, 9}) {
    for (const int ranks : {1, 2, 3, 4, 5}) {
      EmbeddingExperimentConfig config = planted(900, partitions);
      // Translation scoring adds the parameter server's exchanges after every bucket.
      if (ranks % 2 == 1) config.model.scoring = "translation";
      const LinkPredictionData data = load_link_prediction(config.workload);
      const EntityPartitioning partitioning(data.num_entities, partitions, 7);
      const EdgeBuckets buckets(data.train, partitioning);
      const PbgStrategy strategy(partitioning, buckets, data.num_relations(), config, ranks);
      const std::vector<Plan> plans = strategy.epoch_plans(1);
      TokenRun run(plans, partitions);
      ASSERT_EQ(run.run(), "") << partitions << " partitions, " << ranks << " ranks";
      for (int p = 0; p < partitions; ++p) {
        // Every bucket trained once: a partition's version counts its buckets (2P - 1, the
        // diagonal one counted once).
        EXPECT_EQ(run.latest()[static_cast<std::size_t>(p)], 2 * partitions - 1);
        const int server = pbg_partition_server(p, ranks);
        EXPECT_EQ(run.versions()[static_cast<std::size_t>(server)][static_cast<std::size_t>(p)],
                  run.latest()[static_cast<std::size_t>(p)])
            << "partition " << p << " back at rank " << server;
      }
    }
  }
}

// The simulator's plans, from bucket sizes alone, are the engines' plans without the edges.
TEST(PbgPlans, FromBucketSizesAloneMatchThoseCarryingTheEdges) {
  EmbeddingExperimentConfig config = planted(1200, 6);
  config.model.scoring = "translation";
  const LinkPredictionData data = load_link_prediction(config.workload);
  const EntityPartitioning partitioning(data.num_entities, 6, 3);
  const EdgeBuckets buckets(data.train, partitioning);
  const std::vector<Plan> carried =
      PbgStrategy(partitioning, buckets, data.num_relations(), config, 3).epoch_plans(2);
  const std::vector<Plan> sized = PbgStrategy(partitioning, bucket_counts(data.train, partitioning),
                                              data.num_relations(), config, 3)
                                      .epoch_plans(2);
  ASSERT_EQ(carried.size(), sized.size());
  for (std::size_t r = 0; r < carried.size(); ++r) {
    EXPECT_EQ(carried[r].bytes_sent(), sized[r].bytes_sent());
    EXPECT_EQ(carried[r].total_flops(), sized[r].total_flops());
    ASSERT_EQ(carried[r].ops.size(), sized[r].ops.size());
    for (std::size_t i = 0; i < carried[r].ops.size(); ++i) {
      EXPECT_EQ(carried[r].ops[i].label, sized[r].ops[i].label);
      EXPECT_EQ(carried[r].ops[i].deps, sized[r].ops[i].deps);
    }
    for (const TensorSpec& tensor : sized[r].tensors) {
      if (tensor.kind == TensorKind::index) {
        EXPECT_TRUE(tensor.index->empty()) << tensor.name;
      }
    }
  }
}

}  // namespace
}  // namespace gnnbed
