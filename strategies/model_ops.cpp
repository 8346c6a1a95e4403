#include "strategies/model_ops.hpp"

#include "strategies/plan/collective_schedule.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

const Block& block_of(const PlanBuilder& builder, int tensor) {
  return *builder.tensor(tensor).block;
}

}  // namespace

std::string parameter_name(int layer, const std::string& shape_name) {
  return "layer" + std::to_string(layer) + "." + shape_name;
}

std::vector<ParameterSpec> full_parameters(const ModelSpec& spec, int layer) {
  std::vector<ParameterSpec> parameters;
  for (const ParameterShape& shape : spec.parameters(layer)) {
    parameters.push_back({parameter_name(layer, shape.name), layer, shape.is_weight, shape.rows,
                          shape.cols, 0, shape.rows});
  }
  return parameters;
}

std::vector<ParameterSpec> full_model_parameters(const ModelSpec& spec) {
  std::vector<ParameterSpec> all;
  for (int l = 0; l < spec.num_layers(); ++l) {
    for (ParameterSpec& p : full_parameters(spec, l)) all.push_back(std::move(p));
  }
  return all;
}

std::int64_t local_elements(const std::vector<ParameterSpec>& parameters,
                            const std::vector<std::string>& names) {
  std::int64_t total = 0;
  for (const std::string& name : names) {
    for (const ParameterSpec& p : parameters) {
      if (p.name == name) total += p.local_elements();
    }
  }
  return total;
}

ModelEmitter::ModelEmitter(PlanBuilder& builder, const ModelSpec& spec, std::uint64_t dropout_key)
    : builder_(builder), spec_(spec), dropout_key_(dropout_key) {}

std::uint64_t ModelEmitter::layer_dropout_key(int layer) const {
  return hash_mix(dropout_key_, static_cast<std::uint64_t>(layer));
}

int ModelEmitter::dropout_op(OpKind kind, int tensor, int ids, int layer,
                             std::int64_t column_offset) {
  Op op;
  op.kind = kind;
  op.label = "layer" + std::to_string(layer) + "." + std::string(to_string(kind));
  op.set_input(Input::tensor, tensor);
  op.set_input(Input::ids, ids);
  op.outputs = {tensor};
  op.layer = layer;
  op.key = layer_dropout_key(layer);
  op.rate = spec_.dropout();
  op.column_begin = column_offset;
  op.column_end = column_offset + builder_.tensor(tensor).cols;
  // Work: the entries a hash decides (as FLOPs), every byte read and written back. Forward dropout
  // hashes no group of zeros, and on the input features (bag-of-words: mostly zeros) that is most
  // of them, but it still reads and writes them (zeros over zeros, in place); activations and
  // gradients count as dense.
  // Sparse rows: every stored entry decided, read and its value written back. A stored entry takes
  // a hash of its own, where dense rows share one among kDropoutGroupEntries columns: it counts as
  // that many dense entries (measured: 8.3 ns per sparse entry, 7.7 ns per 4 dense ones).
  const TensorSpec& spec = builder_.tensor(tensor);
  if (spec.kind == TensorKind::sparse) {
    op.flops = static_cast<double>(kDropoutGroupEntries) * static_cast<double>(spec.entries);
    op.memory_bytes = spec.bytes() + spec.entries * kFloatBytes;
    return builder_.add_op(std::move(op));
  }
  const double hashed =
      kind == OpKind::dropout && layer == 0 ? spec_.input_nonzero_group_fraction() : 1.0;
  op.flops = hashed * static_cast<double>(spec.rows * spec.cols);
  op.memory_bytes = 2 * spec.bytes();
  return builder_.add_op(std::move(op));
}

int ModelEmitter::dropout(int tensor, int ids, int layer, std::int64_t column_offset) {
  return dropout_op(OpKind::dropout, tensor, ids, layer, column_offset);
}

int ModelEmitter::dropout_backward(int tensor, int ids, int layer, std::int64_t column_offset) {
  return dropout_op(OpKind::dropout_backward, tensor, ids, layer, column_offset);
}

int ModelEmitter::forward(std::span<const int> blocks, int input, int first_layer) {
  int h = input;
  for (int l = first_layer; l < spec_.num_layers(); ++l) {
    h = forward_layer(l, blocks[static_cast<std::size_t>(l - first_layer)], h);
  }
  return h;
}

int ModelEmitter::forward_layer(int layer, int block_tensor, int input, const LayerUse& use) {
  const Block& block = block_of(builder_, block_tensor);
  LayerTrace& trace = traces_[{layer, use.instance}];
  trace.block = block_tensor;
  if (spec_.dropout() > 0) dropout(input, block_tensor, layer, 0);
  trace.input = input;
  const std::string name = "layer" + std::to_string(layer);
  const int z =
      builder_.add_dense(name + ".out" + use.part, block.num_dst, spec_.layer(layer).out_dim);
  Op forward_op;
  forward_op.kind = OpKind::layer_forward;
  forward_op.label = name + ".forward" + use.part;
  forward_op.set_input(Input::block, block_tensor);
  forward_op.set_input(Input::tensor, input);
  forward_op.outputs = {z};
  forward_op.layer = layer;
  forward_op.instance = use.instance;
  set_layer_work(forward_op, layer_work(layer, block, input, false, false));
  builder_.add_op(std::move(forward_op));
  if (spec_.layer(layer).relu) relu(layer, z, use.part);
  trace.output = z;
  return z;
}

ModelSpec::LayerWork ModelEmitter::layer_work(int layer, const Block& block, int input,
                                              bool backward, bool input_grad) const {
  const TensorSpec& in = builder_.tensor(input);
  if (in.kind != TensorKind::sparse) {
    return backward ? spec_.backward_work(layer, block.num_dst, block.num_src(), block.num_edges(),
                                          input_grad)
                    : spec_.forward_work(layer, block.num_dst, block.num_src(), block.num_edges());
  }
  if (layer != 0 || input_grad) {
    throw Error("layer" + std::to_string(layer) +
                ": sparse input rows are the first layer's, which passes no gradient below");
  }
  // The destinations are the first source rows: their entries are taken as their share of the
  // rows' (the plan counts the entries of the whole input, which sizes its transfers exactly).
  const std::int64_t dst_entries =
      in.rows > 0 ? static_cast<std::int64_t>(static_cast<double>(in.entries) *
                                              static_cast<double>(block.num_dst) /
                                              static_cast<double>(in.rows))
                  : 0;
  return spec_.sparse_input_work(block.num_dst, block.num_src(), block.num_edges(), in.entries,
                                 dst_entries, backward);
}

int ModelEmitter::relu(int layer, int z, const std::string& part) {
  Op op;
  op.kind = OpKind::relu;
  op.label = "layer" + std::to_string(layer) + ".relu" + part;
  op.set_input(Input::tensor, z);
  op.outputs = {z};
  op.memory_bytes = 2 * builder_.tensor(z).bytes();
  return builder_.add_op(std::move(op));
}

int ModelEmitter::relu_backward(int layer, int grad, int z, const std::string& part) {
  Op op;
  op.kind = OpKind::relu_backward;
  op.label = "layer" + std::to_string(layer) + ".relu_backward" + part;
  op.set_input(Input::gradient, grad);
  op.set_input(Input::relu_output, z);
  op.outputs = {grad};
  op.memory_bytes = 3 * builder_.tensor(grad).bytes();
  return builder_.add_op(std::move(op));
}

int ModelEmitter::loss(int logits, int seeds, double scale) {
  // A copy: adding the gradient's tensor may move the plan's tensors (found by AddressSanitizer).
  const TensorSpec spec = builder_.tensor(logits);
  const int grad = builder_.add_dense("logits.grad", spec.rows, spec.cols);
  Op op;
  op.kind = OpKind::loss;
  op.label = "loss";
  op.set_input(Input::logits, logits);
  op.set_input(Input::seeds, seeds);
  op.outputs = {grad};
  op.scale = scale;
  op.memory_bytes = 2 * spec.bytes();
  builder_.add_op(std::move(op));
  return grad;
}

int ModelEmitter::backward(int grad_logits, int bottom_layer, bool bottom_input_grad) {
  int grad = grad_logits;
  for (int l = spec_.num_layers() - 1; l >= bottom_layer; --l) {
    grad = backward_layer(l, grad, l > bottom_layer || bottom_input_grad);
  }
  return grad;
}

int ModelEmitter::backward_layer(int layer, int grad_output, bool input_grad, const LayerUse& use) {
  const auto found = traces_.find({layer, use.instance});
  if (found == traces_.end()) {
    throw Error("layer" + std::to_string(layer) + use.part + ": backward before forward");
  }
  const LayerTrace& trace = found->second;
  const Block& block = block_of(builder_, trace.block);
  if (spec_.layer(layer).relu) relu_backward(layer, grad_output, trace.output, use.part);
  Op op;
  op.kind = OpKind::layer_backward;
  op.label = "layer" + std::to_string(layer) + ".backward" + use.part;
  op.instance = use.instance;
  op.set_input(Input::gradient, grad_output);
  op.set_input(Input::block, trace.block);
  op.set_input(Input::tensor, trace.input);
  op.layer = layer;
  op.input_grad = input_grad;
  set_layer_work(op, layer_work(layer, block, trace.input, true, input_grad));
  int grad_input = -1;
  if (input_grad) {
    grad_input = builder_.add_dense("layer" + std::to_string(layer) + ".in.grad" + use.part,
                                    block.num_src(), spec_.layer(layer).in_dim);
    op.outputs = {grad_input};
  }
  gradient_ops_.push_back(builder_.add_op(std::move(op)));
  if (input_grad && spec_.dropout() > 0) dropout_backward(grad_input, trace.block, layer, 0);
  return grad_input;
}

void set_layer_work(Op& op, const ModelSpec::LayerWork& work) {
  op.flops = work.total_flops();
  op.sparse_flops = work.sparse_flops;
  op.sparse_entries = static_cast<std::int64_t>(work.sparse_entries);
  op.memory_bytes = static_cast<std::int64_t>(work.memory_bytes);
  op.gathered_rows = static_cast<std::int64_t>(work.gathered_rows);
  op.gathered_table_bytes = static_cast<std::int64_t>(work.gathered_table_bytes);
}

int emit_copy_to_device(PlanBuilder& builder, int tensor, std::string label) {
  Op op;
  op.kind = OpKind::copy_to_device;
  op.stream = Stream::copy;
  op.label = std::move(label);
  op.set_input(Input::tensor, tensor);
  op.outputs = {tensor};
  op.memory_bytes = builder.tensor(tensor).bytes();
  return builder.add_op(std::move(op));
}

Op gather_features_op(std::string label, int ids, int output, std::int64_t column_begin,
                      std::int64_t column_end, std::int64_t rows) {
  Op op;
  op.kind = OpKind::gather_features;
  op.stream = Stream::copy;
  op.label = std::move(label);
  op.set_input(Input::ids, ids);
  op.outputs = {output};
  op.column_begin = column_begin;
  op.column_end = column_end;
  op.memory_bytes = 2 * rows * (column_end - column_begin) * kFloatBytes;
  return op;
}

Op gather_rows_op(const PlanBuilder& builder, std::string label, int positions, int source,
                  int output, std::int64_t column_begin, std::int64_t column_end) {
  Op op;
  op.kind = OpKind::gather_rows;
  op.label = std::move(label);
  op.set_input(Input::positions, positions);
  op.set_input(Input::source, source);
  op.outputs = {output};
  op.column_begin = column_begin;
  op.column_end = column_end;
  op.memory_bytes = 2 * builder.tensor(output).bytes();  // read and written
  op.gathered_rows = builder.tensor(output).rows;
  const TensorSpec& table = builder.tensor(source);
  op.gathered_table_bytes = table.bytes();
  if (column_end > column_begin && table.cols > 0) {
    op.gathered_table_bytes = table.bytes() / table.cols * (column_end - column_begin);
  }
  return op;
}

Op scatter_rows_op(const PlanBuilder& builder, std::string label, std::vector<int> pairs,
                   int output, Stream stream) {
  Op op;
  op.kind = OpKind::scatter_rows;
  op.stream = stream;
  op.label = std::move(label);
  op.inputs = std::move(pairs);
  op.outputs = {output};
  op.memory_bytes = 2 * builder.tensor(output).bytes();  // every row read and written once
  return op;
}

Op scatter_add_op(const PlanBuilder& builder, std::string label, std::vector<int> pairs,
                  int output) {
  Op op;
  op.kind = OpKind::scatter_add_rows;
  op.label = std::move(label);
  op.inputs = std::move(pairs);
  op.outputs = {output};
  // The output written once; every added row read, with its target read and written.
  op.memory_bytes = builder.tensor(output).bytes();
  for (std::size_t i = 1; i < op.inputs.size(); i += 2) {
    op.memory_bytes += 3 * builder.tensor(op.inputs[i]).bytes();
  }
  return op;
}

Op exchange_op(std::string label, Traffic traffic, int num_ranks) {
  Op op;
  op.kind = OpKind::all_to_all;
  op.stream = Stream::network;
  op.label = std::move(label);
  op.traffic = traffic;
  op.inputs.assign(static_cast<std::size_t>(num_ranks), -1);
  op.outputs.assign(static_cast<std::size_t>(num_ranks), -1);
  op.bytes_to.assign(static_cast<std::size_t>(num_ranks), 0);
  op.bytes_from.assign(static_cast<std::size_t>(num_ranks), 0);
  return op;
}

int emit_all_reduce(PlanBuilder& builder, const std::vector<ParameterSpec>& parameters,
                    const std::vector<std::string>& names, int rank, int num_ranks,
                    int ranks_per_machine, std::vector<int> deps) {
  const std::int64_t elements = local_elements(parameters, names);
  Op op;
  op.kind = OpKind::all_reduce;
  op.stream = Stream::network;
  op.label = "all_reduce gradients";
  op.traffic = Traffic::gradients;
  op.parameters = names;
  op.deps = std::move(deps);
  if (hierarchical_all_reduce(num_ranks, ranks_per_machine)) {
    op.ranks_per_machine = ranks_per_machine;
  }
  op.bytes_to = all_reduce_elements_to(rank, num_ranks, op.ranks_per_machine, elements);
  op.bytes_from = all_reduce_elements_from(rank, num_ranks, op.ranks_per_machine, elements);
  for (std::int64_t& bytes : op.bytes_to) bytes *= kFloatBytes;
  for (std::int64_t& bytes : op.bytes_from) bytes *= kFloatBytes;
  op.flops = static_cast<double>(elements) * (num_ranks - 1) / std::max(1, num_ranks);
  return builder.add_op(std::move(op));
}

int emit_optimizer_step(PlanBuilder& builder, const std::vector<ParameterSpec>& parameters,
                        std::vector<int> deps) {
  Op op;
  op.kind = OpKind::optimizer_step;
  op.label = "optimizer step";
  op.deps = std::move(deps);
  std::int64_t elements = 0;
  for (const ParameterSpec& p : parameters) {
    op.parameters.push_back(p.name);
    elements += p.local_elements();
  }
  // Adam reads and writes value, gradient and two moments.
  op.memory_bytes = 8 * kFloatBytes * elements;
  op.flops = 10.0 * static_cast<double>(elements);
  return builder.add_op(std::move(op));
}

void emit_all_reduce_and_step(PlanBuilder& builder, const std::vector<ParameterSpec>& parameters,
                              int rank, int num_ranks, int ranks_per_machine,
                              std::vector<int> gradient_ops) {
  std::vector<std::string> names;
  for (const ParameterSpec& p : parameters) names.push_back(p.name);
  const int reduce = emit_all_reduce(builder, parameters, names, rank, num_ranks, ranks_per_machine,
                                     std::move(gradient_ops));
  emit_optimizer_step(builder, parameters, {reduce});
}

}  // namespace gnnbed
