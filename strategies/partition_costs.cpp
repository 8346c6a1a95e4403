#include "strategies/partition_costs.hpp"

#include <cmath>

#include "workloads/common/least_squares.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"

namespace gnnbed {
namespace {

// How strongly the fit keeps to the default model's proportions, per term, in units of the
// samples' own column norms. Parts measured in one run are nearly the same shape, so some
// directions of the coefficients are barely resolved, and measured times differ between ranks by
// more than their shapes do; there the fit keeps the default's proportions instead of an
// arbitrary corner of the non-negative solutions (a halo-only model, say, which would make a
// one-node part look cheapest). The pull costs a few percent of misfit on exact samples of
// distinct shapes, below what per-rank times are measured to.
constexpr double kPriorWeight = 1e-2;

// The shape of one part; `seen` (one entry per node, never equal to `stamp` beforehand) marks the
// halo nodes already counted.
PartitionShape shape_with(const Graph& structure, std::span<const NodeId> owned,
                          const NodePartition& partition, int part, std::vector<int>& seen,
                          int stamp) {
  PartitionShape shape;
  shape.vertices = static_cast<std::int64_t>(owned.size());
  for (const NodeId v : owned) {
    const auto neighbours = structure.in_neighbors(v);
    shape.edges += static_cast<std::int64_t>(neighbours.size());
    for (const NodeId u : neighbours) {
      int& mark = seen[static_cast<std::size_t>(u)];
      if (mark == stamp || partition.owner(u) == part) continue;
      mark = stamp;
      ++shape.remote_neighbours;
    }
  }
  return shape;
}

nlohmann::json sample_json(const PartitionCostSample& sample) {
  return {{"label", sample.label},
          {"vertices", sample.shape.vertices},
          {"edges", sample.shape.edges},
          {"remote_neighbours", sample.shape.remote_neighbours},
          {"seconds", sample.seconds}};
}

void append_samples(const nlohmann::json& costs, const std::string& origin,
                    std::vector<PartitionCostSample>& samples) {
  if (!costs.is_object() || !costs.contains("samples")) return;
  for (const nlohmann::json& object : costs.at("samples")) {
    PartitionCostSample sample;
    JsonFieldReader reader(object, "partition_costs.samples");
    reader.read("label", sample.label);
    reader.read("vertices", sample.shape.vertices);
    reader.read("edges", sample.shape.edges);
    reader.read("remote_neighbours", sample.shape.remote_neighbours);
    reader.read("seconds", sample.seconds);
    reader.finish();
    if (sample.label.empty()) sample.label = origin;
    samples.push_back(std::move(sample));
  }
}

}  // namespace

PartitionShape partition_shape(const Graph& structure, std::span<const NodeId> owned,
                               const NodePartition& partition, int part) {
  std::vector<int> seen(static_cast<std::size_t>(structure.num_nodes()), -1);
  return shape_with(structure, owned, partition, part, seen, part);
}

std::vector<PartitionShape> partition_shapes(const Graph& graph, const NodePartition& partition) {
  std::vector<std::vector<NodeId>> owned(static_cast<std::size_t>(partition.num_parts()));
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    owned[static_cast<std::size_t>(partition.owner(v))].push_back(v);
  }
  std::vector<int> seen(static_cast<std::size_t>(graph.num_nodes()), -1);
  std::vector<PartitionShape> shapes;
  for (int p = 0; p < partition.num_parts(); ++p) {
    shapes.push_back(shape_with(graph, owned[static_cast<std::size_t>(p)], partition, p, seen, p));
  }
  return shapes;
}

double PartitionCostModel::seconds(const PartitionShape& shape) const {
  return seconds_per_vertex * static_cast<double>(shape.vertices) +
         seconds_per_edge * static_cast<double>(shape.edges) +
         seconds_per_remote_neighbour * static_cast<double>(shape.remote_neighbours);
}

nlohmann::json PartitionCostModel::to_json() const {
  return {{"seconds_per_vertex", seconds_per_vertex},
          {"seconds_per_edge", seconds_per_edge},
          {"seconds_per_remote_neighbour", seconds_per_remote_neighbour},
          {"fitted_on_samples", samples}};
}

PartitionCostModel fit_partition_costs(std::span<const PartitionCostSample> samples) {
  if (samples.empty()) throw Error("partition cost fit: no samples");
  // Relative error: row i divided by its measured time, so that every target is 1.
  std::vector<std::vector<double>> columns(3);
  for (const PartitionCostSample& sample : samples) {
    if (!std::isfinite(sample.seconds) || sample.seconds <= 0) {
      throw Error("partition cost fit: sample '" + sample.label + "' has a time of " +
                  std::to_string(sample.seconds) + " s (must be positive and finite)");
    }
    columns[0].push_back(static_cast<double>(sample.shape.vertices) / sample.seconds);
    columns[1].push_back(static_cast<double>(sample.shape.edges) / sample.seconds);
    columns[2].push_back(static_cast<double>(sample.shape.remote_neighbours) / sample.seconds);
  }
  std::vector<double> targets(samples.size(), 1.0);
  // The default model, scaled to predict the samples as well as its proportions allow.
  const PartitionCostModel prior;
  const std::vector<double> proportions = {prior.seconds_per_vertex, prior.seconds_per_edge,
                                           prior.seconds_per_remote_neighbour};
  double predicted_dot_target = 0;
  double predicted_squared = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    double predicted = 0;
    for (std::size_t j = 0; j < columns.size(); ++j) predicted += columns[j][i] * proportions[j];
    predicted_dot_target += predicted;
    predicted_squared += predicted * predicted;
  }
  const double scale = predicted_squared > 0 ? predicted_dot_target / predicted_squared : 0;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    double norm_squared = 0;
    for (const double value : columns[j]) norm_squared += value * value;
    const double weight = std::sqrt(kPriorWeight * norm_squared);
    for (std::size_t k = 0; k < columns.size(); ++k) columns[k].push_back(k == j ? weight : 0);
    targets.push_back(weight * scale * proportions[j]);
  }
  const std::vector<double> x = fit_non_negative(columns, targets);
  if (x[0] <= 0 && x[1] <= 0 && x[2] <= 0) {
    throw Error("partition cost fit: no coefficient explains the " +
                std::to_string(samples.size()) + " measured times (are the parts empty?)");
  }
  PartitionCostModel model;
  model.seconds_per_vertex = x[0];
  model.seconds_per_edge = x[1];
  model.seconds_per_remote_neighbour = x[2];
  model.samples = static_cast<int>(samples.size());
  return model;
}

std::vector<PartitionCostSample> read_partition_cost_samples(const std::filesystem::path& path) {
  const nlohmann::json document = parse_json_file(path);
  const std::string origin = path.string();
  std::vector<PartitionCostSample> samples;
  try {
    if (document.is_object()) {
      if (document.contains("partition_costs")) {
        append_samples(document.at("partition_costs"), origin, samples);
      }
      if (document.contains("points")) {
        for (const nlohmann::json& point : document.at("points")) {
          if (point.contains("result") && point.at("result").contains("partition_costs")) {
            append_samples(point.at("result").at("partition_costs"), origin, samples);
          }
        }
      }
    }
  } catch (const ConfigError& error) {
    throw InputError(origin, 0, error.field(), error.problem());
  } catch (const nlohmann::json::exception& error) {
    throw InputError(origin, 0, "partition_costs", error.what());
  }
  if (samples.empty()) {
    throw InputError(origin, 0, "partition_costs",
                     "holds no partition cost samples (expected the result of a roc run, from "
                     "run_experiment or simulate)");
  }
  return samples;
}

nlohmann::json partition_costs_json(const std::optional<PartitionCostModel>& model,
                                    std::span<const PartitionCostSample> earlier,
                                    std::span<const PartitionCostSample> measured) {
  nlohmann::json samples = nlohmann::json::array();
  for (const PartitionCostSample& sample : earlier) samples.push_back(sample_json(sample));
  for (const PartitionCostSample& sample : measured) samples.push_back(sample_json(sample));
  nlohmann::json object = {{"samples", std::move(samples)}};
  if (model) {
    object["model"] = model->to_json();
    if (model->samples > 0) {
      nlohmann::json predicted = nlohmann::json::array();
      for (const PartitionCostSample& sample : measured) {
        predicted.push_back(model->seconds(sample.shape));
      }
      object["predicted_seconds"] = std::move(predicted);
    }
  }
  return object;
}

}  // namespace gnnbed
