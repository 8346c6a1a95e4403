#pragma once
// Accuracy of a distributed model without any rank holding the whole workload: full-graph
// inference (full neighbourhoods, no dropout, as evaluate_parameters does on one process) as a
// plan per rank (strategies/inference.hpp), run by the PlanExecutor like a training plan. The
// first evaluation announces what every rank will ask its peers for and builds the plan; every
// evaluation runs it with the parameters it is given. The result equals evaluate_parameters on
// the whole dataset up to float rounding.
//
// Its traffic goes through the transport's data plane and is counted there; bytes_sent() and
// bytes_received() say how much, so that training reports can leave it out.
#include <memory>
#include <optional>
#include <vector>

#include "exec/distributed/local_store.hpp"
#include "exec/distributed/plan_executor.hpp"
#include "exec/train/trainer.hpp"
#include "exec/transport.hpp"
#include "strategies/plan/plan.hpp"
#include "strategies/strategy.hpp"

namespace gnnbed {

class DistributedEvaluator {
 public:
  // `context` and `store` must outlive the evaluator. The features are where context.strategy
  // places them.
  DistributedEvaluator(const StrategyContext& context, const LocalStore& store,
                       Transport& transport);

  // Collective. Validation and test accuracy over every rank's nodes, on every rank.
  Accuracy evaluate(const std::vector<Parameter>& parameters);

  // Collective. The logits of this rank's validation nodes, then its test nodes, one row each
  // (valid until the next evaluation).
  const Matrix& logits(const std::vector<Parameter>& parameters);

  // Collective the first time: the rank's evaluation plan (built on first use).
  const Plan& plan();
  // The last evaluation's run of the plan, every op timed.
  const PlanOutcome& last_outcome() const { return outcome_; }

  // Data-plane bytes of every evaluation so far, the announcement included.
  const TrafficBytes& bytes_sent() const { return sent_; }
  const TrafficBytes& bytes_received() const { return received_; }

 private:
  const StrategyContext& context_;
  const LocalStore& store_;
  Transport& transport_;
  std::optional<Plan> plan_;
  std::unique_ptr<PlanExecutor> executor_;
  PlanOutcome outcome_;
  TrafficBytes sent_;
  TrafficBytes received_;
};

}  // namespace gnnbed
