#include "exec/distributed/plan_executor.hpp"

#include <algorithm>

#include "exec/distributed/sparse_rows.hpp"
#include "exec/kernels/cpu_kernels.hpp"
#include "exec/nn/aggregation.hpp"
#include "exec/train/trainer.hpp"
#include "strategies/model_ops.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

std::span<const std::byte> dense_bytes(const Matrix& m) {
  return std::as_bytes(std::span<const float>(m.data(), static_cast<std::size_t>(m.size())));
}

// Rows [first_row, first_row + rows) of `parts`, side by side.
Matrix side_by_side(const std::vector<const Matrix*>& parts, std::int64_t first_row,
                    std::int64_t rows) {
  std::int64_t width = 0;
  for (const Matrix* part : parts) width += part->cols();
  Matrix out;
  out.reshape_for_overwrite(rows, width);
  std::int64_t column = 0;
  for (const Matrix* part : parts) {
    for (std::int64_t r = 0; r < rows; ++r)
      std::copy_n(part->row(first_row + r), part->cols(), out.row(r) + column);
    column += part->cols();
  }
  return out;
}

// The error for an op of PyTorch-BigGraph's plans, which exec/embedding runs.
Error embedding_engine_op(const Op& op) {
  return Error("a " + std::string(to_string(op.kind)) +
               " op is PyTorch-BigGraph's, which the embedding engine runs (exec/embedding)");
}

}  // namespace

PlanExecutor::PlanExecutor(const StrategyContext& context, std::vector<ParameterSpec> parameters,
                           const LocalStore& store, Transport& transport, ComputeBackend& backend)
    : context_(context),
      specs_(std::move(parameters)),
      store_(store),
      transport_(transport),
      backend_(backend) {
  const ModelSpec& spec = context.model;
  const std::uint64_t seed = model_seed(context.training);
  for (int l = 0; l < spec.num_layers(); ++l) {
    for (Parameter& full : initial_parameters(spec, l, seed)) {
      for (const ParameterSpec& p : specs_) {
        if (p.name == full.name)
          parameters_.emplace(p.name, row_slice(full, p.row_begin, p.row_end));
      }
    }
  }
  for (const ParameterSpec& p : specs_) ordered_parameters_.push_back(&parameter(p.name));
  optimizer_ = make_optimizer(context.training);
  optimizer_->set_backend(backend_);
  keep_features_on_device();
}

void PlanExecutor::keep_features_on_device() {
  const FeaturePlacement& own = store_.placement();
  const std::int64_t width = own.column_end - own.column_begin;
  // Sparse features stay sparse on the host: a dense table of them would be mostly zeros.
  if (!backend_.is_gpu() || width <= 0 || store_.holds_sparse_features()) return;
  const std::vector<NodeId> nodes = store_.held_feature_nodes();
  const auto count = static_cast<std::int64_t>(nodes.size());
  const std::int64_t bytes = count * width * static_cast<std::int64_t>(sizeof(float));
  if (count == 0 || !backend_.holds_feature_table(bytes)) return;
  DeviceFeatures features;
  features.column_begin = own.column_begin;
  features.column_end = own.column_end;
  features.row_of_node.assign(static_cast<std::size_t>(store_.shard().num_nodes()), -1);
  for (std::int64_t i = 0; i < count; ++i) {
    features.row_of_node[static_cast<std::size_t>(nodes[static_cast<std::size_t>(i)])] =
        static_cast<std::int32_t>(i);
  }
  // Slice by slice, so that generated features are computed in bounded pieces too.
  features.table.reshape_for_overwrite(count, width);
  constexpr std::int64_t kSliceRows = std::int64_t{1} << 16;
  for (std::int64_t begin = 0; begin < count; begin += kSliceRows) {
    const std::int64_t rows = std::min(kSliceRows, count - begin);
    store_.gather_features(std::span<const NodeId>(nodes).subspan(static_cast<std::size_t>(begin),
                                                                  static_cast<std::size_t>(rows)),
                           own.column_begin, own.column_end, features.table.row(begin));
  }
  backend_.copy_to_device(features.table);
  backend_.synchronize();
  features.table.release_host_copy();
  device_features_ = std::move(features);
}

bool PlanExecutor::gather_on_device(std::span<const NodeId> nodes, const Op& op, Matrix& out) {
  DeviceFeatures& features = *device_features_;
  if (op.column_begin < features.column_begin || op.column_end > features.column_end) return false;
  const auto num_nodes = static_cast<NodeId>(features.row_of_node.size());
  const auto count = static_cast<std::int64_t>(nodes.size());
  features.rows.resize(nodes.size());
  // In parallel: random reads of a table as long as the graph (megabytes) miss the caches, and
  // a mini-batch maps hundreds of thousands of inputs while the GPU waits for them.
  bool all_held = true;
#pragma omp parallel for schedule(static) reduction(&& : all_held) if (count > 16384)
  for (std::int64_t i = 0; i < count; ++i) {
    const NodeId v = nodes[static_cast<std::size_t>(i)];
    const std::int32_t row =
        v >= 0 && v < num_nodes ? features.row_of_node[static_cast<std::size_t>(v)] : -1;
    features.rows[static_cast<std::size_t>(i)] = row;
    all_held = all_held && row >= 0;
  }
  if (!all_held) return false;
  backend_.gather_rows(features.table, features.rows, op.column_begin - features.column_begin,
                       op.column_end - features.column_begin, out);
  return true;
}

Parameter& PlanExecutor::parameter(const std::string& name) {
  const auto it = parameters_.find(name);
  if (it == parameters_.end()) {
    throw Error("rank " + std::to_string(transport_.rank()) + " holds no parameter '" + name + "'");
  }
  return it->second;
}

Parameter& PlanExecutor::active(const std::string& name) {
  const auto it = active_parameters_->find(name);
  if (it == active_parameters_->end()) {
    throw Error("rank " + std::to_string(transport_.rank()) + " holds no parameter '" + name + "'");
  }
  return it->second;
}

std::span<const NodeId> PlanExecutor::node_ids(int tensor) const {
  const TensorValue& value = tensors_[static_cast<std::size_t>(tensor)];
  if (value.index != nullptr) return *value.index;
  if (value.block != nullptr) return value.block->src_nodes;
  throw Error("tensor " + std::to_string(tensor) + " holds no node ids");
}

GnnLayer& PlanExecutor::layer(const Op& op, bool create) {
  const std::pair<int, int> key{op.layer, op.instance};
  if (!create) {
    const auto it = layers_.find(key);
    if (it == layers_.end()) throw Error(op.label + ": backward before forward");
    return *it->second;
  }
  std::vector<Parameter*> pointers;
  if (op.partial) {
    // The weights the op names, sliced to its rows; the layer's others (GAT's attention vectors)
    // whole; no bias.
    for (const ParameterShape& shape : context_.model.parameters(op.layer)) {
      if (!shape.is_weight) break;
      const std::string name = parameter_name(op.layer, shape.name);
      const bool sliced =
          std::find(op.parameters.begin(), op.parameters.end(), name) != op.parameters.end();
      pointers.push_back(sliced ? &partial_weight(op, name) : &active(name));
    }
  } else {
    for (const ParameterShape& shape : context_.model.parameters(op.layer)) {
      pointers.push_back(&active(parameter_name(op.layer, shape.name)));
    }
  }
  auto& slot = layers_[key];
  slot = make_layer(context_.model, op.layer, pointers, backend_);
  return *slot;
}

SyncedLayer& PlanExecutor::synced_layer(const Op& op, bool create) {
  auto* synced = dynamic_cast<SyncedLayer*>(&layer(op, create));
  if (synced == nullptr) {
    throw Error(op.label + ": sync_step " + std::to_string(op.sync_step) +
                " on a layer that does not split around a sum over ranks");
  }
  return *synced;
}

Parameter& PlanExecutor::partial_weight(const Op& op, const std::string& name) {
  Parameter& held = active(name);
  const ParameterSpec& spec = *std::find_if(specs_.begin(), specs_.end(),
                                            [&](const ParameterSpec& p) { return p.name == name; });
  if (op.column_begin == spec.row_begin && op.column_end == spec.row_end) return held;
  if (op.column_begin < spec.row_begin || op.column_end > spec.row_end ||
      op.column_begin >= op.column_end) {
    throw Error(op.label + " uses rows [" + std::to_string(op.column_begin) + ", " +
                std::to_string(op.column_end) + ") of " + name + ", this rank holds [" +
                std::to_string(spec.row_begin) + ", " + std::to_string(spec.row_end) + ")");
  }
  const auto [it, added] = weight_rows_.try_emplace(
      std::tuple{op.layer, op.instance, name},
      row_slice(held, op.column_begin - spec.row_begin, op.column_end - spec.row_begin));
  if (!added) throw Error(op.label + ": a second forward of the same partial layer");
  return it->second;
}

void PlanExecutor::add_weight_row_gradients(const Op& op) {
  for (const std::string& name : op.parameters) {
    const auto it = weight_rows_.find(std::tuple{op.layer, op.instance, name});
    if (it == weight_rows_.end()) continue;  // the op used the held parameter itself
    const ParameterSpec& spec = *std::find_if(
        specs_.begin(), specs_.end(), [&](const ParameterSpec& p) { return p.name == name; });
    const Matrix& rows = it->second.grad;
    Matrix& grad = active(name).grad;
    float* target = grad.row(op.column_begin - spec.row_begin);
    for (std::int64_t i = 0; i < rows.size(); ++i) target[i] += rows.data()[i];
  }
}

const Matrix& PlanExecutor::dense(int tensor) const {
  // A finished plan's storage waits in spare_tensors_ for the next one.
  if (!pipeline_.empty() || spare_tensors_.empty() || tensor < 0 ||
      tensor >= static_cast<int>(spare_tensors_.back().size())) {
    throw Error("no finished plan holds tensor " + std::to_string(tensor));
  }
  return spare_tensors_.back()[static_cast<std::size_t>(tensor)].dense;
}

void PlanExecutor::release_after(int op) {
  if (op >= static_cast<int>(released_after_.size())) return;
  for (const int t : released_after_[static_cast<std::size_t>(op)]) {
    tensors_[static_cast<std::size_t>(t)].dense = Matrix();
    tensors_[static_cast<std::size_t>(t)].sparse = SparseMatrix();
    tensors_[static_cast<std::size_t>(t)].wire = {};
  }
}

void PlanExecutor::bind_tensors(const Plan& plan) {
  // Dense storage survives from the previous plan: the same tensor ids have similar sizes from
  // one iteration to the next, so outputs reuse their allocations instead of faulting in fresh
  // pages every iteration (which cost as much as the gather itself for large inputs).
  tensors_.resize(plan.tensors.size());
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    tensors_[t].index = plan.tensors[t].index.get();
    tensors_[t].block = plan.tensors[t].block.get();
  }
  std::vector<int> last_use(plan.tensors.size(), -1);
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    for (const auto* ids : {&plan.ops[i].inputs, &plan.ops[i].outputs}) {
      for (const int t : *ids) {
        if (t >= 0) last_use[static_cast<std::size_t>(t)] = static_cast<int>(i);
      }
    }
  }
  released_after_.assign(plan.ops.size(), {});
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (plan.tensors[t].transient && last_use[t] >= 0)
      released_after_[static_cast<std::size_t>(last_use[t])].push_back(static_cast<int>(t));
  }
  take_persistent(plan);
}

namespace {

[[noreturn]] void throw_persistent_shape(const TensorSpec& spec, std::int64_t rows,
                                         std::int64_t cols) {
  throw Error("persistent tensor '" + spec.name + "' holds " + std::to_string(rows) + " x " +
              std::to_string(cols) + " values, the plan declares " + std::to_string(spec.rows) +
              " x " + std::to_string(spec.cols));
}

}  // namespace

void PlanExecutor::take_persistent(const Plan& plan) {
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    const TensorSpec& spec = plan.tensors[t];
    if (!spec.persistent) continue;
    PersistentValue& held = persistent_[spec.name];
    if (spec.kind == TensorKind::sparse) {
      // The first time: the rows without entries, until an op writes them.
      if (held.sparse.rows == 0 && held.sparse.cols == 0) {
        held.sparse.rows = spec.rows;
        held.sparse.cols = spec.cols;
        held.sparse.offsets.assign(static_cast<std::size_t>(spec.rows) + 1, 0);
      }
      if (held.sparse.rows != spec.rows || held.sparse.cols != spec.cols)
        throw_persistent_shape(spec, held.sparse.rows, held.sparse.cols);
      tensors_[t].sparse = std::move(held.sparse);
      continue;
    }
    if (held.dense.size() == 0) held.dense = Matrix(spec.rows, spec.cols);
    if (held.dense.rows() != spec.rows || held.dense.cols() != spec.cols)
      throw_persistent_shape(spec, held.dense.rows(), held.dense.cols());
    tensors_[t].dense = std::move(held.dense);
  }
}

std::span<const float> PlanExecutor::persistent_values(const std::string& name) const {
  const auto held = persistent_.find(name);
  if (held == persistent_.end()) return {};
  return {held->second.dense.data(), static_cast<std::size_t>(held->second.dense.size())};
}

void PlanExecutor::keep_persistent(const Plan& plan, std::vector<TensorValue>& tensors) {
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (!plan.tensors[t].persistent) continue;
    PersistentValue& held = persistent_[plan.tensors[t].name];
    held.dense = std::move(tensors[t].dense);
    held.sparse = std::move(tensors[t].sparse);
  }
}

PlanOutcome PlanExecutor::run(const Plan& plan, const Stopwatch& clock) {
  if (!pipeline_.empty()) {
    throw Error("rank " + std::to_string(plan.rank) + ": run() takes a plan alone, but " +
                std::to_string(pipeline_.size()) + " mini-batches are in flight");
  }
  admit(plan);
  for (;;) {
    std::vector<PlanOutcome> finished = run_round(clock);
    if (!finished.empty()) return std::move(finished.front());
  }
}

void PlanExecutor::run_op(const Plan& plan, const Op& op) {
  const auto rate = static_cast<float>(op.rate);
  switch (op.kind) {
    case OpKind::sample:
      throw Error("sampling must run before the plan is built (it belongs to the prologue)");
    case OpKind::all_to_all:
    case OpKind::all_reduce:
      throw Error("communication ops are started and finished by run_stage, not run_op");
    case OpKind::send:
    case OpKind::receive:
    case OpKind::train_bucket:
      throw embedding_engine_op(op);
    case OpKind::gather_features:
      gather_features(plan, op);
      return;
    case OpKind::scatter_rows:
      if (is_sparse(plan, op.outputs[0])) {
        place_sparse(plan, op);
      } else {
        scatter(plan, op, false);
      }
      return;
    case OpKind::copy_to_device:
      if (!is_sparse(plan, op.input(Input::tensor)))
        backend_.copy_to_device(input(op, Input::tensor));
      return;
    case OpKind::gather_rows: {
      if (is_sparse(plan, op.input(Input::source))) {
        gather_sparse_rows(plan, op);
        return;
      }
      const Matrix& source = input(op, Input::source);
      const bool all_columns = op.column_begin == 0 && op.column_end == 0;
      backend_.gather_rows(source, node_ids(op.input(Input::positions)), op.column_begin,
                           all_columns ? source.cols() : op.column_end, output(op, 0));
      return;
    }
    case OpKind::scatter_add_rows:
      scatter(plan, op, true);
      return;
    case OpKind::dropout:
      if (is_sparse(plan, op.input(Input::tensor))) {
        // On the host, where sparse rows stay (TensorValue).
        cpu::dropout_forward_sparse(sparse(op.input(Input::tensor)), node_ids(op.input(Input::ids)),
                                    rate, op.key);
      } else {
        backend_.dropout_forward(input(op, Input::tensor), node_ids(op.input(Input::ids)), rate,
                                 op.key, op.column_begin);
      }
      return;
    case OpKind::dropout_backward:
      backend_.dropout_backward(input(op, Input::tensor), node_ids(op.input(Input::ids)), rate,
                                op.key, op.column_begin);
      return;
    case OpKind::layer_forward:
      layer_forward(plan, op);
      return;
    case OpKind::relu:
      backend_.relu_forward(input(op, Input::tensor));
      return;
    case OpKind::relu_backward:
      backend_.relu_backward(input(op, Input::relu_output), input(op, Input::gradient));
      return;
    case OpKind::add_partials:
      add_partials(op);
      return;
    case OpKind::loss:
      loss(op);
      return;
    case OpKind::layer_backward:
      layer_backward(op);
      return;
    case OpKind::bias_backward:
      for (const std::string& name : op.parameters) {
        backend_.accumulate_column_sums(input(op, Input::gradient), active(name).grad);
      }
      return;
    case OpKind::optimizer_step:
      optimizer_step(plan, op);
      return;
    case OpKind::transform:
      transform(op);
      return;
    case OpKind::aggregate_transformed:
      aggregate_transformed(op);
      return;
    case OpKind::concat_columns:
      concat_columns(op);
      return;
  }
  throw Error("unknown op kind");
}

Matrix& PlanExecutor::input(const Op& op, Input name) {
  return tensors_[static_cast<std::size_t>(op.input(name))].dense;
}

Matrix& PlanExecutor::part(const Op& op, std::size_t i) {
  return tensors_[static_cast<std::size_t>(op.inputs[i])].dense;
}

Matrix& PlanExecutor::output(const Op& op, std::size_t i) {
  return tensors_[static_cast<std::size_t>(op.outputs[i])].dense;
}

bool PlanExecutor::is_sparse(const Plan& plan, int tensor) const {
  return plan.tensors[static_cast<std::size_t>(tensor)].kind == TensorKind::sparse;
}

void PlanExecutor::gather_features(const Plan& plan, const Op& op) {
  const auto ids = node_ids(op.input(Input::ids));
  if (is_sparse(plan, op.outputs[0])) {
    if (op.column_begin != 0 || op.column_end != store_.shard().feature_dim) {
      throw Error(op.label + ": sparse feature rows are gathered with every column, not [" +
                  std::to_string(op.column_begin) + ", " + std::to_string(op.column_end) + ")");
    }
    sparse(op.outputs[0]) = store_.gather_sparse_features(ids);
    return;
  }
  Matrix& out = output(op, 0);
  if (device_features_ && gather_on_device(ids, op, out)) return;
  // Gathered every iteration and copied to the GPU, if there is one: page-locked there.
  backend_.use_transfer_memory(out);
  out.reshape_for_overwrite(static_cast<std::int64_t>(ids.size()), op.column_end - op.column_begin);
  store_.gather_features(ids, op.column_begin, op.column_end, out.data());
}

void PlanExecutor::layer_forward(const Plan& plan, const Op& op) {
  const Block& block = *tensors_[static_cast<std::size_t>(op.input(Input::block))].block;
  if (is_sparse(plan, op.input(Input::tensor))) {
    if (op.sync_step != 0) throw Error(op.label + ": a layer split over ranks takes dense rows");
    output(op, 0) = layer(op, true).forward_sparse(block, sparse(op.input(Input::tensor)));
    return;
  }
  Matrix& in = input(op, Input::tensor);
  if (op.sync_step == 0) {
    output(op, 0) = layer(op, true).forward(block, in);
  } else if (op.sync_step == 1) {
    output(op, 0) = synced_layer(op, true).forward_to_sync(block, in);
  } else {
    output(op, 0) = synced_layer(op, false).forward_from_sync(in);
  }
}

void PlanExecutor::layer_backward(const Op& op) {
  if (op.sync_step == 1) {
    output(op, 0) = synced_layer(op, false).backward_to_sync(input(op, Input::gradient));
    return;
  }
  Matrix grad_input =
      op.sync_step == 0
          ? layer(op, false).backward(input(op, Input::gradient), op.input_grad)
          : synced_layer(op, false).backward_from_sync(input(op, Input::gradient), op.input_grad);
  if (op.input_grad) output(op, 0) = std::move(grad_input);
  if (op.partial) add_weight_row_gradients(op);
}

void PlanExecutor::add_partials(const Op& op) {
  Matrix& out = output(op, 0);
  out.copy_from(part(op, 0));
  for (std::size_t i = 1; i < op.inputs.size(); ++i) backend_.add_in_place(out, part(op, i));
  for (const std::string& name : op.parameters) backend_.add_row_vector(out, active(name).value);
}

void PlanExecutor::transform(const Op& op) {
  if (op.parameters.empty()) {
    throw Error(op.label + ": a transform multiplies by at least one weight");
  }
  // A partial op multiplies a slice of the input columns by the weights' rows
  // [column_begin, column_end), of which this rank holds rows [row_begin, row_end).
  std::int64_t first_row = 0;
  std::int64_t rows = active(op.parameters.front()).value.rows();
  if (op.partial) {
    const ParameterSpec& spec =
        *std::find_if(specs_.begin(), specs_.end(),
                      [&](const ParameterSpec& p) { return p.name == op.parameters.front(); });
    first_row = op.column_begin - spec.row_begin;
    rows = op.column_end - op.column_begin;
    if (first_row < 0 || op.column_end > spec.row_end || rows <= 0) {
      throw Error(op.label + " uses rows [" + std::to_string(op.column_begin) + ", " +
                  std::to_string(op.column_end) + ") of " + spec.name + ", this rank holds [" +
                  std::to_string(spec.row_begin) + ", " + std::to_string(spec.row_end) + ")");
    }
  }
  Matrix& out = output(op, 0);
  const Matrix& only = active(op.parameters.front()).value;
  if (op.parameters.size() == 1 && first_row == 0 && rows == only.rows()) {
    backend_.gemm(input(op, Input::tensor), false, only, false, out);
    return;
  }
  std::vector<const Matrix*> weights;
  for (const std::string& name : op.parameters) weights.push_back(&active(name).value);
  backend_.gemm(input(op, Input::tensor), false, side_by_side(weights, first_row, rows), false,
                out);
}

void PlanExecutor::aggregate_transformed(const Op& op) {
  const Block& block = *tensors_[static_cast<std::size_t>(op.input(Input::block))].block;
  Matrix& out = output(op, 0);
  if (context_.model.kind() == ModelKind::sage) {
    backend_.aggregate(mean_aggregation(block), input(op, Input::products), out);
    backend_.add_in_place(out, input(op, Input::self_products));
  } else {
    backend_.aggregate(gcn_aggregation(block), input(op, Input::products), out);
  }
  for (const std::string& name : op.parameters) backend_.add_row_vector(out, active(name).value);
}

void PlanExecutor::concat_columns(const Op& op) {
  const std::int64_t rows = op.inputs.empty() ? 0 : part(op, 0).rows();
  std::vector<const Matrix*> parts;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    parts.push_back(&part(op, i));
    if (parts.back()->rows() != rows) {
      throw Error(op.label + ": part " + std::to_string(i) + " has " +
                  std::to_string(parts.back()->rows()) + " rows, part 0 " + std::to_string(rows));
    }
  }
  output(op, 0) = side_by_side(parts, 0, rows);
}

void PlanExecutor::loss(const Op& op) {
  const Matrix& logits = input(op, Input::logits);
  const auto seeds = node_ids(op.input(Input::seeds));
  Matrix& grad = output(op, 0);
  if (seeds.empty()) {
    grad.reset(0, logits.cols());
    return;
  }
  std::vector<std::int32_t> labels;
  labels.reserve(seeds.size());
  for (const NodeId v : seeds) labels.push_back(store_.label(v));
  std::int64_t correct = 0;
  const double mean = backend_.softmax_cross_entropy(logits, labels, grad, correct);
  const double rows = static_cast<double>(seeds.size());
  backend_.scale(grad, static_cast<float>(rows * op.scale));
  outcome_.loss += mean * rows * op.scale;
  outcome_.correct += correct;
}

void PlanExecutor::optimizer_step(const Plan& plan, const Op& op) {
  std::vector<Parameter*> step;
  for (const std::string& name : op.parameters) step.push_back(&parameter(name));
  if (step != ordered_parameters_) {
    throw Error("optimizer_step must update every parameter, in the plan's order");
  }
  if (active_parameters_ != &parameters_) {
    stashed_step(plan);
    return;
  }
  apply_weight_decay(ordered_parameters_, context_.training);
  optimizer_->step(ordered_parameters_);
  ++steps_done_;
}

// An assembly's parts write every row of its block (plan.hpp), so the block is not zeroed first:
// that would write every byte twice. Sums start from zeros.
void PlanExecutor::scatter(const Plan& plan, const Op& op, bool add) {
  const TensorSpec& spec = plan.tensors[static_cast<std::size_t>(op.outputs[0])];
  Matrix& out = tensors_[static_cast<std::size_t>(op.outputs[0])].dense;
  if (add) {
    out.reset(spec.rows, spec.cols);
  } else {
    out.reshape_for_overwrite(spec.rows, spec.cols);
    written_rows_.assign(static_cast<std::size_t>(spec.rows), 0);
  }
  for (std::size_t i = 0; i + 1 < op.inputs.size(); i += 2) {
    const auto positions = node_ids(op.inputs[i]);
    const Matrix& rows = tensors_[static_cast<std::size_t>(op.inputs[i + 1])].dense;
    try {
      cpu::scatter_rows(rows, positions, out, add);
    } catch (const Error& error) {
      throw Error(std::string(to_string(op.kind)) + " '" + op.label + "', part " +
                  std::to_string(i / 2) + ": " + error.what());
    }
    if (!add) {
      for (const NodeId position : positions) written_rows_[static_cast<std::size_t>(position)] = 1;
    }
  }
  if (!add) {
    const auto unwritten = std::count(written_rows_.begin(), written_rows_.end(), 0);
    if (unwritten > 0) {
      throw Error(std::string(to_string(op.kind)) + " '" + op.label +
                  "': " + std::to_string(unwritten) + " of its " + std::to_string(out.rows()) +
                  " rows are written by no part");
    }
  }
}

std::vector<std::span<const std::byte>> PlanExecutor::send_views(const Plan& plan, const Op& op) {
  const auto num_ranks = static_cast<std::size_t>(plan.num_ranks);
  std::vector<std::span<const std::byte>> send(num_ranks);
  // A tensor sent to several peers (a broadcast block) is encoded once: encoding it again would
  // free the bytes the views of the earlier peers point into.
  std::vector<int> encoded;
  for (std::size_t q = 0; q < num_ranks; ++q) {
    const int t = op.inputs[q];
    if (t < 0) continue;
    TensorValue& value = tensors_[static_cast<std::size_t>(t)];
    if (is_sparse(plan, t)) {
      if (std::find(encoded.begin(), encoded.end(), t) == encoded.end()) {
        value.wire = encode_sparse_rows(value.sparse);
        encoded.push_back(t);
      }
      send[q] = value.wire;
    } else {
      send[q] = value.index != nullptr ? as_bytes_span(*value.index) : dense_bytes(value.dense);
    }
  }
  return send;
}

// Sparse rows stay on the host (TensorValue) and are read whole: a column slice of a sparse row
// is not a row of the plan's kind.
void PlanExecutor::gather_sparse_rows(const Plan& plan, const Op& op) {
  const TensorSpec& source = plan.tensors[static_cast<std::size_t>(op.input(Input::source))];
  const bool all_columns = (op.column_begin == 0 && op.column_end == 0) ||
                           (op.column_begin == 0 && op.column_end == source.cols);
  if (!is_sparse(plan, op.outputs[0]) || !all_columns) {
    throw Error(op.label + ": sparse rows are gathered whole into sparse rows");
  }
  sparse(op.outputs[0]) = SparseMatrixView(sparse(op.input(Input::source)))
                              .selected_rows(node_ids(op.input(Input::positions)));
}

void PlanExecutor::place_sparse(const Plan& plan, const Op& op) {
  const TensorSpec& spec = plan.tensors[static_cast<std::size_t>(op.outputs[0])];
  std::vector<SparseRowsPart> parts;
  for (std::size_t i = 0; i + 1 < op.inputs.size(); i += 2) {
    parts.push_back({node_ids(op.inputs[i]), &sparse(op.inputs[i + 1])});
  }
  try {
    sparse(op.outputs[0]) = place_sparse_rows(spec.rows, spec.cols, parts);
  } catch (const Error& error) {
    throw Error(std::string(to_string(op.kind)) + " '" + op.label + "': " + error.what());
  }
}

void PlanExecutor::store_received(const Plan& plan, const Op& op,
                                  const std::vector<std::vector<std::byte>>& received) {
  const auto num_ranks = static_cast<std::size_t>(plan.num_ranks);
  for (std::size_t q = 0; q < num_ranks; ++q) {
    const int t = op.outputs[q];
    if (t < 0) continue;
    const TensorSpec& spec = plan.tensors[static_cast<std::size_t>(t)];
    if (spec.kind == TensorKind::sparse) {
      sparse(t) = decode_sparse_rows(received[q], spec.rows, spec.cols, spec.entries,
                                     op.label + ", from rank " + std::to_string(q));
      continue;
    }
    if (static_cast<std::int64_t>(received[q].size()) != op.bytes_from[q] ||
        spec.kind != TensorKind::dense) {
      throw Error("expected " + std::to_string(op.bytes_from[q]) + " bytes from rank " +
                  std::to_string(q) + ", received " + std::to_string(received[q].size()));
    }
    Matrix& out = tensors_[static_cast<std::size_t>(t)].dense;
    out.reshape_for_overwrite(spec.rows, spec.cols);
    // An empty tensor may have no storage to copy into.
    if (!received[q].empty()) std::memcpy(out.data(), received[q].data(), received[q].size());
  }
}

void PlanExecutor::swap_state(InFlight& batch) {
  std::swap(tensors_, batch.tensors);
  std::swap(released_after_, batch.released_after);
  std::swap(layers_, batch.layers);
  std::swap(weight_rows_, batch.weight_rows);
  std::swap(outcome_, batch.outcome);
  const bool entering = !batch.swapped_in;
  batch.swapped_in = entering;
  active_parameters_ = entering && batch.stashed ? &batch.weights : &parameters_;
}

void PlanExecutor::admit(const Plan& plan) {
  const std::string where =
      "rank " + std::to_string(plan.rank) + ", iteration " + std::to_string(plan.iteration) + ": ";
  if (plan.pipeline_depth < 0) throw Error(where + "negative pipeline depth");
  if (static_cast<int>(pipeline_.size()) > plan.pipeline_depth) {
    throw Error(where + "the pipeline already holds " + std::to_string(pipeline_.size()) +
                " mini-batches: run a round first");
  }
  if (!pipeline_.empty() && plan.iteration != pipeline_.back().plan->iteration + 1) {
    throw Error(where + "admitted after iteration " +
                std::to_string(pipeline_.back().plan->iteration));
  }
  InFlight batch;
  batch.plan = &plan;
  // A mini-batch whose optimizer step comes in the round it first reads the weights in (no
  // staleness: every plan of depth 0, and pipelines that only move inputs ahead) sees no other
  // step in between: it works on the held weights. Stale ones read a stashed version.
  batch.stashed = plan.weight_staleness() > 0;
  if (batch.stashed) stash_weights(plan, batch, where);
  if (!spare_tensors_.empty()) {
    batch.tensors = std::move(spare_tensors_.back());
    spare_tensors_.pop_back();
  }
  batch.done.assign(plan.ops.size(), 0);
  std::fill_n(batch.done.begin(), plan.prologue_ops, 1);
  pipeline_.push_back(std::move(batch));
  count_stash();
}

void PlanExecutor::stash_weights(const Plan& plan, InFlight& batch, const std::string& where) {
  if (versions_.empty()) {
    std::vector<Matrix> current;
    for (const Parameter* p : ordered_parameters_) current.push_back(p->value);
    versions_.emplace(steps_done_, std::move(current));
  }
  const std::int64_t version = plan.weight_version();
  const auto held = versions_.find(version);
  if (held == versions_.end()) {
    throw Error(where + "the mini-batch of step " + std::to_string(plan.step) +
                " reads the weights after " + std::to_string(version) +
                " steps, which this rank does not hold (" + std::to_string(steps_done_) +
                " steps done)");
  }
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const Parameter& current = *ordered_parameters_[i];
    Parameter copy{current.name, current.layer, current.is_weight, held->second[i],
                   Matrix(current.grad.rows(), current.grad.cols())};
    batch.weights.emplace(current.name, std::move(copy));
  }
  // Later mini-batches read newer versions, except that the first ones all read version 0.
  const bool needed_later = plan.step + 1 - plan.weight_staleness() <= version;
  versions_.erase(versions_.begin(), needed_later ? held : std::next(held));
}

std::vector<PlanOutcome> PlanExecutor::run_round(const Stopwatch& clock) {
  // Newest first: stage 0 of the mini-batch admitted last, then stage 1 of the one before, ...
  for (auto it = pipeline_.rbegin(); it != pipeline_.rend(); ++it) run_stage(*it, clock);
  std::vector<PlanOutcome> finished;
  while (!pipeline_.empty() &&
         pipeline_.front().next_stage > pipeline_.front().plan->pipeline_depth) {
    finished.push_back(std::move(pipeline_.front().outcome));
    keep_persistent(*pipeline_.front().plan, pipeline_.front().tensors);
    spare_tensors_.push_back(std::move(pipeline_.front().tensors));
    pipeline_.pop_front();
  }
  count_stash();
  return finished;
}

void PlanExecutor::run_stage(InFlight& batch, const Stopwatch& clock) {
  const Plan& plan = *batch.plan;
  const int stage = batch.next_stage;
  swap_state(batch);
  std::size_t i = 0;
  try {
    if (stage == 0) {
      bind_tensors(plan);
      layers_.clear();
      weight_rows_.clear();
      outcome_ = PlanOutcome{};
    }
    // A stashed batch's gradients start at zero; the held ones hold the last step's until the
    // batch's model work begins (after that step: the batch's staleness is 0).
    if (!batch.stashed && stage == plan.first_model_stage()) {
      for (Parameter* p : ordered_parameters_) p->grad.fill(0.0f);
    }
    // What earlier stages sent and received, in the order they started: the same on every rank.
    finish_transfers(batch, clock);
    for (i = static_cast<std::size_t>(plan.prologue_ops); i < plan.ops.size(); ++i) {
      const Op& op = plan.ops[i];
      if (op.stage != stage) continue;
      check_iteration_deps(batch, op, static_cast<int>(i));
      const bool waits =
          std::any_of(batch.pending.begin(), batch.pending.end(), [&](const Pending& p) {
            return std::find(op.deps.begin(), op.deps.end(), p.op) != op.deps.end();
          });
      if (waits) finish_transfers(batch, clock);  // a transfer of this stage feeds the op
      const double start = clock.seconds();
      if (is_communication(op.kind)) {
        start_transfer(plan, op, static_cast<int>(i), batch);
      } else {
        run_op(plan, op);
        backend_.synchronize();  // a GPU backend queues kernels: the op's time must include them
        batch.done[i] = 1;
        release_after(static_cast<int>(i));
      }
      // A transfer's waiting is added where it is finished.
      outcome_.records.push_back({static_cast<int>(i), start, clock.seconds() - start, 0.0});
      test_transfers();
    }
    i = plan.ops.size();
    if (stage == plan.pipeline_depth) finish_transfers(batch, clock);
  } catch (const Error& error) {
    swap_state(batch);
    throw Error("rank " + std::to_string(plan.rank) + ", iteration " +
                std::to_string(plan.iteration) + ", stage " + std::to_string(stage) +
                (i < plan.ops.size() ? ", op " + std::to_string(i) + " (" + plan.ops[i].label + ")"
                                     : std::string()) +
                ": " + error.what());
  }
  swap_state(batch);
  ++batch.next_stage;
}

void PlanExecutor::check_iteration_deps(const InFlight& batch, const Op& op, int index) const {
  const auto self = std::find_if(pipeline_.begin(), pipeline_.end(),
                                 [&](const InFlight& b) { return &b == &batch; });
  for (const IterationDep& dep : op.iteration_deps) {
    const auto back = static_cast<std::ptrdiff_t>(dep.back);
    if (self - pipeline_.begin() < back) continue;  // retired: all its ops ran
    const InFlight& earlier = *(self - back);
    if (earlier.plan->iteration != batch.plan->iteration - dep.back ||
        dep.op >= static_cast<int>(earlier.done.size())) {
      throw Error("op " + std::to_string(index) + " depends on op " + std::to_string(dep.op) +
                  " of iteration " + std::to_string(batch.plan->iteration - dep.back) +
                  ", which this rank's pipeline does not hold");
    }
    if (earlier.done[static_cast<std::size_t>(dep.op)] == 0) {
      throw Error("op " + std::to_string(index) + " would run before op " + std::to_string(dep.op) +
                  " (" + earlier.plan->ops[static_cast<std::size_t>(dep.op)].label +
                  ") of iteration " + std::to_string(earlier.plan->iteration) +
                  ", which it depends on: the schedule does not fit the plans");
    }
  }
}

void PlanExecutor::start_transfer(const Plan& plan, const Op& op, int index, InFlight& batch) {
  Pending pending;
  pending.op = index;
  pending.record = outcome_.records.size();  // the record run_stage adds next
  if (op.kind == OpKind::send || op.kind == OpKind::receive) throw embedding_engine_op(op);
  if (op.kind == OpKind::all_to_all) {
    pending.transfer = transport_.start_all_to_all(send_views(plan, op), op.bytes_from, op.traffic,
                                                   context_.all_to_all_block_steps);
  } else {
    std::vector<float> buffer;
    for (const std::string& name : op.parameters) {
      const auto values = active(name).grad.values();
      buffer.insert(buffer.end(), values.begin(), values.end());
    }
    pending.transfer =
        transport_.start_all_reduce_sum(std::move(buffer), op.traffic, op.ranks_per_machine);
  }
  batch.pending.push_back(std::move(pending));
}

void PlanExecutor::finish_transfers(InFlight& batch, const Stopwatch& clock) {
  const Plan& plan = *batch.plan;
  for (Pending& pending : batch.pending) {
    const Op& op = plan.ops[static_cast<std::size_t>(pending.op)];
    TransferTiming timing;
    const double start = clock.seconds();
    pending.transfer->wait(timing);
    if (op.kind == OpKind::all_to_all) {
      store_received(plan, op, pending.transfer->received());
    } else {
      const std::vector<float>& sums = pending.transfer->reduced();
      std::size_t at = 0;
      for (const std::string& name : op.parameters) {
        const auto values = active(name).grad.values();
        std::copy_n(sums.begin() + static_cast<std::ptrdiff_t>(at), values.size(), values.begin());
        at += values.size();
      }
    }
    // The op's time is what this rank spent on it: starting it and waiting for it.
    OpRecord& record = outcome_.records[pending.record];
    record.seconds += clock.seconds() - start;
    record.waiting_seconds += timing.waiting_seconds;
    batch.done[static_cast<std::size_t>(pending.op)] = 1;
    release_after(pending.op);
  }
  batch.pending.clear();
}

void PlanExecutor::test_transfers() {
  for (InFlight& batch : pipeline_) {
    for (Pending& pending : batch.pending) pending.transfer->test();
  }
}

void PlanExecutor::stashed_step(const Plan& plan) {
  if (plan.step != steps_done_) {
    throw Error("the optimizer step of global step " + std::to_string(plan.step) + " after " +
                std::to_string(steps_done_) + " steps: steps apply in order");
  }
  // The mini-batch's gradient, computed with its stashed weights, updates the current weights
  // (weight decay on the current ones, as the optimizer sees them).
  for (Parameter* held : ordered_parameters_) held->grad.copy_from(active(held->name).grad);
  apply_weight_decay(ordered_parameters_, context_.training);
  optimizer_->step(ordered_parameters_);
  ++steps_done_;
  std::vector<Matrix> version;
  for (const Parameter* p : ordered_parameters_) version.push_back(p->value);
  versions_.emplace(steps_done_, std::move(version));
  count_stash();
}

void PlanExecutor::count_stash() {
  std::int64_t bytes = 0;
  for (const auto& [version, values] : versions_) {
    for (const Matrix& m : values) bytes += m.bytes();
  }
  for (const InFlight& batch : pipeline_) {
    for (const auto& [name, p] : batch.weights) bytes += p.value.bytes() + p.grad.bytes();
  }
  stash_peak_bytes_ = std::max(stash_peak_bytes_, bytes);
}

std::vector<Parameter> PlanExecutor::gather_full_parameters(bool gradients) {
  std::vector<Parameter> full;
  for (const ParameterSpec& spec : specs_) {
    const Parameter& local = parameter(spec.name);
    const Matrix& mine = gradients ? local.grad : local.value;
    // Every rank must take the same branch (the gather is collective), and a rank that holds all
    // the rows sees no split where another holds none (more ranks than feature columns): decide
    // together.
    const bool split = transport_.max_over_ranks(spec.local_rows() != spec.rows ? 1.0 : 0.0) > 0.0;
    Parameter whole{spec.name, spec.layer, spec.is_weight, Matrix(spec.rows, spec.cols),
                    Matrix(spec.rows, spec.cols)};
    Matrix& target = gradients ? whole.grad : whole.value;
    if (!split) {
      target.copy_from(mine);
    } else {
      // Rows are split in rank order (FeatureColumnSplit), so the pieces concatenate.
      const auto pieces = transport_.all_gather_control(mine.values());
      std::size_t at = 0;
      for (const auto& piece : pieces) {
        std::copy(piece.begin(), piece.end(), target.data() + at);
        at += piece.size();
      }
    }
    full.push_back(std::move(whole));
  }
  return full;
}

}  // namespace gnnbed
