#include "strategies/config/model_spec.hpp"

#include <algorithm>

#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"

namespace gnnbed {
namespace {

// GAT's work per edge and head beyond the aggregation: the two scores' sum, LeakyReLU, exponential,
// the softmax's sum and division.
constexpr double kGatEdgeFlopsPerHead = 5.0;
// A stored entry of sparse input rows: its column (int32) and value (float32).
constexpr std::int64_t kSparseEntryBytesRead = 8;

// GAT's scores: one per row and head from each side, a multiply-add per column.
double gat_score_flops(std::int64_t num_dst, std::int64_t num_src, int out_dim) {
  return 2.0 * static_cast<double>(num_src + num_dst) * out_dim;
}

}  // namespace

ModelConfig model_config_from_json(const nlohmann::json& object, const ModelConfig& defaults,
                                   const std::string& where) {
  ModelConfig config = defaults;
  JsonFieldReader reader(object, where);
  reader.read("kind", config.kind);
  reader.read("num_layers", config.num_layers);
  reader.read("hidden", config.hidden);
  reader.read("dropout", config.dropout);
  reader.read("heads", config.heads);
  reader.finish();
  return config;
}

nlohmann::json to_json(const ModelConfig& config) {
  return {{"kind", config.kind},
          {"num_layers", config.num_layers},
          {"hidden", config.hidden},
          {"dropout", config.dropout},
          {"heads", config.heads}};
}

ModelSpec::ModelSpec(const ModelConfig& config, int input_dim, int num_classes)
    : dropout_(config.dropout) {
  require_one_of("model.kind", config.kind, {"gcn", "sage", "sgc", "gat"});
  kind_ = config.kind == "gcn"    ? ModelKind::gcn
          : config.kind == "sage" ? ModelKind::sage
          : config.kind == "sgc"  ? ModelKind::sgc
                                  : ModelKind::gat;
  require(config.heads >= 1, "model.heads", "must be at least 1");
  require(config.num_layers >= 1, "model.num_layers", "must be at least 1");
  require(config.hidden >= 1, "model.hidden", "must be at least 1");
  require(config.dropout >= 0 && config.dropout < 1, "model.dropout", "must lie in [0, 1)");
  require(input_dim >= 1, "workload.features", "the model needs node features (dimension >= 1)");
  require(num_classes >= 2, "workload.num_classes", "the model needs at least 2 classes");
  for (int l = 0; l < config.num_layers; ++l) {
    const bool last = l == config.num_layers - 1;
    if (kind_ == ModelKind::sgc) {
      layers_.push_back({l == 0 ? input_dim : num_classes, num_classes, false, last});
    } else if (kind_ == ModelKind::gat) {
      const int width = config.hidden * config.heads;
      layers_.push_back({l == 0 ? input_dim : width, last ? num_classes : width, !last, true,
                         last ? 1 : config.heads});
    } else {
      layers_.push_back(
          {l == 0 ? input_dim : config.hidden, last ? num_classes : config.hidden, !last, true});
    }
  }
}

std::vector<ParameterShape> ModelSpec::parameters(int l) const {
  const LayerShape& shape = layer(l);
  std::vector<ParameterShape> shapes;
  if (kind_ == ModelKind::sage) {
    shapes.push_back({"W_self", shape.in_dim, shape.out_dim, true, true});
    shapes.push_back({"W_neigh", shape.in_dim, shape.out_dim, true, true});
  } else if (kind_ == ModelKind::gat) {
    shapes.push_back({"W", shape.in_dim, shape.out_dim, true, true});
    shapes.push_back({"a_src", shape.heads, shape.head_dim(), true, false});
    shapes.push_back({"a_dst", shape.heads, shape.head_dim(), true, false});
  } else if (kind_ == ModelKind::gcn || l == 0) {
    shapes.push_back({"W", shape.in_dim, shape.out_dim, true, true});
  }
  if (shape.bias) shapes.push_back({"b", 1, shape.out_dim, false, false});
  return shapes;
}

int ModelSpec::num_weights(int l) const {
  return static_cast<int>(parameters(l).size()) - (layer(l).bias ? 1 : 0);
}

std::int64_t ModelSpec::num_parameters() const {
  std::int64_t total = 0;
  for (int l = 0; l < num_layers(); ++l) {
    for (const auto& p : parameters(l)) total += static_cast<std::int64_t>(p.rows) * p.cols;
  }
  return total;
}

void ModelSpec::set_input_nonzero_group_fraction(double fraction) {
  require(fraction >= 0 && fraction <= 1, "features",
          "nonzero group fraction must be in [0, 1], not " + std::to_string(fraction));
  input_nonzero_group_fraction_ = fraction;
}

ModelSpec::LayerWork ModelSpec::forward_work(int l, std::int64_t num_dst, std::int64_t num_src,
                                             std::int64_t num_edges, int in_width) const {
  const double in = in_width >= 0 ? in_width : layer(l).in_dim;
  const double out = layer(l).out_dim;
  const bool transform_first = transforms_first(l, in_width);
  const double width = transform_first ? out : in;
  // The neighbour transform runs over every source row when it comes first, else over the
  // aggregated destination rows.
  const double neighbour_rows = static_cast<double>(transform_first ? num_src : num_dst);
  // GraphSAGE also transforms the destinations' own rows; SGC's propagation-only layers transform
  // none.
  const double transformed_rows = kind_ == ModelKind::sage
                                      ? neighbour_rows + static_cast<double>(num_dst)
                                      : (num_weights(l) > 0 ? neighbour_rows : 0.0);
  LayerWork work;
  work.dense_flops = 2.0 * transformed_rows * in * out;
  work.memory_bytes = static_cast<double>(sizeof(float)) * transformed_rows * (in + out);
  // GCN, SGC and GAT add a self loop per destination.
  const bool self_loops = kind_ != ModelKind::sage;
  const double aggregated =
      static_cast<double>(num_edges) + (self_loops ? static_cast<double>(num_dst) : 0.0);
  work.sparse_flops = 2.0 * aggregated * width;
  work.sparse_entries = aggregated;
  work.gathered_rows = aggregated;
  work.gathered_table_bytes =
      static_cast<double>(sizeof(float)) * static_cast<double>(num_src) * width;
  if (kind_ == ModelKind::gat) {
    // Attention: a score per row and head from each side (a multiply-add per column), then per
    // edge and head the sum, LeakyReLU, exponential, softmax sum and division.
    work.sparse_flops += gat_score_flops(num_dst, num_src, layer(l).out_dim) +
                         kGatEdgeFlopsPerHead * aggregated * layer(l).heads;
  }
  return work;
}

ModelSpec::LayerWork ModelSpec::backward_work(int l, std::int64_t num_dst, std::int64_t num_src,
                                              std::int64_t num_edges, bool input_grad,
                                              int in_width) const {
  const LayerWork forward = forward_work(l, num_dst, num_src, num_edges, in_width);
  // The weight gradient streams the forward's rows again (inputs and output gradients); the input
  // gradient as many more (output gradients read, input gradients written).
  const double products = input_grad ? 2.0 : 1.0;
  LayerWork work;
  work.dense_flops = products * forward.dense_flops;
  work.memory_bytes = products * forward.memory_bytes;
  // Transforming first, the transposed aggregation feeds the weight gradient; aggregating first,
  // it only carries the input gradient. GAT's backward goes through the attention too (the
  // gradients of the coefficients, the softmax and the scores): about twice its forward.
  const bool aggregates = transforms_first(l, in_width) || input_grad;
  const double passes = kind_ == ModelKind::gat ? 2.0 : (aggregates ? 1.0 : 0.0);
  work.sparse_flops = passes * forward.sparse_flops;
  work.sparse_entries = passes * forward.sparse_entries;
  work.gathered_rows = passes * forward.gathered_rows;
  work.gathered_table_bytes = passes > 0 ? forward.gathered_table_bytes : 0.0;
  return work;
}

ModelSpec::LayerWork ModelSpec::sparse_input_work(std::int64_t num_dst, std::int64_t num_src,
                                                  std::int64_t num_edges, std::int64_t src_entries,
                                                  std::int64_t dst_entries, bool backward) const {
  if (!first_layer_takes_sparse_input()) throw Error("GAT's first layer takes dense rows only");
  const double out = layer(0).out_dim;
  const bool sage = kind_ == ModelKind::sage;
  const double products =
      static_cast<double>(src_entries) + (sage ? static_cast<double>(dst_entries) : 0.0);
  const double product_rows =
      static_cast<double>(num_src) + (sage ? static_cast<double>(num_dst) : 0.0);
  const double aggregated =
      static_cast<double>(num_edges) + (sage ? 0.0 : static_cast<double>(num_dst));
  LayerWork work;
  work.sparse_flops = 2.0 * (products + aggregated) * out;
  // Entries gone through per entry: the aggregation's, and in the backward each input's, whose
  // transposed product visits them by output row. A forward product only reads its entries, which
  // its FLOPs count.
  work.sparse_entries = aggregated + (backward ? products : 0.0);
  work.gathered_rows = aggregated;
  work.gathered_table_bytes =
      static_cast<double>(sizeof(float)) * static_cast<double>(num_src) * out;
  // The products read their entries and write their output rows.
  work.memory_bytes = static_cast<double>(kSparseEntryBytesRead) * products +
                      static_cast<double>(sizeof(float)) * product_rows * out;
  return work;
}

ModelSpec::SplitWork ModelSpec::split_forward_work(int l, std::int64_t num_dst,
                                                   std::int64_t num_src, std::int64_t num_edges,
                                                   int in_width) const {
  if (kind_ != ModelKind::gat) throw Error("only GAT's layers split at a sum over ranks");
  const LayerWork whole = forward_work(l, num_dst, num_src, num_edges, in_width);
  const double scores = gat_score_flops(num_dst, num_src, layer(l).out_dim);
  return {{whole.dense_flops, scores, whole.memory_bytes, 0},
          {0, whole.sparse_flops - scores, 0, whole.sparse_entries, whole.gathered_rows,
           whole.gathered_table_bytes}};
}

ModelSpec::SplitWork ModelSpec::split_backward_work(int l, std::int64_t num_dst,
                                                    std::int64_t num_src, std::int64_t num_edges,
                                                    bool input_grad, int in_width) const {
  if (kind_ != ModelKind::gat) throw Error("only GAT's layers split at a sum over ranks");
  const LayerWork whole = backward_work(l, num_dst, num_src, num_edges, input_grad, in_width);
  // The second step sends the score gradients into z and the attention vectors (twice the
  // scores' forward work) and runs the weight products.
  const double scores = 2.0 * gat_score_flops(num_dst, num_src, layer(l).out_dim);
  return {{0, whole.sparse_flops - scores, 0, whole.sparse_entries, whole.gathered_rows,
           whole.gathered_table_bytes},
          {whole.dense_flops, scores, whole.memory_bytes, 0}};
}

}  // namespace gnnbed
