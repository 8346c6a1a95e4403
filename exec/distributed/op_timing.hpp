#pragma once
// Per-op measurements of distributed training: what every op kind took and did on a rank over the
// measured epochs (the ones after the warm-up), reported per epoch as the mean and the maximum
// over ranks with the work done, so that achieved rates can be read off; and plans carrying each
// op's measured duration, for the simulator to replay.
#include <array>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "exec/distributed/rank_engine.hpp"
#include "sim/cost_model/cost_model.hpp"
#include "strategies/plan/plan.hpp"

namespace gnnbed {

// The prologue ops as the engine ran them, one per op in plan order: the sample op first, the
// announcement (its exchange) second, its relay within machines third where it has one. The
// planning that follows them (deciding what to announce, building the plan from the sample) is the
// batch's production too: it is charged to the plan's planning op (Plan::planning_op), so that
// calibration fits it and a replay of measured plans charges it.
struct PrologueTiming {
  std::size_t op;
  double seconds;
  double waiting_seconds;
};
std::vector<PrologueTiming> prologue_timings(const IterationRun& run);

struct OpKindTotals {
  std::int64_t count = 0;
  double seconds = 0;          // wall time, waiting included
  double waiting_seconds = 0;  // communication ops: waiting for late peers
  OpWork work;
  double bytes_sent = 0;  // communication ops and sampling over partitioned structure
};

// One rank's totals per op kind.
class OpKindTable {
 public:
  // The iteration's ops as they ran: its prologue (sampling, the announcement) and every op the
  // executor ran.
  void add_iteration(const IterationRun& run);
  void add(const Op& op, double seconds, double waiting_seconds);

  const OpKindTotals& totals(OpKind kind) const { return kinds_[static_cast<std::size_t>(kind)]; }

  // For gathering to rank 0: one array of numbers per op kind, in OpKind order.
  nlohmann::json to_json() const;
  static OpKindTable from_json(const nlohmann::json& array);

 private:
  std::array<OpKindTotals, kNumOpKinds> kinds_{};
};

// Every rank's table over `epochs` measured epochs, per op kind that ran: {"count_per_epoch",
// "seconds_per_epoch": {"mean", "max"}, "waiting_seconds_per_epoch": {"mean", "max"},
// "work_per_epoch": {"dense_flops", "sparse_flops", "memory_bytes", "sampled_edges",
// "planned_nodes", "sparse_entries", "bytes_sent"}}, means and maxima over ranks (work: mean).
nlohmann::json op_kinds_json(std::span<const OpKindTable> ranks, int epochs);

// The iteration's plan with every op that ran given its `measured_seconds` (wall time, waiting
// for peers included).
Plan plan_with_measured_seconds(const IterationRun& run);

}  // namespace gnnbed
