#pragma once
// How a model's layers appear in plans: the forward ops (dropout, layer, ReLU), the loss, the
// backward ops, the gradient all-reduce and the optimizer step, with their FLOPs and bytes.
// Strategies emit the data-parallel part of a model through ModelEmitter and add their own ops
// around it (P3's model-parallel first layer).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "strategies/config/model_spec.hpp"
#include "strategies/plan/plan.hpp"

namespace gnnbed {

// Dense tensors, parameters and gradients are float32.
inline constexpr std::int64_t kFloatBytes = sizeof(float);

// "layer0.W_self", ...
std::string parameter_name(int layer, const std::string& shape_name);

// Layer l's parameters as full (unsplit) tensors, in ModelSpec::parameters order.
std::vector<ParameterSpec> full_parameters(const ModelSpec& spec, int layer);

// Every layer's parameters as full tensors (data parallel), layer by layer.
std::vector<ParameterSpec> full_model_parameters(const ModelSpec& spec);

std::int64_t local_elements(const std::vector<ParameterSpec>& parameters,
                            const std::vector<std::string>& names);

// Which use of a layer its ops belong to, where a plan runs a layer on more than one block
// (NeutronStar: the destinations that wait for no peer, then the others): every use keeps its
// own state for its backward, and its backward adds to the same parameter gradients.
struct LayerUse {
  int instance = 0;
  std::string part;  // appended to the ops' labels; empty for a layer's only use
};

class ModelEmitter {
 public:
  ModelEmitter(PlanBuilder& builder, const ModelSpec& spec, std::uint64_t dropout_key);

  // Dropout, layer and ReLU ops of layers [first_layer, L) on blocks[l - first_layer], starting
  // from the dense tensor `input` (the first layer's input). Returns the logits tensor.
  int forward(std::span<const int> blocks, int input, int first_layer);

  // Softmax cross-entropy of the logits against the labels of `seeds`, scaled; returns the
  // gradient tensor.
  int loss(int logits, int seeds, double scale);

  // Back-propagates from the logits' gradient down to layer `bottom_layer` (at least the forward's
  // first layer). Returns the gradient of `bottom_layer`'s input (after its dropout) when
  // `bottom_input_grad`, else -1.
  int backward(int grad_logits, int bottom_layer, bool bottom_input_grad);

  // One layer at a time, for strategies that act between layers (ROC's halo exchange): dropout
  // on `input` (in place), the layer on `block`, ReLU unless it is the last layer; returns the
  // output. Backward: from the gradient of the layer's output (after its ReLU), returns the
  // gradient of its input (after dropout) when `input_grad`, else -1.
  int forward_layer(int layer, int block, int input, const LayerUse& use = {});
  int backward_layer(int layer, int grad_output, bool input_grad, const LayerUse& use = {});

  // Layer `layer`'s ReLU on its output `z`, in place, and its backward on the gradient `grad`
  // (masked where `z` is not positive).
  int relu(int layer, int z, const std::string& part = "");
  int relu_backward(int layer, int grad, int z, const std::string& part = "");

  int num_layers() const { return spec_.num_layers(); }

  // The ops that added to parameter gradients (for the all-reduce's dependencies).
  const std::vector<int>& gradient_ops() const { return gradient_ops_; }

  // Dropout op on `tensor` (in place), rows identified by the node ids of `ids` (an index or a
  // block tensor: its source nodes), for layer `layer`'s input; columns from `column_offset`.
  int dropout(int tensor, int ids, int layer, std::int64_t column_offset);
  int dropout_backward(int tensor, int ids, int layer, std::int64_t column_offset);
  std::uint64_t layer_dropout_key(int layer) const;

 private:
  int dropout_op(OpKind kind, int tensor, int ids, int layer, std::int64_t column_offset);

  struct LayerTrace {
    int block = -1;
    int input = -1;   // after dropout
    int output = -1;  // after ReLU (the logits for the last layer)
  };

  PlanBuilder& builder_;
  const ModelSpec& spec_;
  std::uint64_t dropout_key_;
  // A layer op's work, from its input's kind (sparse rows: ModelSpec's sparse-input work).
  ModelSpec::LayerWork layer_work(int layer, const Block& block, int input, bool backward,
                                  bool input_grad) const;
  std::map<std::pair<int, int>, LayerTrace> traces_;  // per (layer, use's instance)
  std::vector<int> gradient_ops_;
};

// Sets a layer op's work: total FLOPs, the part spent aggregating over edges, and the bytes its
// dense products stream.
void set_layer_work(Op& op, const ModelSpec::LayerWork& work);

// Moves a host tensor (gathered input features) to the device before layers read it, in place.
int emit_copy_to_device(PlanBuilder& builder, int tensor, std::string label);

// gather_features of the `rows` nodes of `ids` (an index or a block tensor), columns
// [column_begin, column_end), into `output`.
Op gather_features_op(std::string label, int ids, int output, std::int64_t column_begin,
                      std::int64_t column_end, std::int64_t rows);

// gather_rows of the rows of the dense `source` at `positions` (an index tensor) into `output`,
// columns [column_begin, column_end) of them (every column when both are 0).
Op gather_rows_op(const PlanBuilder& builder, std::string label, int positions, int source,
                  int output, std::int64_t column_begin = 0, std::int64_t column_end = 0);

// scatter_rows of (positions, rows) pairs that write every row of `output`, on `stream` (the copy
// stream for host-side input features, compute for tensors on the device).
Op scatter_rows_op(const PlanBuilder& builder, std::string label, std::vector<int> pairs,
                   int output, Stream stream);

// scatter_add_rows of (positions, rows) pairs into `output` (zero where no row is added).
Op scatter_add_op(const PlanBuilder& builder, std::string label, std::vector<int> pairs,
                  int output);

// An empty all-to-all (every slot -1, no bytes) for the caller to fill per peer.
Op exchange_op(std::string label, Traffic traffic, int num_ranks);

// All-reduce of the gradients of `names` (summed over ranks), after `deps`: one ring, or
// hierarchical over machines of `ranks_per_machine` ranks where that is above 1
// (collective_schedule.hpp; StrategyContext::all_reduce_ranks_per_machine).
int emit_all_reduce(PlanBuilder& builder, const std::vector<ParameterSpec>& parameters,
                    const std::vector<std::string>& names, int rank, int num_ranks,
                    int ranks_per_machine, std::vector<int> deps);

// Optimizer step over every parameter of the plan, after `deps`.
int emit_optimizer_step(PlanBuilder& builder, const std::vector<ParameterSpec>& parameters,
                        std::vector<int> deps);

// Data parallel: all-reduce of every parameter's gradient after `gradient_ops` (as
// emit_all_reduce), then the optimizer step.
void emit_all_reduce_and_step(PlanBuilder& builder, const std::vector<ParameterSpec>& parameters,
                              int rank, int num_ranks, int ranks_per_machine,
                              std::vector<int> gradient_ops);

}  // namespace gnnbed
