#include "exec/distributed/distributed_evaluation.hpp"

#include "exec/distributed/global_degrees.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "strategies/inference.hpp"
#include "strategies/model_ops.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

std::vector<NodeId> evaluation_targets(const Split& split) {
  std::vector<NodeId> targets = split.val;
  targets.insert(targets.end(), split.test.begin(), split.test.end());
  return targets;
}

}  // namespace

DistributedEvaluator::DistributedEvaluator(const StrategyContext& context, const LocalStore& store,
                                           Transport& transport)
    : context_(context), store_(store), transport_(transport) {}

const Plan& DistributedEvaluator::plan() {
  if (plan_) return *plan_;
  const TrafficBytes sent_before = transport_.bytes_sent();
  const TrafficBytes received_before = transport_.bytes_received();
  std::vector<FeaturePlacement> placements;
  for (int q = 0; q < context_.num_ranks; ++q) {
    placements.push_back(context_.strategy->feature_placement(context_, q));
  }
  EvaluationShare share{
      transport_.rank(),
      context_.model,
      context_.partition,
      std::move(placements),
      &store_.structure(),
      std::vector<NodeId>(store_.owned_nodes().begin(), store_.owned_nodes().end()),
      evaluation_targets(store_.shard().split),
      nullptr};
  if (context_.model.gcn_normalised()) {
    share.gcn_degrees =
        std::make_shared<const std::vector<std::int32_t>>(global_gcn_degrees(store_, transport_));
  }
  const EvaluationPlanner planner(std::move(share));
  TransferTiming timing;
  const Announcement received = exchange_announcement(planner.announcement(), transport_, timing);
  plan_ = planner.plan(received);
  executor_ = std::make_unique<PlanExecutor>(context_, full_model_parameters(context_.model),
                                             store_, transport_);
  sent_ += transport_.bytes_sent() - sent_before;
  received_ += transport_.bytes_received() - received_before;
  return *plan_;
}

Accuracy DistributedEvaluator::evaluate(const std::vector<Parameter>& parameters) {
  const Split& split = store_.shard().split;
  const Matrix& out = logits(parameters);
  auto correct = [&](const std::vector<NodeId>& nodes, std::size_t begin) {
    std::vector<std::int32_t> labels;
    labels.reserve(nodes.size());
    for (const NodeId v : nodes) labels.push_back(store_.label(v));
    return cpu::count_correct(out, static_cast<std::int64_t>(begin), labels);
  };
  const std::int64_t val_correct = transport_.sum_over_ranks(correct(split.val, 0));
  const std::int64_t test_correct =
      transport_.sum_over_ranks(correct(split.test, split.val.size()));
  const std::int64_t val_count =
      transport_.sum_over_ranks(static_cast<std::int64_t>(split.val.size()));
  const std::int64_t test_count =
      transport_.sum_over_ranks(static_cast<std::int64_t>(split.test.size()));
  auto ratio = [](std::int64_t right, std::int64_t all) {
    return all > 0 ? static_cast<double>(right) / static_cast<double>(all) : 0.0;
  };
  return {ratio(val_correct, val_count), ratio(test_correct, test_count)};
}

const Matrix& DistributedEvaluator::logits(const std::vector<Parameter>& parameters) {
  const Plan& evaluation = plan();
  for (const Parameter& given : parameters) {
    Parameter& held = executor_->parameter(given.name);
    if (held.value.rows() != given.value.rows() || held.value.cols() != given.value.cols()) {
      throw Error("evaluation: parameter " + given.name + " is " +
                  std::to_string(given.value.rows()) + " x " + std::to_string(given.value.cols()) +
                  ", the model's is " + std::to_string(held.value.rows()) + " x " +
                  std::to_string(held.value.cols()));
    }
    held.value.copy_from(given.value);
  }
  const TrafficBytes sent_before = transport_.bytes_sent();
  const TrafficBytes received_before = transport_.bytes_received();
  const Stopwatch clock;
  outcome_ = executor_->run(evaluation, clock);
  sent_ += transport_.bytes_sent() - sent_before;
  received_ += transport_.bytes_received() - received_before;
  // The plan's last op writes the logits.
  return executor_->dense(evaluation.ops.back().outputs.front());
}

}  // namespace gnnbed
