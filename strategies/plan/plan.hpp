#pragma once
// A Plan is one rank's work for one training iteration: a graph of typed ops with explicit
// dependencies, each on a stream, each with its sizes (bytes per peer, FLOPs, shapes) and the index
// data real execution needs. Strategies build plans; exec/ runs them for real; sim/ replays them.
//
// Tensors are declared by the plan and referenced by id. Index tensors (node ids, row positions)
// and blocks (sampled computation graphs) usually carry their contents in the plan: they are the
// plan's index data. Dense tensors are produced by ops. Model parameters are named state that
// persists across iterations; ops refer to them by name.
//
// The first `prologue_ops` ops (sampling and the strategy's announcement exchange) have already
// run when the plan is built, because the plan depends on their results; engines that execute
// for real record them rather than run them, the simulator replays them like any other op.
#include <algorithm>
#include <compare>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strategies/plan/traffic.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

enum class OpKind : std::uint8_t {
  sample,            // build this rank's mini-batch blocks (prologue)
  all_to_all,        // pairwise exchange: inputs[q] is the payload for rank q, outputs[q] q's
  all_reduce,        // ring all-reduce (sum) of the gradients of `parameters`
  gather_features,   // rows of the local feature store (columns [column_begin, column_end))
  scatter_rows,      // output rows: inputs[2i + 1] (dense) placed at positions inputs[2i] (index);
                     // the parts write every row
  dropout,           // in place on inputs[0] (node ids: inputs[1]), mask keyed on `key`
  layer_forward,     // outputs[0] = layer(block inputs[0], dense inputs[1]) before activation
                     // (sync_step 2: inputs[1] is the first step's output summed over ranks)
  relu,              // in place on inputs[0]
  add_partials,      // outputs[0] = sum of dense inputs, plus the bias `parameters[0]` if any
  loss,              // softmax cross-entropy of logits inputs[0] against the labels of the
                     // nodes inputs[1], times `scale`; outputs[0] = d(loss)/d(logits)
  relu_backward,     // gradient inputs[0] (in place) masked by the ReLU output inputs[1]
  layer_backward,    // outputs[0] = d/d(input) from gradient inputs[0], when `input_grad`
                     // (sync_step 1: outputs[0] = the gradient to sum over ranks; 2: inputs[0]
                     // is that sum)
  dropout_backward,  // in place on the gradient inputs[0] (node ids: inputs[1])
  bias_backward,     // the bias `parameters[0]` gets the column sums of inputs[0]
  optimizer_step,    // update `parameters` from their gradients
  copy_to_device,    // inputs[0] (= outputs[0]) moves from host to device memory (PCIe); a no-op
                     // where the device is the host's CPU
  gather_rows,       // outputs[0] = the rows of inputs[1] at positions inputs[0] (index),
                     // columns [column_begin, column_end) of them (every column when both are 0);
                     // sparse rows are gathered whole into sparse rows
  scatter_add_rows,  // outputs[0] (its declared rows, zero elsewhere) = the sum of the rows
                     // inputs[2i + 1] (dense) added at positions inputs[2i] (index); device side,
                     // positions may repeat (halo gradients coming back from several ranks)
  transform,         // outputs[0] = dense inputs[0] times layer `layer`'s weights `parameters`
                     // side by side (partial: their rows [column_begin, column_end)), no bias
  aggregate_transformed,  // outputs[0] = the aggregation of layer `layer` over block inputs[0] of
                          // transformed source rows inputs[1], plus (GraphSAGE) the destinations'
                          // transformed self rows inputs[2], plus the bias `parameters` if any
  concat_columns,         // outputs[0] = the dense inputs side by side, in order
  // Point to point with one rank, `peer`, possibly the rank itself (PyTorch-BigGraph's lock,
  // partition and parameter servers, which run beside a trainer as processes of their own): a
  // send's payload is its input tensors' bytes in order, a receive's is written into its output
  // tensors; one without tensors carries its `key` (8 bytes), which the receiver checks against its
  // own (a lock request or grant names its bucket). Messages between two ranks match in the order
  // each side's plans start them.
  send,
  receive,
  // One pass of PBG's training over a bucket: the edges inputs[0] (index: (lhs offset, relation,
  // rhs offset) triples), the partitions' tables inputs[1] and inputs[2] (one tensor for a bucket
  // on the diagonal; rows x (dimension + 1): each row's embedding and its row-wise Adagrad
  // state) and, with translation scoring, the relation parameters inputs[3] (relations x
  // dimension), updated in place; `key` seeds the edge order and negatives.
  train_bucket,
};
inline constexpr std::size_t kNumOpKinds = 24;

// Where an op runs. Engines may overlap ops on different streams; the plan's dependencies say
// what must finish first.
// `server`: work a rank does for its peers beside its own (PBG's lock and partition servers),
// which runs whenever its dependencies are done, whatever the rank's other streams are doing.
enum class Stream : std::uint8_t { sampler, copy, compute, network, server };

// The parts of an epoch's time that results break down into.
enum class TimeCategory : std::uint8_t { sampling, copy, compute, communication };
inline constexpr std::size_t kNumTimeCategories = 4;

// sparse: rows of a sparse matrix (the input features of a workload that stores them sparse, as
// bag-of-words features are), CSR with float32 values and int32 columns.
enum class TensorKind : std::uint8_t { dense, index, block, sparse };

std::string_view to_string(OpKind kind);
std::string_view to_string(Stream stream);
std::string_view to_string(TimeCategory category);
std::string_view to_string(TensorKind kind);
TimeCategory category_of(OpKind kind);
// all_to_all, all_reduce, send and receive: the ops that move data between ranks after the
// prologue.
bool is_communication(OpKind kind);
struct Op;
// Ops that read or write the model's parameters (values or gradients).
bool touches_parameters(const Op& op);

// The names of the inputs of ops with a fixed signature. The plan stores an op's inputs as one
// list (its file format, and what dependencies are computed from); a kind's signature says which
// position holds which name, and Plan::validate checks the kind of tensor behind each name. Kinds
// with a variable number of inputs are read as lists: all_to_all (one per peer, -1 for none),
// scatter_rows and scatter_add_rows ((positions, rows) pairs), add_partials and concat_columns
// (dense parts), sample (its seeds, then what it derives peers' graphs from); all_reduce and
// optimizer_step read parameters only.
//   gather_features {ids}                 dropout, dropout_backward {tensor, ids}
//   layer_forward {block, tensor}         layer_backward {gradient, block, tensor}
//   relu, copy_to_device {tensor}         relu_backward {gradient, relu_output}
//   loss {logits, seeds}                  bias_backward {gradient}
//   gather_rows {positions, source}       transform {tensor}
//   aggregate_transformed {block, products, self_products (GraphSAGE only)}
//   train_bucket {edges, lhs, rhs, relations (translation scoring only)}
//   send {tensors sent}, receive (outputs: tensors received)
enum class Input : std::uint8_t {
  tensor,         // the dense tensor the op works on (in place for dropout, relu, copies)
  block,          // the block a layer computes on
  ids,            // node ids: an index tensor, or a block (its sources)
  positions,      // row positions (index)
  source,         // the dense table rows are gathered from
  logits,         // dense
  seeds,          // the nodes whose labels a loss reads (index or block)
  gradient,       // dense
  relu_output,    // the ReLU's output, whose sign masks its gradient (dense)
  products,       // transformed source rows (dense)
  self_products,  // transformed destination rows (dense)
  edges,          // a bucket's edges: (lhs offset, rhs offset) pairs (index)
  lhs,            // the table of a bucket's source partition (dense)
  rhs,            // ... of its target partition (dense)
  relations,      // relation parameters shared through a parameter server (dense)
};
std::string_view to_string(Input name);

// The payload of a send or receive without tensors: its key.
inline constexpr std::int64_t kControlMessageBytes = 8;

struct TensorSpec {
  std::string name;
  TensorKind kind = TensorKind::dense;
  // dense: rows x cols float32; index: rows int32 values (cols 1); block: rows destinations,
  // cols sources; sparse: rows x cols with `entries` stored values.
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  // Contents carried by the plan (null when an op produces the tensor).
  std::shared_ptr<const std::vector<std::int32_t>> index;
  std::shared_ptr<const Block> block;
  // The engine may drop the tensor's storage after its last reader. Plans that run once and hold
  // far more tensors than are alive at a time (evaluation's, a chunk of the graph after another)
  // set it; training plans leave it unset, so that the next iteration's tensors reuse the storage.
  bool transient = false;
  // State that outlives the plan (dense only): the engine keeps the tensor's contents under its
  // name from one plan of the rank to the next, zero before any plan writes it, so a plan may read
  // it before writing it (SANCUS's copies of its peers' embeddings, reused between broadcasts).
  // Names are unique among a plan's persistent tensors; plans that hold one are not pipelined.
  bool persistent = false;
  std::int64_t entries = 0;  // sparse: the stored values

  // Bytes held and sent: a sparse tensor's are its rows' lengths (int32), then every entry's
  // column (int32) and value (float32), the layout it travels in (kSparseRowBytes,
  // kSparseEntryBytes).
  std::int64_t bytes() const;
};
inline constexpr std::int64_t kSparseRowBytes = 4;
inline constexpr std::int64_t kSparseEntryBytes = 8;

// A model parameter as one rank holds it: the full tensor (data parallel, all-reduced) or rows
// [row_begin, row_end) of it (model parallel: P3's first layer, split by feature columns).
struct ParameterSpec {
  std::string name;  // "layer0.W_self"
  int layer = 0;
  bool is_weight = false;
  std::int64_t rows = 0;  // of the full parameter
  std::int64_t cols = 0;
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;

  std::int64_t local_rows() const { return row_end - row_begin; }
  std::int64_t local_elements() const { return local_rows() * cols; }
};

// Per-hop traffic of sampling over partitioned structure (empty with replicated structure):
// node-id requests to the owners of remote frontier nodes, and the sampled neighbour lists that
// come back; this rank also answers its peers' requests.
struct SamplingHop {
  std::vector<std::int64_t> request_bytes_to;    // per peer
  std::vector<std::int64_t> request_bytes_from;  // per peer
  std::vector<std::int64_t> reply_bytes_to;      // per peer (this rank's answers)
  std::vector<std::int64_t> reply_bytes_from;    // per peer
  std::int64_t edges_sampled_locally = 0;        // for this rank's own frontier
  std::int64_t edges_sampled_for_peers = 0;
};

// A dependency on an op of an earlier iteration's plan of the same rank (pipelined plans): op
// `op` of the plan `back` iterations earlier in the same epoch.
struct IterationDep {
  int back = 1;
  int op = 0;
  bool operator==(const IterationDep&) const = default;
};

struct Op {
  OpKind kind = OpKind::sample;
  Stream stream = Stream::compute;
  std::string label;
  std::vector<int> deps;  // ops that must finish first (all earlier in the plan)
  // Pipelined plans (Plan::pipeline_depth > 0): ops of earlier iterations that must finish first,
  // and the pipeline stage the op belongs to (0 ... pipeline_depth; see Plan).
  std::vector<IterationDep> iteration_deps;
  int stage = 0;
  std::vector<int> inputs;   // tensor ids (-1 where a per-peer slot is empty)
  std::vector<int> outputs;  // tensor ids (-1 where a per-peer slot is empty)

  // Communication ops.
  Traffic traffic = Traffic::structure;
  std::vector<std::int64_t> bytes_to;      // per peer, payload bytes this rank sends
  std::vector<std::int64_t> bytes_from;    // per peer, payload bytes this rank receives
  std::vector<SamplingHop> sampling_hops;  // `sample` over partitioned structure
  int peer = -1;                           // send, receive: the other rank
  // send: the tensor's change since this rank last received it, not its values; receive: added to
  // the tensor, not replacing it (a parameter server's exchange: trainers push changes and pull
  // values).
  bool changes = false;
  // send: starts no sooner than this after the rank's previous send with a throttle started (PBG's
  // parameter client: at most 100 updates/s and 1 GB/s).
  double throttle_seconds = 0;
  // all_reduce: machines of this many consecutive ranks reduce within, then across, then gather
  // within (collective_schedule.hpp's hierarchical all-reduce); 0: one ring over every rank. A
  // prologue all_to_all: it runs among the ranks of each machine of this many only (its bytes stay
  // there); 0: over every rank.
  int ranks_per_machine = 0;

  // Work, for the cost model.
  double flops = 0;                 // multiply-adds count 2
  double sparse_flops = 0;          // the part of `flops` spent aggregating over edges
  std::int64_t sparse_entries = 0;  // aggregation-matrix entries gone through (ModelSpec)
  std::int64_t memory_bytes = 0;    // bytes read and written by data-movement ops
  // Rows read or written where indices point (an aggregation's rows, a row gather's source rows),
  // and the table they lie in: the cost model charges the part of those rows a rank's cache
  // cannot hold at main memory's pace (sim/cost_model/cost_model.hpp).
  std::int64_t gathered_rows = 0;
  std::int64_t gathered_table_bytes = 0;
  std::int64_t sampled_edges = 0;  // `sample`
  // Planning (host work on the batch after sampling, charged to the op_timing planning op): the
  // nodes whose holder the strategy looked up to decide what to request and where rows come from
  // (dgl-pull: every input node). Strategies whose plans take ids as sampling gave them plan none.
  std::int64_t planned_nodes = 0;
  // How long the op took when a real run recorded the plan (-1 when not measured); the simulator
  // can replay these instead of the cost model's times.
  double measured_seconds = -1;

  // Attributes.
  int layer = -1;        // model layer of layer ops
  int instance = 0;      // which use of the layer (P3: whose mini-batch)
  bool partial = false;  // P3's model-parallel first layer (weight row slice, no bias)
  // A partial layer split around sums over ranks (exec's SyncedLayer: GAT's attention scores):
  // 0 the whole layer; 1 its first step, whose output is summed over the ranks' column slices;
  // 2 its second, from that sum (inputs[1] forward, inputs[0] backward).
  int sync_step = 0;
  bool input_grad = true;         // layer_backward
  std::int64_t column_begin = 0;  // gather_features, dropout: feature columns
  std::int64_t column_end = 0;
  std::uint64_t key = 0;  // dropout mask key
  double rate = 0;        // dropout rate
  double scale = 1;       // loss: multiplies loss and gradient
  // all_reduce, add_partials, bias_backward, optimizer_step; partial layer ops: the weights whose
  // rows [column_begin, column_end) they use (the layer's other weights they use whole)
  std::vector<std::string> parameters;

  // The input named `name` (Input): Error when the kind has no such input or the op lacks it.
  int input(Input name) const;
  bool has_input(Input name) const;
  // Sets the named input, growing the list as needed.
  void set_input(Input name, int tensor);

  std::int64_t total_bytes_to() const;
  std::int64_t total_bytes_from() const;
};

// Pipelining: a plan with pipeline_depth d > 0 is one mini-batch of a static pipeline schedule
// with d + 1 stages. In round k of an epoch every rank runs, in this order, the prologue of
// iteration k + 1 (sampling and announcing the next mini-batch, so that its plan is built and its
// announcement is on the network before this round's transfers queue behind it; DGL's and P3's
// samplers run ahead of training the same way), then stage 0 of iteration k, stage 1 of iteration
// k - 1, ..., stage d of iteration k - d, each stage's ops in plan order; communication ops start
// when reached and complete in the background, and ops that consume their results wait for them.
// So d earlier mini-batches are in flight while a new one starts. The pipeline fills and drains
// within an epoch.
//
// Which weights a mini-batch computes with follows from where its ops touch the model: between
// its first op that reads or writes parameters and its optimizer step lie s = weight_staleness()
// rounds, in which the steps of s earlier mini-batches apply. So the mini-batch of global step t
// computes its forward and backward passes with the weights after step t - s (stashed: w(t+1) =
// w(t) - a * grad f(w(t-s))), whatever the order in which ops actually ran. P3's pipeline (section
// 3.3) spreads its model over every stage: s = d. A pipeline that only moves inputs ahead (dgl-pull
// fetching the next mini-batch's features while this one computes) has the whole model in its
// last stage: s = 0, the weights are never stale.
struct Plan {
  std::string strategy;
  int rank = 0;
  int num_ranks = 1;
  int epoch = 0;
  int iteration = 0;
  int prologue_ops = 0;
  int pipeline_depth = 0;  // 0: not pipelined (one stage: the plan runs alone in its round)
  std::int64_t step = 0;   // global optimizer step of this mini-batch, counted from 0
  // The first stage with an op that reads or writes the model's parameters (values or
  // gradients), and the stage of the optimizer step (pipeline_depth where the plan has none).
  int first_model_stage() const;
  int step_stage() const;
  // The rounds between them: how many optimizer steps behind the weights this mini-batch reads are.
  int weight_staleness() const { return step_stage() - first_model_stage(); }
  // The optimizer steps whose result this mini-batch's weights include: step - weight_staleness(),
  // and 0 before the first steps.
  std::int64_t weight_version() const {
    return std::max<std::int64_t>(0, step - weight_staleness());
  }
  std::vector<TensorSpec> tensors;
  std::vector<ParameterSpec> parameters;
  std::vector<Op> ops;
  // What the strategy's planning of this rank's next iteration starts from
  // (RankIteration::carried_state): decisions that depend on the ones before (SANCUS's adaptive
  // bound counts the epochs a rank computed with stale copies). Planning state, not work: plan
  // files leave it out.
  std::vector<std::int32_t> carried_state;

  // Bytes this rank sends / receives, by traffic kind, over every communication op (sampling
  // requests and replies included).
  TrafficBytes bytes_sent() const;
  TrafficBytes bytes_received() const;
  double total_flops() const;
  // The first op with this label; throws Error when there is none.
  const Op& op_labelled(std::string_view label) const;
  // The prologue op that planning (host work on the batch after sampling: deciding what to
  // request, building this plan) is charged to: the sample op, or where the prologue samples again
  // after its exchanges (P3's first-layer graphs, derived while the plan is built), that one.
  std::size_t planning_op() const;

  // Checks ids, dependencies (acyclic: every dependency earlier), per-peer vector sizes and that
  // every tensor read is carried by the plan or written by an earlier op. Throws Error naming the
  // op.
  void validate() const;

  nlohmann::json to_json() const;
  static Plan from_json(const nlohmann::json& document, const std::string& origin);
};

// Where op `op` of a plan falls in its rank's static schedule (see Plan): ops run in increasing
// order of the key. Without pipelining that is iteration after iteration, each in plan order. In
// a pipelined epoch, round k first runs the prologue of iteration k + 1 (round 0 those of 0 and 1,
// in iteration order), then stage 0 of iteration k, stage 1 of k - 1, and so on. `iteration` is
// the mini-batch's place in the epoch as run (plan.iteration, unless a sample of the epoch is
// replayed).
struct ScheduleKey {
  std::int64_t round = 0;
  int phase = 0;  // 0: a prologue run ahead, 1: a stage
  int stage = 0;
  std::int64_t iteration = 0;
  int op = 0;
  auto operator<=>(const ScheduleKey&) const = default;
};
ScheduleKey schedule_key(const Plan& plan, int op, std::int64_t iteration);
inline ScheduleKey schedule_key(const Plan& plan, int op) {
  return schedule_key(plan, op, plan.iteration);
}

// Files: JSON, or MessagePack when the name ends in ".msgpack" (large plans). Writing is atomic.
void write_plans(const std::vector<Plan>& plans, const std::filesystem::path& path);
// The bytes write_plans writes (MessagePack for .msgpack, else JSON), for writing with other
// outputs as a group.
std::string encode_plans(const std::vector<Plan>& plans, const std::filesystem::path& path);
std::vector<Plan> read_plans(const std::filesystem::path& path);

// Builds a plan op by op, returning ids. Dependencies follow from the tensors: an op depends on
// the last writer of every tensor it reads or writes, and on every reader since, of the tensors it
// writes (in-place ops list their tensor as input and output). Deps an op already carries (for
// state outside tensors, such as parameter gradients) are kept.
class PlanBuilder {
 public:
  PlanBuilder(std::string strategy, int rank, int num_ranks, int epoch, int iteration);

  int add_tensor(TensorSpec tensor);
  int add_index(std::string name, std::vector<std::int32_t> values);
  // An index tensor over values the caller shares (an announcement's payload), not copied.
  int add_index(std::string name, std::shared_ptr<const std::vector<std::int32_t>> values);
  int add_block(std::string name, Block block);
  // A block the caller shares (a rank's share of the graph, an evaluation chunk), not copied.
  int add_block(std::string name, std::shared_ptr<const Block> block);
  int add_dense(std::string name, std::int64_t rows, std::int64_t cols);
  int add_sparse(std::string name, std::int64_t rows, std::int64_t cols, std::int64_t entries);
  // Dense tensors with a lifetime other than the plan's (TensorSpec::transient, ::persistent).
  int add_transient(std::string name, std::int64_t rows, std::int64_t cols);
  int add_persistent(std::string name, std::int64_t rows, std::int64_t cols);
  // Marks `tensor` (dense or sparse rows an op writes) persistent; returns it.
  int persistent(int tensor);
  void add_parameter(ParameterSpec parameter);
  int add_op(Op op);
  // Marks every op added so far as prologue.
  void end_prologue();
  // Pipelined plans: the depth, and the stage of the ops added from now on.
  void set_pipeline(int depth, std::int64_t step);
  void set_stage(int stage) { stage_ = stage; }

  // Planning work (Op::planned_nodes), counted on the plan's planning op when it is finished.
  void add_planned_nodes(std::int64_t count) { planned_nodes_ += count; }

  const TensorSpec& tensor(int id) const { return plan_.tensors[static_cast<std::size_t>(id)]; }
  int last_op() const { return static_cast<int>(plan_.ops.size()) - 1; }
  Plan finish();

 private:
  Plan plan_;
  int stage_ = 0;
  std::int64_t planned_nodes_ = 0;
  std::vector<int> last_writer_;                 // per tensor, -1 = none
  std::vector<std::vector<int>> readers_since_;  // per tensor
};

}  // namespace gnnbed
