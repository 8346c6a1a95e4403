#include "exec/distributed/op_timing.hpp"

#include <algorithm>

namespace gnnbed {
namespace {

nlohmann::json mean_and_max(std::span<const double> values, int epochs) {
  double sum = 0;
  double max = 0;
  for (const double v : values) {
    sum += v;
    max = std::max(max, v);
  }
  const double per_epoch = 1.0 / std::max(1, epochs);
  return {{"mean", sum * per_epoch / static_cast<double>(std::max<std::size_t>(1, values.size()))},
          {"max", max * per_epoch}};
}

}  // namespace

std::vector<PrologueTiming> prologue_timings(const IterationRun& run) {
  std::vector<PrologueTiming> timings = {{0, run.sample_seconds, run.sample_waiting}};
  if (run.plan.prologue_ops > 1) {
    timings.push_back({1, run.announce_seconds, run.announce_waiting});
  }
  if (run.relayed) timings.push_back({2, run.relay_seconds, run.relay_waiting});
  // The rest of the prologue (P3's derived graphs) ran within planning.
  while (timings.size() < static_cast<std::size_t>(run.plan.prologue_ops)) {
    timings.push_back({timings.size(), 0.0, 0.0});
  }
  timings[run.plan.planning_op()].seconds += run.planning_seconds;
  return timings;
}

void OpKindTable::add(const Op& op, double seconds, double waiting_seconds) {
  OpKindTotals& totals = kinds_[static_cast<std::size_t>(op.kind)];
  totals.count += 1;
  totals.seconds += seconds;
  totals.waiting_seconds += waiting_seconds;
  totals.work += work_of(op);
  totals.bytes_sent += static_cast<double>(op.total_bytes_to());
}

void OpKindTable::add_iteration(const IterationRun& run) {
  for (const PrologueTiming& timing : prologue_timings(run)) {
    add(run.plan.ops[timing.op], timing.seconds, timing.waiting_seconds);
  }
  for (const OpRecord& record : run.outcome.records) {
    add(run.plan.ops[static_cast<std::size_t>(record.op)], record.seconds, record.waiting_seconds);
  }
}

nlohmann::json OpKindTable::to_json() const {
  nlohmann::json array = nlohmann::json::array();
  for (const OpKindTotals& t : kinds_) {
    array.push_back({t.count, t.seconds, t.waiting_seconds, t.work.dense_flops, t.work.sparse_flops,
                     t.work.memory_bytes, t.work.sampled_edges, t.bytes_sent, t.work.planned_nodes,
                     t.work.sparse_entries});
  }
  return array;
}

OpKindTable OpKindTable::from_json(const nlohmann::json& array) {
  OpKindTable table;
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const nlohmann::json& v = array.at(k);
    OpKindTotals& t = table.kinds_[k];
    t.count = v.at(0).get<std::int64_t>();
    t.seconds = v.at(1).get<double>();
    t.waiting_seconds = v.at(2).get<double>();
    t.work = {v.at(3).get<double>(), v.at(4).get<double>(), v.at(5).get<double>(),
              v.at(6).get<double>(), v.at(8).get<double>(), v.at(9).get<double>()};
    t.bytes_sent = v.at(7).get<double>();
  }
  return table;
}

nlohmann::json op_kinds_json(std::span<const OpKindTable> ranks, int epochs) {
  nlohmann::json kinds = nlohmann::json::object();
  const double per_rank_epoch =
      1.0 / (static_cast<double>(std::max<std::size_t>(1, ranks.size())) * std::max(1, epochs));
  for (std::size_t k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    std::vector<double> seconds;
    std::vector<double> waiting;
    double count = 0;
    OpWork work;
    double bytes_sent = 0;
    for (const OpKindTable& table : ranks) {
      const OpKindTotals& t = table.totals(kind);
      seconds.push_back(t.seconds);
      waiting.push_back(t.waiting_seconds);
      count += static_cast<double>(t.count);
      work += t.work;
      bytes_sent += t.bytes_sent;
    }
    if (count == 0) continue;
    kinds[std::string(to_string(kind))] = {
        {"count_per_epoch", count * per_rank_epoch},
        {"seconds_per_epoch", mean_and_max(seconds, epochs)},
        {"waiting_seconds_per_epoch", mean_and_max(waiting, epochs)},
        {"work_per_epoch",
         {{"dense_flops", work.dense_flops * per_rank_epoch},
          {"sparse_flops", work.sparse_flops * per_rank_epoch},
          {"memory_bytes", work.memory_bytes * per_rank_epoch},
          {"sampled_edges", work.sampled_edges * per_rank_epoch},
          {"planned_nodes", work.planned_nodes * per_rank_epoch},
          {"sparse_entries", work.sparse_entries * per_rank_epoch},
          {"bytes_sent", bytes_sent * per_rank_epoch}}}};
  }
  return kinds;
}

Plan plan_with_measured_seconds(const IterationRun& run) {
  Plan plan = run.plan;
  for (const PrologueTiming& timing : prologue_timings(run)) {
    plan.ops[timing.op].measured_seconds = timing.seconds;
  }
  for (const OpRecord& record : run.outcome.records) {
    plan.ops[static_cast<std::size_t>(record.op)].measured_seconds = record.seconds;
  }
  return plan;
}

}  // namespace gnnbed
