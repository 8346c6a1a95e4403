#pragma once
// Runs plans for real on one rank: a ComputeBackend's kernels (CPU or CUDA) for compute ops, the
// Transport for communication ops, the LocalStore for features and labels. Model parameters (full
// tensors, or this rank's rows of split ones) and the optimizer's state persist across plans. Every
// op is timed.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "exec/distributed/local_store.hpp"
#include "exec/kernels/compute_backend.hpp"
#include "exec/nn/layers.hpp"
#include "exec/train/optimizer.hpp"
#include "exec/transport.hpp"
#include "strategies/plan/plan.hpp"
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

// Runs plans for real, every plan by one rule: mini-batches are admitted in iteration order and
// run in rounds of the static schedule (plan.hpp): round k runs stage 0 of the mini-batch
// admitted last, stage 1 of the one before, ..., each stage's ops in plan order. A plan without
// pipelining (depth 0) has one stage, so it runs alone and completes in its round. Communication
// ops start when reached (nonblocking MPI on this thread: ranks compute on one thread each, and a
// communication thread would spin on a core the ranks share), are tested between ops so that
// transfers proceed while this rank computes, and are waited for where an op depends on one, at
// the start of the mini-batch's next stage, or at the end of its last: in the same order on
// every rank. A plan's persistent tensors keep their contents from one plan to the next. A
// mini-batch of a deeper pipeline reads its own copy of the weight version its
// plan names (weight stashing) and accumulates its own gradients; its optimizer step applies
// them to the current weights.
class PlanExecutor {
 public:
  // Initial weights: the single-process model's (Glorot, from model_seed(training)), sliced to the
  // rows this rank holds. Compute ops run on `backend` (which must outlive the executor).
  PlanExecutor(const StrategyContext& context, std::vector<ParameterSpec> parameters,
               const LocalStore& store, Transport& transport,
               ComputeBackend& backend = cpu_backend());

  // admit() takes the next mini-batch (the plan must outlive its run) and checks that its weight
  // version is held; run_round() runs one round for every mini-batch in flight, newest first, and
  // returns the outcomes of those that finished their last stage. Call run_round() without
  // admitting to drain the pipeline.
  void admit(const Plan& plan);
  std::vector<PlanOutcome> run_round(const Stopwatch& clock);
  int in_flight() const { return static_cast<int>(pipeline_.size()); }
  // One plan alone, to completion: admit() and as many rounds as it has stages.
  PlanOutcome run(const Plan& plan, const Stopwatch& clock);
  // The most bytes of weight versions (stashed for later mini-batches and each in-flight
  // mini-batch's copy, with its gradients) held at once beyond the current weights.
  std::int64_t stash_peak_bytes() const { return stash_peak_bytes_; }

  // Bytes of feature rows kept on the device for gather_features (0: gathers run on the host).
  std::int64_t device_feature_bytes() const {
    return device_features_ ? device_features_->table.bytes() : 0;
  }

  Parameter& parameter(const std::string& name);
  const std::vector<ParameterSpec>& parameter_specs() const { return specs_; }
  // A dense tensor of the plan that finished last (its results: evaluation's logits), until the
  // next plan is admitted.
  const Matrix& dense(int tensor) const;
  // A persistent tensor's values as the plans that held it left them (row-major, brought to the
  // host); empty where no plan has held it yet. Valid until the next plan is admitted.
  std::span<const float> persistent_values(const std::string& name) const;

  // Collective: every parameter as a full tensor (values, or gradients), reassembled from the
  // ranks' rows. For evaluation and for checking against a single-process model.
  std::vector<Parameter> gather_full_parameters(bool gradients);

 private:
  struct TensorValue {
    Matrix dense;
    const std::vector<std::int32_t>* index = nullptr;
    const Block* block = nullptr;
    // Sparse rows (TensorKind::sparse) on the host: the layers multiply them as they are on either
    // backend, so a copy to the device leaves them here. `wire`: their bytes as last sent.
    SparseMatrix sparse;
    std::vector<std::byte> wire;
  };
  using LayerMap = std::map<std::pair<int, int>, std::unique_ptr<GnnLayer>>;
  using WeightRowMap = std::map<std::tuple<int, int, std::string>, Parameter>;
  struct Pending {
    int op = 0;
    std::size_t record = 0;  // in the mini-batch's outcome
    std::unique_ptr<PendingTransfer> transfer;
  };
  // A mini-batch in the pipeline: its plan's state while other mini-batches run.
  struct InFlight {
    const Plan* plan = nullptr;
    int next_stage = 0;
    std::vector<TensorValue> tensors;
    std::vector<std::vector<int>> released_after;
    LayerMap layers;
    WeightRowMap weight_rows;
    std::map<std::string, Parameter> weights;  // its weight version, with its gradients
    PlanOutcome outcome;
    std::vector<Pending> pending;
    std::vector<char> done;   // per op
    bool stashed = false;     // reads `weights`, a stashed version, rather than the held ones
    bool swapped_in = false;  // its state is in the executor's members (swap_state)
  };

  // The rank's feature rows for its own columns, kept on the device when the backend holds them
  // (ComputeBackend::holds_feature_table): mini-batch inputs are then gathered there.
  struct DeviceFeatures {
    Matrix table;                           // held nodes x own columns, device copy only
    std::vector<std::int32_t> row_of_node;  // the node's table row, -1 when not held
    std::int64_t column_begin = 0;
    std::int64_t column_end = 0;
    std::vector<std::int32_t> rows;  // one gather's table rows, reused
  };
  void keep_features_on_device();
  // gather_features from the device table; false when it does not hold every row and column
  // asked for (the host's store gathers them, or names what is missing).
  bool gather_on_device(std::span<const NodeId> nodes, const Op& op, Matrix& out);

  // A compute op (communication ops are started and finished by run_stage).
  void run_op(const Plan& plan, const Op& op);
  Matrix& input(const Op& op, Input name);      // the dense tensor of the op's named input
  Matrix& part(const Op& op, std::size_t i);    // ... of the i-th of a list of inputs
  Matrix& output(const Op& op, std::size_t i);  // ... and of its i-th output
  void gather_features(const Plan& plan, const Op& op);
  bool is_sparse(const Plan& plan, int tensor) const;
  SparseMatrix& sparse(int tensor) { return tensors_[static_cast<std::size_t>(tensor)].sparse; }
  // scatter_rows of sparse rows (plan.hpp: all parts sparse, every output row written once).
  void place_sparse(const Plan& plan, const Op& op);
  // gather_rows of whole sparse rows into sparse rows (a peer's kept block read at the halo).
  void gather_sparse_rows(const Plan& plan, const Op& op);
  void layer_forward(const Plan& plan, const Op& op);
  void layer_backward(const Op& op);
  void add_partials(const Op& op);
  void transform(const Op& op);
  void aggregate_transformed(const Op& op);
  void concat_columns(const Op& op);
  void loss(const Op& op);
  void optimizer_step(const Plan& plan, const Op& op);
  // The parameters ops read and write: the held ones, or an in-flight mini-batch's copy.
  Parameter& active(const std::string& name);
  void bind_tensors(const Plan& plan);
  // The plan's persistent tensors (TensorSpec::persistent) into the bound tensors (zero the first
  // time), and back into persistent_ when the plan retires.
  void take_persistent(const Plan& plan);
  void keep_persistent(const Plan& plan, std::vector<TensorValue>& tensors);
  // Drops the storage of the plan's transient tensors (TensorSpec::transient) whose last use was
  // op `op`.
  void release_after(int op);
  // Swaps the mini-batch's state into the members run_op works on, and back.
  void swap_state(InFlight& batch);
  // The weight version `plan` reads, copied into `batch` (Error naming `where` if not held).
  void stash_weights(const Plan& plan, InFlight& batch, const std::string& where);
  void run_stage(InFlight& batch, const Stopwatch& clock);
  void start_transfer(const Plan& plan, const Op& op, int index, InFlight& batch);
  void finish_transfers(InFlight& batch, const Stopwatch& clock);
  void test_transfers();
  void check_iteration_deps(const InFlight& batch, const Op& op, int index) const;
  // The optimizer step of a stashed mini-batch: its gradients, applied to the held weights.
  void stashed_step(const Plan& plan);
  std::vector<std::span<const std::byte>> send_views(const Plan& plan, const Op& op);
  void store_received(const Plan& plan, const Op& op,
                      const std::vector<std::vector<std::byte>>& received);
  void count_stash();
  // scatter_rows (rows placed) and scatter_add_rows (rows added) into a zeroed output.
  void scatter(const Plan& plan, const Op& op, bool add);
  std::span<const NodeId> node_ids(int tensor) const;  // an index tensor, or a block's sources
  GnnLayer& layer(const Op& op, bool create);
  // The layer of a partial op with a sync_step (Op::sync_step); Error unless it is a SyncedLayer.
  SyncedLayer& synced_layer(const Op& op, bool create);
  // The weight rows [column_begin, column_end) a partial layer op uses (P3's first layer; the
  // weights it names in Op::parameters, whose rows index the input columns): the
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
  std::map<std::string, Parameter>* active_parameters_ = &parameters_;
  std::vector<Parameter*> ordered_parameters_;  // in specs_ order, for the optimizer
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<TensorValue> tensors_;
  std::vector<std::vector<int>> released_after_;  // per op of the plan bound last
  std::vector<char> written_rows_;                // scatter's, reused
  LayerMap layers_;                               // (layer, instance)
  WeightRowMap weight_rows_;                      // (layer, instance, name)
  PlanOutcome outcome_;
  // Mini-batches in flight (oldest first), weight versions kept for mini-batches
  // not yet admitted (by the number of steps they include), steps applied so far.
  std::deque<InFlight> pipeline_;
  std::map<std::int64_t, std::vector<Matrix>> versions_;
  std::int64_t steps_done_ = 0;
  std::int64_t stash_peak_bytes_ = 0;
  std::vector<std::vector<TensorValue>> spare_tensors_;  // storage of retired mini-batches
  struct PersistentValue {
    Matrix dense;
    SparseMatrix sparse;
  };
  std::map<std::string, PersistentValue> persistent_;  // by name, between the plans using them
  std::optional<DeviceFeatures> device_features_;
};

}  // namespace gnnbed
