#pragma once
// What is trained: the model's kind and size as the user configures it (ModelConfig) and, once the
// workload fixes the input and output widths, every layer's shape, parameters and FLOP count
// (ModelSpec). Engines and strategies agree on the model through ModelSpec alone.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnnbed {

enum class ModelKind {
  gcn,   // Kipf & Welling: h'_v = sum_{u in N(v) + v} h_u W / sqrt(d_u d_v) + b
  sage,  // GraphSAGE-mean: h'_v = h_v W_self + mean_{u in N(v)} h_u W_neigh + b
  // SGC (Wu et al., "Simplifying Graph Convolutional Networks", 2019; P3's "SGCN"): K rounds of
  // GCN propagation and one linear map, with no nonlinearity between, logits = A^K X W + b. The
  // map commutes with the propagation, so it is applied in the first layer, where it narrows the
  // features to the classes: layer 0 is h_v = sum_{u in N(v) + v} x_u W / sqrt(d_u d_v), layers
  // 1..K-1 propagate only, and the last adds b. Hidden size does not apply.
  sgc,
  // GAT (Velickovic et al., ICLR 2018): per head k, z = h W_k, e_uv = LeakyReLU_0.2(a_dst_k . z_v +
  // a_src_k . z_u) over v's in-edges and itself, alpha = softmax_u(e_uv), h'_v = sum_u alpha_uv
  // z_u; hidden layers concatenate `heads` heads of `hidden` columns, the last has one head of the
  // classes. ReLU between layers (the paper's ELU is not an op here).
  gat,
};

struct ModelConfig {
  std::string kind = "gcn";  // "gcn", "sage", "sgc" or "gat"
  int num_layers = 2;        // SGC: the propagation steps K
  int hidden = 16;           // width of every hidden layer (not SGC's; GAT's per head)
  double dropout = 0.5;      // before every layer, as Kipf & Welling apply it
  int heads = 8;             // GAT's attention heads in hidden layers
};

ModelConfig model_config_from_json(const nlohmann::json& object, const ModelConfig& defaults,
                                   const std::string& where);
nlohmann::json to_json(const ModelConfig& config);

struct LayerShape {
  int in_dim = 0;
  int out_dim = 0;    // GAT: heads x head width
  bool relu = false;  // ReLU after the layer (all but the last; none in SGC)
  bool bias = true;   // adds a bias (every layer; SGC's last only)
  int heads = 1;      // GAT's attention heads
  int head_dim() const { return out_dim / heads; }
};

struct ParameterShape {
  std::string name;  // "W", "W_self", "W_neigh", "a_src", "a_dst", "b"
  int rows = 0;
  int cols = 0;
  bool is_weight = false;  // weight matrices take weight decay; biases do not
  // The rows index the layer's input columns (W, W_self, W_neigh; not GAT's attention vectors):
  // P3 splits these by feature column in the first layer.
  bool input_rows = false;
};

class ModelSpec {
 public:
  // Validates the config (ConfigError naming the field) and resolves the layer widths.
  ModelSpec(const ModelConfig& config, int input_dim, int num_classes);

  ModelKind kind() const { return kind_; }
  double dropout() const { return dropout_; }
  int num_layers() const { return static_cast<int>(layers_.size()); }
  const LayerShape& layer(int l) const { return layers_[static_cast<std::size_t>(l)]; }
  // Layer l's weights, then its bias when it has one (LayerShape::bias). SGC's middle layers have
  // none.
  std::vector<ParameterShape> parameters(int l) const;
  // The number of weight matrices of layer l (parameters(l) less the bias; GAT's attention vectors
  // count).
  int num_weights(int l) const;
  std::int64_t num_parameters() const;

  // The fraction of the input features' groups of kDropoutGroupEntries entries that hold a
  // nonzero (FeatureStore::nonzero_group_fraction): the first layer's dropout hashes only those.
  double input_nonzero_group_fraction() const { return input_nonzero_group_fraction_; }
  // ConfigError unless 0 <= fraction <= 1.
  void set_input_nonzero_group_fraction(double fraction);

  // Whether the first layer takes sparse input rows as they are (GnnLayer::forward_sparse: GCN,
  // SGC and GraphSAGE multiply them by a weight first); GAT's needs them dense.
  bool first_layer_takes_sparse_input() const { return kind_ != ModelKind::gat; }

  // True when layer l multiplies by its weights before aggregating (out < in): the kernels
  // aggregate at the narrower width. `in_width` >= 0 is the input width of a partial layer (a
  // slice of the input columns), which decides the order for it. False for a layer without
  // weights.
  // GAT always transforms first: its attention scores need the transformed rows.
  bool transforms_first(int l, int in_width = -1) const {
    return kind_ == ModelKind::gat ||
           (num_weights(l) > 0 && layer(l).out_dim < (in_width >= 0 ? in_width : layer(l).in_dim));
  }
  // Whether layers aggregate with GCN's symmetric normalisation (1 / sqrt(d_u d_v), self loops),
  // which needs every node's degree in the whole graph.
  bool gcn_normalised() const { return kind_ == ModelKind::gcn || kind_ == ModelKind::sgc; }

  // A layer's work. Multiply-adds count as 2 FLOPs, split into dense weight products and sparse
  // aggregation (one multiply-add per edge and column; GCN adds a self loop per destination).
  // `sparse_entries` counts the aggregation's entries the layer goes through (read and weighed;
  // on a backend that stores the weights also built, and transposed for the backward): work per
  // edge whatever the width, which on a GPU costs more than the multiply-adds (an index load and a
  // row gathered per entry).
  // `memory_bytes` is what the dense products stream: their input rows read and output rows
  // written (the weights stay in cache). A narrow product (few input or output columns) does few
  // FLOPs per byte and is bound by these bytes rather than by its FLOPs.
  // `gathered_rows` are the rows the aggregation reads (forward) or adds into (backward) where
  // the block's indices point, one row of the aggregated width per entry, and
  // `gathered_table_bytes` the table they lie in (the block's source rows at that width). Where the
  // table does not fit a rank's cache, most of them come from main memory
  // (sim/cost_model/cost_model.hpp).
  struct LayerWork {
    double dense_flops = 0;
    double sparse_flops = 0;
    double memory_bytes = 0;
    double sparse_entries = 0;
    double gathered_rows = 0;
    double gathered_table_bytes = 0;
    double total_flops() const { return dense_flops + sparse_flops; }
  };
  // `in_width` < in_dim counts a partial layer over that many input columns (P3's first layer
  // on one rank's feature slice); -1 means the whole input.
  LayerWork forward_work(int l, std::int64_t num_dst, std::int64_t num_src, std::int64_t num_edges,
                         int in_width = -1) const;
  // Weight gradients always; the input gradient (dense products and, when aggregating first,
  // the transposed aggregation) only with `input_grad` (every layer but the first).
  LayerWork backward_work(int l, std::int64_t num_dst, std::int64_t num_src, std::int64_t num_edges,
                          bool input_grad, int in_width = -1) const;

  // The first layer's work on sparse input rows (GnnLayer::forward_sparse: each weight product
  // first, whatever the widths, then the aggregation at the output width). A product goes through
  // the stored entries, each a multiply-add per output column with an index and a weight row read,
  // as an aggregation's product does: sparse FLOPs (the entries gone through per entry,
  // `sparse_entries`, are the aggregation's, and in the backward the inputs' too). `src_entries`:
  // the stored entries of the source rows; `dst_entries`: of the destinations' own rows
  // (GraphSAGE's self term). The backward computes the weight gradients only (transpose(x) times
  // the gradient): the products again, each over its input's transpose, and the transposed
  // aggregation.
  LayerWork sparse_input_work(std::int64_t num_dst, std::int64_t num_src, std::int64_t num_edges,
                              std::int64_t src_entries, std::int64_t dst_entries,
                              bool backward) const;

  // A GAT layer split at its sums over ranks (P3's first layer, SyncedLayer): the forward's first
  // step (the product and the partial scores) and second (the attention and aggregation), and the
  // backward's first (the coefficients' gradients through the softmax) and second (the score
  // gradients into z, then the weight gradients). Each pair adds up to forward_work or
  // backward_work.
  struct SplitWork {
    LayerWork to_sync;
    LayerWork from_sync;
  };
  SplitWork split_forward_work(int l, std::int64_t num_dst, std::int64_t num_src,
                               std::int64_t num_edges, int in_width = -1) const;
  SplitWork split_backward_work(int l, std::int64_t num_dst, std::int64_t num_src,
                                std::int64_t num_edges, bool input_grad, int in_width = -1) const;

 private:
  ModelKind kind_;
  double dropout_;
  std::vector<LayerShape> layers_;
  double input_nonzero_group_fraction_ = 1.0;
};

}  // namespace gnnbed
