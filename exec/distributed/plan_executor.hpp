#pragma once
// Runs plans for real on one rank: a ComputeBackend's kernels (CPU or CUDA) for compute ops, the
// Transport for communication ops, the LocalStore for features and labels. Model parameters (full
// tensors, or this rank's rows of split ones) and the optimizer's state persist across plans. Every
// op is timed.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "exec/distributed/local_store.hpp"
#include "exec/kernels/compute_backend.hpp"
#include "exec/nn/layers.hpp"
#include "exec/train/optimizer.hpp"
#include "exec/transport.hpp"
#include "strategies/plan.hpp"
#include "strategies/strategy.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {

// When an op ran, relative to the run's clock, and how long it waited for peers.
struct OpRecord {
  int op = 0;
  double start_seconds = 0;
  double seconds = 0;
  double waiting_seconds = 0;
};

struct PlanOutcome {
  double loss = 0;           // this rank's share of the iteration's mean loss
  std::int64_t correct = 0;  // this rank's seeds predicted right
  std::vector<OpRecord> records;
};

class PlanExecutor {
 public:
  // Initial weights: the single-process model's (Glorot, from model_seed(training)), sliced to the
  // rows this rank holds. Compute ops run on `backend` (which must outlive the executor).
  PlanExecutor(const StrategyContext& context, std::vector<ParameterSpec> parameters,
               const LocalStore& store, Transport& transport,
               ComputeBackend& backend = cpu_backend());

  // Runs the plan's ops after its prologue, in order, timing each against `clock`. Parameter
  // gradients are zeroed first; the optimizer step is whatever the plan contains.
  PlanOutcome run(const Plan& plan, const Stopwatch& clock);

  Parameter& parameter(const std::string& name);
  const std::vector<ParameterSpec>& parameter_specs() const { return specs_; }

  // Collective: every parameter as a full tensor (values, or gradients), reassembled from the
  // ranks' rows. For evaluation and for checking against a single-process model.
  std::vector<Parameter> gather_full_parameters(bool gradients);

 private:
  struct TensorValue {
    Matrix dense;
    const std::vector<std::int32_t>* index = nullptr;
    const Block* block = nullptr;
  };

  void run_op(const Plan& plan, const Op& op, TransferTiming& timing);
  // scatter_rows (rows placed) and scatter_add_rows (rows added) into a zeroed output.
  void scatter(const Plan& plan, const Op& op, bool add);
  void all_to_all(const Plan& plan, const Op& op, TransferTiming& timing);
  void all_reduce(const Op& op, TransferTiming& timing);
  std::span<const NodeId> node_ids(int tensor) const;  // an index tensor, or a block's sources
  GnnLayer& layer(const Op& op, bool create);
  // The weight rows [column_begin, column_end) a partial layer op uses (P3's first layer): the
  // held parameter when it holds just those rows, else a copy of them, whose gradient
  // add_weight_row_gradients adds to the held parameter's after the op's backward (with caching,
  // a rank holds the whole weight and computes several column ranges).
  Parameter& partial_weight(const Op& op, const std::string& name);
  void add_weight_row_gradients(const Op& op);

  const StrategyContext& context_;
  std::vector<ParameterSpec> specs_;
  const LocalStore& store_;
  Transport& transport_;
  ComputeBackend& backend_;
  std::map<std::string, Parameter> parameters_;
  std::vector<Parameter*> ordered_parameters_;  // in specs_ order, for the optimizer
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<TensorValue> tensors_;
  std::vector<std::vector<std::byte>> receive_buffers_;              // reused by every all-to-all
  std::map<std::pair<int, int>, std::unique_ptr<GnnLayer>> layers_;  // (layer, instance)
  std::map<std::tuple<int, int, std::string>, Parameter> weight_rows_;  // (layer, instance, name)
  PlanOutcome outcome_;
};

}  // namespace gnnbed
