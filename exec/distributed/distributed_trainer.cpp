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

// A rank's Chrome trace events of one iteration: its prologue, then its ops as they ran.
void add_trace_events(const IterationRun& run, int rank, nlohmann::json& trace) {
  const Plan& plan = run.plan;
  trace.push_back(trace_event(plan.ops[0], rank, run.sample_start, run.sample_seconds));
  if (plan.prologue_ops > 1) {
    trace.push_back(trace_event(plan.ops[1], rank, run.announce_start, run.announce_seconds));
  }
  double exchanged = run.announce_start + run.announce_seconds;
  if (run.relayed) {
    trace.push_back(trace_event(plan.ops[2], rank, run.relay_start, run.relay_seconds));
    exchanged = run.relay_start + run.relay_seconds;
  }
  trace.push_back(trace_event(plan.ops[plan.planning_op()], rank, exchanged, run.planning_seconds));
  for (const OpRecord& op : run.outcome.records) {
    trace.push_back(
        trace_event(plan.ops[static_cast<std::size_t>(op.op)], rank, op.start_seconds, op.seconds));
  }
}

// What one rank's iterations of an epoch add up to, before the sums over ranks.
struct EpochTally {
  std::array<double, kNumBreakdownParts> parts{};
  double planning_seconds = 0;

  void add(const IterationRun& run) {
    planning_seconds += run.planning_seconds;
    parts[static_cast<std::size_t>(TimeCategory::sampling)] +=
        run.sample_seconds - run.sample_waiting + run.planning_seconds;
    parts[static_cast<std::size_t>(TimeCategory::communication)] +=
        run.announce_seconds - run.announce_waiting + run.relay_seconds - run.relay_waiting;
    parts[kWaiting] += run.announce_waiting + run.relay_waiting + run.sample_waiting;
    for (const OpRecord& op : run.outcome.records) {
      const OpKind kind = run.plan.ops[static_cast<std::size_t>(op.op)].kind;
      parts[static_cast<std::size_t>(category_of(kind))] += op.seconds - op.waiting_seconds;
      parts[kWaiting] += op.waiting_seconds;
    }
  }
  // Copy, compute and communication; waiting left out.
  double busy_seconds() const {
    double busy = 0;
    for (const TimeCategory part :
         {TimeCategory::copy, TimeCategory::compute, TimeCategory::communication}) {
      busy += parts[static_cast<std::size_t>(part)];
    }
    return busy;
  }
};

// Collective: the epoch's times over every rank (mean and slowest).
void add_rank_times(const EpochTally& tally, double elapsed_seconds, double page_faults,
                    Transport& transport, DistributedEpoch& record) {
  const int num_ranks = transport.size();
  record.seconds = transport.max_over_ranks(elapsed_seconds);
  record.page_faults_mean = transport.sum_over_ranks(page_faults) / num_ranks;
  record.page_faults_max = transport.max_over_ranks(page_faults);
  for (std::size_t p = 0; p < kNumBreakdownParts; ++p) {
    record.mean_seconds[p] = transport.sum_over_ranks(tally.parts[p]) / num_ranks;
    record.max_seconds[p] = transport.max_over_ranks(tally.parts[p]);
  }
  record.planning_seconds = transport.sum_over_ranks(tally.planning_seconds) / num_ranks;
}

void print_epoch(const DistributedEpoch& record, int epochs) {
  std::printf("epoch %3d/%d  %.3f s  loss %.4f  train acc %5.1f %%", record.epoch, epochs,
              record.seconds, record.loss, 100 * record.train_accuracy);
  if (record.val_accuracy >= 0) std::printf("  val acc %5.1f %%", 100 * record.val_accuracy);
  std::printf("\n");
  std::fflush(stdout);
}

std::string encode_rank_report(const RankReport& r) {
  return nlohmann::json{{"sent", r.sent.bytes},
                        {"received", r.received.bytes},
                        {"planned_sent", r.planned_sent.bytes},
                        {"planned_received", r.planned_received.bytes},
                        {"peak_memory_bytes", r.peak_memory_bytes},
                        {"stash_peak_bytes", r.stash_peak_bytes},
                        {"structure_bytes", r.structure_bytes},
                        {"feature_bytes", r.feature_bytes},
                        {"device_feature_bytes", r.device_feature_bytes},
                        {"evaluation_sent", r.evaluation_sent.bytes},
                        {"evaluation_received", r.evaluation_received.bytes},
                        {"vertices", r.partition.vertices},
                        {"edges", r.partition.edges},
                        {"remote_neighbours", r.partition.remote_neighbours},
                        {"busy_seconds", r.busy_seconds}}
      .dump();
}

RankReport decode_rank_report(const std::string& text, int rank) {
  const nlohmann::json object = nlohmann::json::parse(text);
  RankReport r;
  r.rank = rank;
  object.at("sent").get_to(r.sent.bytes);
  object.at("received").get_to(r.received.bytes);
  object.at("planned_sent").get_to(r.planned_sent.bytes);
  object.at("planned_received").get_to(r.planned_received.bytes);
  object.at("peak_memory_bytes").get_to(r.peak_memory_bytes);
  object.at("stash_peak_bytes").get_to(r.stash_peak_bytes);
  object.at("structure_bytes").get_to(r.structure_bytes);
  object.at("feature_bytes").get_to(r.feature_bytes);
  object.at("device_feature_bytes").get_to(r.device_feature_bytes);
  object.at("evaluation_sent").get_to(r.evaluation_sent.bytes);
  object.at("evaluation_received").get_to(r.evaluation_received.bytes);
  object.at("vertices").get_to(r.partition.vertices);
  object.at("edges").get_to(r.partition.edges);
  object.at("remote_neighbours").get_to(r.partition.remote_neighbours);
  object.at("busy_seconds").get_to(r.busy_seconds);
  return r;
}

// Collective: every rank's table, on rank 0 (control plane; empty elsewhere).
std::vector<OpKindTable> gather_op_tables(const OpKindTable& mine, Transport& transport) {
  std::vector<OpKindTable> tables;
  for (const std::string& text : transport.gather_to_root(mine.to_json().dump())) {
    tables.push_back(OpKindTable::from_json(nlohmann::json::parse(text)));
  }
  return tables;
}

// One run of distributed training on this rank: the epochs, each followed by the sums over
// ranks, evaluation when due, and at the end every rank's report gathered on rank 0.
class DistributedTraining {
 public:
  DistributedTraining(const ExperimentConfig& config, const StrategyContext& context,
                      RankShard shard, Transport& transport, const DistributedOptions& options)
      : config_(config),
        context_(context),
        transport_(transport),
        options_(options),
        engine_(config, context, std::move(shard), transport,
                options.backend != nullptr ? *options.backend : cpu_backend()),
        evaluator_(context, engine_.store(), transport),
        sent_before_(transport.bytes_sent()),
        received_before_(transport.bytes_received()),
        first_measured_(
            first_measured_epoch(config.training.epochs, config.training.warmup_epochs)) {
    if (options.record_trace) {
      trace_.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", transport.rank()},
                        {"args", {{"name", "rank " + std::to_string(transport.rank())}}}});
    }
  }

  DistributedReport run() {
    for (int epoch = 1; epoch <= config_.training.epochs; ++epoch) {
      DistributedEpoch record = train_epoch(epoch);
      evaluate_if_due(record);
      if (transport_.rank() == 0 && !options_.quiet) print_epoch(record, config_.training.epochs);
      report_.epochs.push_back(record);
      // Every rank has the same loss (summed over ranks), so every rank stops together.
      check_divergence(config_.training, epoch, record.loss);
    }
    gather_rank_reports();
    gather_traces_and_op_kinds();
    std::vector<double> seconds;
    for (const DistributedEpoch& e : report_.epochs) seconds.push_back(e.seconds);
    report_.epoch_seconds = measured_epoch_seconds(seconds, config_.training.warmup_epochs);
    return std::move(report_);
  }

 private:
  // Collective: one epoch's iterations, then its record over every rank.
  DistributedEpoch train_epoch(int epoch) {
    transport_.barrier();
    const std::int64_t faults_before = page_faults();
    const Stopwatch clock;
    const std::vector<IterationRun> runs = engine_.run_epoch(epoch, clock);
    const double elapsed_seconds = clock.seconds();
    const auto faults = static_cast<double>(page_faults() - faults_before);

    DistributedEpoch record;
    record.epoch = epoch;
    record.iterations = engine_.schedule().iterations_per_epoch();
    EpochTally tally;
    double loss_sum = 0;
    std::int64_t correct = 0;
    std::int64_t seeds = 0;
    for (int iteration = 0; iteration < static_cast<int>(runs.size()); ++iteration) {
      const IterationRun& run = runs[static_cast<std::size_t>(iteration)];
      tally.add(run);
      record_iteration(run, epoch, iteration);
      seeds += engine_.schedule().seeds_in_iteration(epoch, iteration);
      loss_sum += transport_.sum_over_ranks(run.outcome.loss);
      correct += transport_.sum_over_ranks(run.outcome.correct);
    }
    add_rank_times(tally, elapsed_seconds, faults, transport_, record);
    record.loss = loss_sum / std::max(1, record.iterations);
    record.train_accuracy =
        seeds > 0 ? static_cast<double>(correct) / static_cast<double>(seeds) : 0.0;
    if (epoch >= first_measured_) busy_seconds_ += tally.busy_seconds();
    return record;
  }

  // Planned bytes, op timings, the trace and the first plans, as asked for (collective).
  void record_iteration(const IterationRun& run, int epoch, int iteration) {
    planned_sent_ += run.plan.bytes_sent();
    planned_received_ += run.plan.bytes_received();
    if (epoch >= first_measured_) measured_ops_.add_iteration(run);
    if (options_.record_trace && epoch == 1) add_trace_events(run, transport_.rank(), trace_);
    if (options_.keep_first_plans && epoch == first_measured_ && iteration == 0) {
      const auto texts =
          transport_.gather_to_root(plan_with_measured_seconds(run).to_json().dump());
      for (const std::string& text : texts) {
        report_.first_plans.push_back(Plan::from_json(nlohmann::json::parse(text), "rank plan"));
      }
    }
  }

  // Collective: evaluates after the last epoch and every eval_every epochs.
  void evaluate_if_due(DistributedEpoch& record) {
    const TrainingConfig& training = config_.training;
    const bool last = record.epoch == training.epochs;
    const bool due = training.eval_every >= 0 &&
                     (last || (training.eval_every > 0 && record.epoch % training.eval_every == 0));
    if (!due) return;
    const std::vector<Parameter> parameters = engine_.executor().gather_full_parameters(false);
    evaluator_.plan();  // built once, before the first evaluation's clock starts
    transport_.barrier();
    const Stopwatch clock;
    const Accuracy accuracy = evaluator_.evaluate(parameters);
    report_.evaluation_seconds = transport_.max_over_ranks(clock.seconds());
    record.val_accuracy = accuracy.validation;
    if (last) {
      report_.val_accuracy = accuracy.validation;
      report_.test_accuracy = accuracy.test;
      record_evaluation_ops();
    }
  }

  // Collective: the last evaluation's ops per kind, over every rank (rank 0).
  void record_evaluation_ops() {
    OpKindTable evaluation_ops;
    for (const OpRecord& ran : evaluator_.last_outcome().records) {
      evaluation_ops.add(evaluator_.plan().ops[static_cast<std::size_t>(ran.op)], ran.seconds,
                         ran.waiting_seconds);
    }
    const std::vector<OpKindTable> tables = gather_op_tables(evaluation_ops, transport_);
    if (transport_.rank() == 0) report_.evaluation_op_kinds = op_kinds_json(tables, 1);
  }

  RankReport this_rank_report() {
    RankReport mine;
    mine.rank = transport_.rank();
    mine.evaluation_sent = evaluator_.bytes_sent();
    mine.evaluation_received = evaluator_.bytes_received();
    mine.sent = transport_.bytes_sent() - sent_before_ - mine.evaluation_sent;
    mine.received = transport_.bytes_received() - received_before_ - mine.evaluation_received;
    mine.planned_sent = planned_sent_;
    mine.planned_received = planned_received_;
    mine.peak_memory_bytes = peak_resident_bytes();
    mine.stash_peak_bytes = engine_.executor().stash_peak_bytes();
    mine.structure_bytes = engine_.store().structure_bytes();
    mine.feature_bytes = engine_.store().feature_bytes();
    mine.device_feature_bytes = engine_.executor().device_feature_bytes();
    mine.partition = partition_shape(engine_.store().structure(), engine_.store().owned_nodes(),
                                     context_.partition, transport_.rank());
    mine.busy_seconds = busy_seconds_ / (config_.training.epochs - first_measured_ + 1);
    return mine;
  }

  // Collective: every rank's traffic, memory and data, to rank 0 (control plane).
  void gather_rank_reports() {
    const auto gathered = transport_.gather_to_root(encode_rank_report(this_rank_report()));
    for (std::size_t r = 0; r < gathered.size(); ++r) {
      RankReport entry = decode_rank_report(gathered[r], static_cast<int>(r));
      report_.bytes_match = report_.bytes_match && entry.sent == entry.planned_sent &&
                            entry.received == entry.planned_received;
      report_.ranks.push_back(std::move(entry));
    }
  }

  void gather_traces_and_op_kinds() {
    if (options_.record_trace) {
      report_.trace = nlohmann::json::array();
      for (const std::string& text : transport_.gather_to_root(trace_.dump())) {
        for (auto& event : nlohmann::json::parse(text)) report_.trace.push_back(std::move(event));
      }
    }
    const std::vector<OpKindTable> op_tables = gather_op_tables(measured_ops_, transport_);
    if (transport_.rank() == 0) {
      report_.measured_epochs = config_.training.epochs - first_measured_ + 1;
      report_.op_kinds = op_kinds_json(op_tables, report_.measured_epochs);
    }
  }

  const ExperimentConfig& config_;
  const StrategyContext& context_;
  Transport& transport_;
  const DistributedOptions& options_;
  RankEngine engine_;
  DistributedEvaluator evaluator_;
  const TrafficBytes sent_before_;
  const TrafficBytes received_before_;
  // Per-op measurements and recorded plans come from the epochs after the warm-up ones.
  const int first_measured_;
  DistributedReport report_;
  TrafficBytes planned_sent_;
  TrafficBytes planned_received_;
  nlohmann::json trace_ = nlohmann::json::array();
  OpKindTable measured_ops_;
  double busy_seconds_ = 0;
};

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
      cut_shard(dataset, context.partition, rank, rank_placement(*context.strategy, context, rank)),
      transport, options);
}

DistributedReport train_distributed(const ExperimentConfig& config, const StrategyContext& context,
                                    RankShard shard, Transport& transport,
                                    const DistributedOptions& options) {
  if (context.num_ranks != transport.size()) {
    throw Error("the strategy context is for " + std::to_string(context.num_ranks) +
                " ranks, the transport has " + std::to_string(transport.size()));
  }
  return DistributedTraining(config, context, std::move(shard), transport, options).run();
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
  if (evaluation_seconds >= 0) result["evaluation_seconds"] = evaluation_seconds;
  if (!evaluation_op_kinds.is_null()) {
    result["evaluation_ops_by_kind"] = {{"measured_epochs", 1}, {"kinds", evaluation_op_kinds}};
  }
  return result;
}

}  // namespace gnnbed
