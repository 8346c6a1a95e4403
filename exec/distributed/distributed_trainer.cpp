#include "exec/distributed/distributed_trainer.hpp"

#include <cstdio>

#include "exec/distributed/distributed_evaluation.hpp"
#include "exec/distributed/op_timing.hpp"
#include "exec/distributed/rank_engine.hpp"
#include "exec/train/trainer.hpp"
#include "strategies/batch_schedule.hpp"
#include "strategies/caching.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

constexpr std::size_t kWaiting = kNumTimeCategories;

nlohmann::json trace_event(const Op& op, int rank, double start_seconds, double seconds) {
  return {{"name", op.label},
          {"cat", to_string(category_of(op.kind))},
          {"ph", "X"},
          {"pid", rank},
          {"tid", to_string(op.stream)},
          {"ts", 1e6 * start_seconds},
          {"dur", 1e6 * seconds}};
}

}  // namespace

std::string_view breakdown_part_name(std::size_t part) {
  return part == kWaiting ? std::string_view("waiting")
                          : to_string(static_cast<TimeCategory>(part));
}

DistributedReport train_distributed(const ExperimentConfig& config, const StrategyContext& context,
                                    const Dataset& dataset, Transport& transport,
                                    const DistributedOptions& options) {
  const int rank = transport.rank();
  return train_distributed(
      config, context,
      cut_shard(dataset, context.partition, rank,
                rank_placement(*make_strategy(config.distribution.strategy), context, rank)),
      transport, options);
}

DistributedReport train_distributed(const ExperimentConfig& config, const StrategyContext& context,
                                    RankShard shard, Transport& transport,
                                    const DistributedOptions& options) {
  const int rank = transport.rank();
  const int num_ranks = transport.size();
  if (context.num_ranks != num_ranks) {
    throw Error("the strategy context is for " + std::to_string(context.num_ranks) +
                " ranks, the transport has " + std::to_string(num_ranks));
  }
  RankEngine engine(config, context, std::move(shard), transport,
                    options.backend != nullptr ? *options.backend : cpu_backend());
  const BatchSchedule& schedule = engine.schedule();
  const bool evaluate = config.training.eval_every >= 0;
  std::vector<FeaturePlacement> placements;
  for (int q = 0; q < num_ranks; ++q) {
    placements.push_back(engine.strategy().feature_placement(context, q));
  }
  DistributedEvaluator evaluator(context.model, engine.store(), std::move(placements), transport);

  DistributedReport report;
  TrafficBytes planned_sent;
  TrafficBytes planned_received;
  const TrafficBytes sent_before = transport.bytes_sent();
  const TrafficBytes received_before = transport.bytes_received();
  nlohmann::json trace = nlohmann::json::array();
  if (options.record_trace) {
    trace.push_back({{"name", "process_name"},
                     {"ph", "M"},
                     {"pid", rank},
                     {"args", {{"name", "rank " + std::to_string(rank)}}}});
  }
  // Per-op measurements and recorded plans come from the epochs after the warm-up ones.
  const int first_measured =
      first_measured_epoch(config.training.epochs, config.training.warmup_epochs);
  OpKindTable measured_ops;
  double busy_seconds = 0;
  for (int epoch = 1; epoch <= config.training.epochs; ++epoch) {
    transport.barrier();
    const std::int64_t faults_before = page_faults();
    const Stopwatch clock;
    DistributedEpoch record;
    record.epoch = epoch;
    record.iterations = schedule.iterations_per_epoch();
    std::array<double, kNumBreakdownParts> parts{};
    double loss_sum = 0;
    std::int64_t correct = 0;
    std::int64_t seeds = 0;
    // What an iteration's run adds to the epoch's record.
    const auto account = [&](const IterationRun& run, int iteration) {
      seeds += schedule.seeds_in_iteration(epoch, iteration);
      const Plan& plan = run.plan;
      const PlanOutcome& outcome = run.outcome;
      record.planning_seconds += run.planning_seconds;
      parts[static_cast<std::size_t>(TimeCategory::sampling)] +=
          run.sample_seconds - run.sample_waiting + run.planning_seconds;
      parts[static_cast<std::size_t>(TimeCategory::communication)] +=
          run.announce_seconds - run.announce_waiting;
      parts[kWaiting] += run.announce_waiting + run.sample_waiting;
      planned_sent += plan.bytes_sent();
      planned_received += plan.bytes_received();
      for (const OpRecord& op : outcome.records) {
        const auto category =
            static_cast<std::size_t>(category_of(plan.ops[static_cast<std::size_t>(op.op)].kind));
        parts[category] += op.seconds - op.waiting_seconds;
        parts[kWaiting] += op.waiting_seconds;
      }
      if (epoch >= first_measured) measured_ops.add_iteration(run);

      if (options.record_trace && epoch == 1) {
        trace.push_back(trace_event(plan.ops[0], rank, run.sample_start, run.sample_seconds));
        if (plan.prologue_ops > 1) {
          trace.push_back(trace_event(plan.ops[1], rank, run.announce_start, run.announce_seconds));
        }
        trace.push_back(trace_event(plan.ops[plan.planning_op()], rank,
                                    run.announce_start + run.announce_seconds,
                                    run.planning_seconds));
        for (const OpRecord& op : outcome.records) {
          trace.push_back(trace_event(plan.ops[static_cast<std::size_t>(op.op)], rank,
                                      op.start_seconds, op.seconds));
        }
      }
      if (options.keep_first_plans && epoch == first_measured && iteration == 0) {
        const auto texts =
            transport.gather_to_root(plan_with_measured_seconds(run).to_json().dump());
        for (const std::string& text : texts) {
          report.first_plans.push_back(Plan::from_json(nlohmann::json::parse(text), "rank plan"));
        }
      }
    };
    if (context.pipeline_depth > 0) {
      // The epoch's iterations run interleaved; their results are summed once it is over, so
      // that no control-plane collective stops the pipeline.
      const std::vector<IterationRun> runs = engine.run_pipelined_epoch(epoch, clock);
      for (int iteration = 0; iteration < static_cast<int>(runs.size()); ++iteration) {
        const IterationRun& run = runs[static_cast<std::size_t>(iteration)];
        account(run, iteration);
        loss_sum += transport.sum_over_ranks(run.outcome.loss);
        correct += transport.sum_over_ranks(run.outcome.correct);
      }
    } else {
      for (int iteration = 0; iteration < schedule.iterations_per_epoch(); ++iteration) {
        const IterationRun run = engine.run_iteration(epoch, iteration, clock);
        account(run, iteration);
        loss_sum += transport.sum_over_ranks(run.outcome.loss);
        correct += transport.sum_over_ranks(run.outcome.correct);
      }
    }
    const double elapsed = clock.seconds();
    const auto faults = static_cast<double>(page_faults() - faults_before);
    record.seconds = transport.max_over_ranks(elapsed);
    record.page_faults_mean = transport.sum_over_ranks(faults) / num_ranks;
    record.page_faults_max = transport.max_over_ranks(faults);
    record.loss = loss_sum / std::max(1, record.iterations);
    record.train_accuracy =
        seeds > 0 ? static_cast<double>(correct) / static_cast<double>(seeds) : 0.0;
    for (std::size_t p = 0; p < kNumBreakdownParts; ++p) {
      record.mean_seconds[p] = transport.sum_over_ranks(parts[p]) / num_ranks;
      record.max_seconds[p] = transport.max_over_ranks(parts[p]);
    }
    record.planning_seconds = transport.sum_over_ranks(record.planning_seconds) / num_ranks;
    if (epoch >= first_measured) {
      for (const TimeCategory busy :
           {TimeCategory::copy, TimeCategory::compute, TimeCategory::communication}) {
        busy_seconds += parts[static_cast<std::size_t>(busy)];
      }
    }
    const bool evaluate_now =
        evaluate && (epoch == config.training.epochs ||
                     (config.training.eval_every > 0 && epoch % config.training.eval_every == 0));
    if (evaluate_now) {
      const std::vector<Parameter> values = engine.executor().gather_full_parameters(false);
      const Accuracy accuracy = evaluator.evaluate(values);
      record.val_accuracy = accuracy.validation;
      if (epoch == config.training.epochs) {
        report.val_accuracy = accuracy.validation;
        report.test_accuracy = accuracy.test;
      }
    }
    if (rank == 0 && !options.quiet) {
      std::printf("epoch %3d/%d  %.3f s  loss %.4f  train acc %5.1f %%", epoch,
                  config.training.epochs, record.seconds, record.loss, 100 * record.train_accuracy);
      if (record.val_accuracy >= 0) std::printf("  val acc %5.1f %%", 100 * record.val_accuracy);
      std::printf("\n");
      std::fflush(stdout);
    }
    report.epochs.push_back(record);
    // Every rank has the same loss (summed over ranks), so every rank stops together.
    check_divergence(config.training, epoch, record.loss);
  }

  // Every rank's traffic, memory and data, to rank 0 (control plane).
  RankReport mine;
  mine.rank = rank;
  mine.evaluation_sent = evaluator.bytes_sent();
  mine.evaluation_received = evaluator.bytes_received();
  mine.sent = transport.bytes_sent() - sent_before - mine.evaluation_sent;
  mine.received = transport.bytes_received() - received_before - mine.evaluation_received;
  mine.planned_sent = planned_sent;
  mine.planned_received = planned_received;
  mine.peak_memory_bytes = peak_resident_bytes();
  mine.stash_peak_bytes = engine.executor().stash_peak_bytes();
  mine.structure_bytes = engine.store().structure_bytes();
  mine.feature_bytes = engine.store().feature_bytes();
  mine.device_feature_bytes = engine.executor().device_feature_bytes();
  mine.partition = partition_shape(engine.store().structure(), engine.store().owned_nodes(),
                                   context.partition, rank);
  mine.busy_seconds = busy_seconds / (config.training.epochs - first_measured + 1);
  const std::string encoded = nlohmann::json{
      {"sent", mine.sent.bytes},
      {"received", mine.received.bytes},
      {"planned_sent", mine.planned_sent.bytes},
      {"planned_received", mine.planned_received.bytes},
      {"peak_memory_bytes", mine.peak_memory_bytes},
      {"stash_peak_bytes", mine.stash_peak_bytes},
      {"structure_bytes", mine.structure_bytes},
      {"feature_bytes", mine.feature_bytes},
      {"device_feature_bytes", mine.device_feature_bytes},
      {"evaluation_sent", mine.evaluation_sent.bytes},
      {"evaluation_received", mine.evaluation_received.bytes},
      {"vertices", mine.partition.vertices},
      {"edges", mine.partition.edges},
      {"remote_neighbours", mine.partition.remote_neighbours},
      {"busy_seconds",
       mine.busy_seconds}}.dump();
  const auto gathered = transport.gather_to_root(encoded);
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    const nlohmann::json object = nlohmann::json::parse(gathered[r]);
    RankReport entry;
    entry.rank = static_cast<int>(r);
    object.at("sent").get_to(entry.sent.bytes);
    object.at("received").get_to(entry.received.bytes);
    object.at("planned_sent").get_to(entry.planned_sent.bytes);
    object.at("planned_received").get_to(entry.planned_received.bytes);
    entry.peak_memory_bytes = object.at("peak_memory_bytes").get<std::int64_t>();
    entry.stash_peak_bytes = object.at("stash_peak_bytes").get<std::int64_t>();
    entry.structure_bytes = object.at("structure_bytes").get<std::int64_t>();
    entry.feature_bytes = object.at("feature_bytes").get<std::int64_t>();
    entry.device_feature_bytes = object.at("device_feature_bytes").get<std::int64_t>();
    object.at("evaluation_sent").get_to(entry.evaluation_sent.bytes);
    object.at("evaluation_received").get_to(entry.evaluation_received.bytes);
    entry.partition = {object.at("vertices").get<std::int64_t>(),
                       object.at("edges").get<std::int64_t>(),
                       object.at("remote_neighbours").get<std::int64_t>()};
    entry.busy_seconds = object.at("busy_seconds").get<double>();
    report.bytes_match = report.bytes_match && entry.sent == entry.planned_sent &&
                         entry.received == entry.planned_received;
    report.ranks.push_back(entry);
  }
  if (options.record_trace) {
    const auto traces = transport.gather_to_root(trace.dump());
    report.trace = nlohmann::json::array();
    for (const std::string& text : traces) {
      for (auto& event : nlohmann::json::parse(text)) report.trace.push_back(std::move(event));
    }
  }
  std::vector<OpKindTable> op_tables;
  for (const std::string& text : transport.gather_to_root(measured_ops.to_json().dump())) {
    op_tables.push_back(OpKindTable::from_json(nlohmann::json::parse(text)));
  }
  if (rank == 0) {
    report.measured_epochs = config.training.epochs - first_measured + 1;
    report.op_kinds = op_kinds_json(op_tables, report.measured_epochs);
  }
  std::vector<double> seconds;
  for (const DistributedEpoch& e : report.epochs) seconds.push_back(e.seconds);
  report.epoch_seconds = measured_epoch_seconds(seconds, config.training.warmup_epochs);
  return report;
}

nlohmann::json DistributedReport::to_json() const {
  nlohmann::json epoch_list = nlohmann::json::array();
  for (const DistributedEpoch& e : epochs) {
    nlohmann::json mean = nlohmann::json::object();
    nlohmann::json max = nlohmann::json::object();
    for (std::size_t p = 0; p < kNumBreakdownParts; ++p) {
      mean[std::string(breakdown_part_name(p))] = e.mean_seconds[p];
      max[std::string(breakdown_part_name(p))] = e.max_seconds[p];
    }
    nlohmann::json row = {
        {"epoch", e.epoch},
        {"seconds", e.seconds},
        {"loss", e.loss},
        {"train_accuracy", e.train_accuracy},
        {"iterations", e.iterations},
        {"breakdown_mean_seconds", mean},
        {"breakdown_max_seconds", max},
        {"planning_seconds", e.planning_seconds},
        {"page_faults", {{"mean", e.page_faults_mean}, {"max", e.page_faults_max}}}};
    if (e.val_accuracy >= 0) row["val_accuracy"] = e.val_accuracy;
    epoch_list.push_back(std::move(row));
  }
  nlohmann::json rank_list = nlohmann::json::array();
  for (const RankReport& r : ranks) {
    rank_list.push_back({{"rank", r.rank},
                         {"bytes_sent", r.sent.to_json()},
                         {"bytes_received", r.received.to_json()},
                         {"planned_bytes_sent", r.planned_sent.to_json()},
                         {"planned_bytes_received", r.planned_received.to_json()},
                         {"peak_memory_bytes", r.peak_memory_bytes},
                         {"stash_peak_bytes", r.stash_peak_bytes},
                         {"structure_bytes", r.structure_bytes},
                         {"feature_bytes", r.feature_bytes},
                         {"device_feature_bytes", r.device_feature_bytes},
                         {"evaluation_bytes_sent", r.evaluation_sent.to_json()},
                         {"evaluation_bytes_received", r.evaluation_received.to_json()},
                         {"partition",
                          {{"vertices", r.partition.vertices},
                           {"edges", r.partition.edges},
                           {"remote_neighbours", r.partition.remote_neighbours}}},
                         {"busy_seconds", r.busy_seconds}});
  }
  nlohmann::json result = {{"epoch_seconds", epoch_seconds},
                           {"bytes_match_plans", bytes_match},
                           {"epochs", epoch_list},
                           {"ranks", rank_list}};
  if (!op_kinds.is_null()) {
    result["ops_by_kind"] = {{"measured_epochs", measured_epochs}, {"kinds", op_kinds}};
  }
  if (val_accuracy >= 0) result["val_accuracy"] = val_accuracy;
  if (test_accuracy >= 0) result["test_accuracy"] = test_accuracy;
  return result;
}

}  // namespace gnnbed
