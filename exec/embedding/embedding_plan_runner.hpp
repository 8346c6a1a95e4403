#pragma once
// Runs PyTorch-BigGraph's plans (strategies/pbg.hpp) for real on one rank: train_bucket ops train
// on the partitions' tables, send and receive ops move tables and lock messages through the
// transport's point-to-point transfers. The rule, the one the simulator replays by: each stream of
// the plan runs its ops in plan order, one at a time; an op starts once its dependencies are done;
// a transfer completes in the background and its stream goes on after it. The rank has one thread
// (ranks share the cores): between the batches of a bucket it trains, it starts and tests the
// transfers of its other streams, so its partition server answers peers while it trains, as PBG's
// server processes do beside its trainer.
//
// A partition's table lives in one place at a time: the rank that serves it creates it at its
// start values, a send moves it away (the sender's copy is dropped once sent) and a receive brings
// it in. Reading a table the rank does not hold is an error, as is a lock message whose bucket
// differs from the one the plan expects.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/embedding/bucket_training.hpp"
#include "exec/transport.hpp"
#include "strategies/config/embedding_config.hpp"
#include "strategies/plan/plan.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/link_prediction/entity_buckets.hpp"

namespace gnnbed {

struct EmbeddingPlanOutcome {
  double seconds = 0;        // the plan, start to end
  double train_seconds = 0;  // of which training buckets
  double loss = 0;           // summed over the edges trained
  std::int64_t edges = 0;
};

class EmbeddingPlanRunner {
 public:
  // The rank's transfers must make progress within `stall_timeout_seconds` (0: no limit), or run()
  // throws Error naming the ops it waits for (a peer that died or a plan that does not match).
  EmbeddingPlanRunner(const EntityPartitioning& partitioning, int num_relations,
                      const EmbeddingExperimentConfig& config, Transport& transport,
                      double stall_timeout_seconds);

  EmbeddingPlanOutcome run(const Plan& plan);

  // The tables the rank holds, by partition.
  const std::map<int, PartitionTable>& tables() const { return tables_; }
  // Rank 0: the relation parameters as the parameter server holds them (empty for dot scoring).
  RelationParameters server_relations() const;

 private:
  struct Transfer;
  class Interpreter;

  PartitionTable& table(const Plan& plan, int tensor);
  // Relation parameters by tensor name: the trainer's copy, or the parameter server's.
  std::vector<float>& relation_values(const std::string& name);
  // A send's payload: values, or (a trainer's push) the change since its last pull.
  std::vector<std::byte> relation_payload(const std::string& name, bool changes);
  // A receive: changes added (the server), or values pulled (a trainer: the base of its changes).
  void receive_relations(const std::string& name, const std::vector<std::byte>& bytes,
                         bool changes);

  const EntityPartitioning& partitioning_;
  EmbeddingExperimentConfig config_;
  BucketHyperparameters hyper_;
  Transport& transport_;
  double stall_timeout_seconds_;
  std::map<int, PartitionTable> tables_;
  RelationParameters relations_;         // the trainer's (none for dot scoring), with its Adagrad
  std::vector<float> relations_base_;    // their values at the last pull
  std::vector<float> server_relations_;  // rank 0: the parameter server's
  Stopwatch clock_;
  std::optional<double> last_throttled_send_seconds_;  // on clock_
};

}  // namespace gnnbed
