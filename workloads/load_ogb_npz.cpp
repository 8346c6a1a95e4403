#include "workloads/load_ogb_npz.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/npz_reader.hpp"

namespace gnnbed {
namespace {

constexpr const char* kGraphArchive = "data.npz";
constexpr const char* kLabelArchive = "node-label.npz";

std::int64_t read_num_nodes(NpzArchive& archive) {
  const std::string where = npz_location(archive.file(), "num_nodes_list");
  std::vector<std::int64_t> counts;
  archive.read_integers("num_nodes_list", [&](std::span<const std::int64_t> values) {
    counts.insert(counts.end(), values.begin(), values.end());
  });
  if (counts.size() != 1) {
    throw InputError(
        where, 0, "num_nodes_list",
        std::to_string(counts.size()) + " graphs; only single-graph datasets are supported");
  }
  check_node_count(counts.front(), where, "num_nodes_list");
  require_memory_for(counts.front() * kLeastBytesPerNode,
                     std::to_string(counts.front()) + " nodes would", where, 0, "num_nodes_list");
  return counts.front();
}

// count * unit_bytes, saturated at the int64 maximum rather than overflowing: an array's element
// count is bounded only by the size its member declares, which a deflated member can overstate.
std::int64_t bytes_for(std::int64_t count, std::int64_t unit_bytes) {
  const std::int64_t most = std::numeric_limits<std::int64_t>::max();
  return count > most / unit_bytes ? most : count * unit_bytes;
}

// edge_index is 2 x E: in C order every source, then every destination; in Fortran order the
// pairs one after the other. It is streamed into the CSR twice (build_graph's two passes: count
// the rows, then fill them), so the edges are never held as a list. Edge counts and element
// positions are 64-bit (5.5 B edges are 11 B elements); ids are checked before they narrow to
// NodeId, on both passes.
Graph read_edges(NpzArchive& archive, std::int64_t num_nodes, bool symmetrize) {
  const std::string where = npz_location(archive.file(), "edge_index");
  const NpyHeader header = archive.header("edge_index");
  if (header.shape.size() != 2 || header.shape[0] != 2) {
    throw InputError(where, 0, "shape", "must be (2, number of edges)");
  }
  const std::int64_t edges = header.shape[1];
  if (edges == 0) throw InputError(where, 0, "shape", "holds no edges");
  // The CSR's sources: an entry per edge, two when symmetrizing (less the self loops and, once
  // built, the duplicates); nothing else grows with the edges.
  const std::int64_t entries_per_edge = symmetrize ? 2 : 1;
  require_memory_for(bytes_for(edges, entries_per_edge * static_cast<std::int64_t>(sizeof(NodeId))),
                     std::to_string(edges) + " edges would", where, 0, "edge_index");
  // The element of edge `edge`'s source (row 0) or destination (row 1), for errors.
  auto element = [&](std::int64_t edge, std::int64_t row) {
    return header.fortran_order ? 2 * edge + row : row * edges + edge;
  };
  auto node_id = [&](std::int64_t id, std::int64_t edge, std::int64_t row) {
    if (id < 0 || id >= num_nodes) {
      throw InputError(where, 0, "edge_index",
                       "node id " + std::to_string(id) + " at element " +
                           std::to_string(element(edge, row)) + " is outside [0, " +
                           std::to_string(num_nodes) + ") (num_nodes_list)");
    }
    return static_cast<NodeId>(id);
  };
  // The build gets the edges in batches far larger than the reader's chunks, so that its parallel
  // loops run long enough to repay starting their threads.
  constexpr std::size_t kBatchEdges = std::size_t{1} << 20;
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  src.reserve(kBatchEdges);
  dst.reserve(kBatchEdges);
  const EdgeStream stream = [&](const EdgeChunkVisitor& visit) {
    auto hand_over = [&] {
      visit(src, dst);
      src.clear();
      dst.clear();
    };
    std::int64_t edge = 0;
    archive.read_integer_columns("edge_index", [&](std::span<const std::int64_t> sources,
                                                   std::span<const std::int64_t> targets) {
      for (std::size_t i = 0; i < sources.size(); ++i, ++edge) {
        src.push_back(node_id(sources[i], edge, 0));
        dst.push_back(node_id(targets[i], edge, 1));
      }
      if (src.size() >= kBatchEdges) hand_over();
    });
    hand_over();
  };
  EdgeListOptions options;
  options.symmetrize = symmetrize;
  return build_graph(num_nodes, stream, options, where);
}

std::vector<std::int32_t> read_labels(NpzArchive& archive, std::int64_t num_nodes) {
  const std::string where = npz_location(archive.file(), "node_label");
  const NpyHeader header = archive.header("node_label");
  if (header.elements() != num_nodes || header.shape.empty() ||
      (header.shape.size() == 2 && header.shape[1] != 1) || header.shape.size() > 2) {
    throw InputError(where, 0, "shape",
                     "must be (" + std::to_string(num_nodes) + ",) or (" +
                         std::to_string(num_nodes) + ", 1): a label per node of num_nodes_list");
  }
  std::vector<std::int32_t> labels;
  labels.reserve(static_cast<std::size_t>(num_nodes));
  archive.read_reals("node_label", [&](std::span<const double> values) {
    for (const double value : values) {
      const std::optional<std::int32_t> label = ogb_label(value);
      if (!label) {
        throw InputError(where, 0, "node_label",
                         "label " + std::to_string(value) + " of node " +
                             std::to_string(labels.size()) + " is not a class number (or NaN)");
      }
      labels.push_back(*label);
    }
  });
  return labels;
}

std::shared_ptr<const FeatureStore> read_features(NpzArchive& archive, std::int64_t num_nodes) {
  const std::string where = npz_location(archive.file(), "node_feat");
  const NpyHeader header = archive.header("node_feat");
  if (header.shape.size() != 2 || header.shape[0] != num_nodes || header.shape[1] < 1 ||
      header.shape[1] > std::numeric_limits<int>::max()) {
    throw InputError(where, 0, "shape",
                     "must be (" + std::to_string(num_nodes) + ", features): a row per node");
  }
  if (header.fortran_order) {
    throw InputError(where, 0, "fortran_order", "is True; save the features in C (row) order");
  }
  require_memory_for(bytes_for(header.elements(), static_cast<std::int64_t>(sizeof(float))),
                     std::to_string(num_nodes) + " nodes of " + std::to_string(header.shape[1]) +
                         " features would",
                     where, 0, "node_feat");
  std::vector<float> values;
  values.reserve(static_cast<std::size_t>(header.elements()));
  archive.read_reals("node_feat", [&](std::span<const double> chunk) {
    for (const double v : chunk) values.push_back(static_cast<float>(v));
  });
  return std::make_shared<const StoredFeatures>(num_nodes, static_cast<int>(header.shape[1]),
                                                SharedArray(std::move(values)));
}

}  // namespace

std::optional<std::int32_t> ogb_label(double value) {
  if (std::isnan(value)) return -1;
  if (value != std::floor(value) || value < -1 ||
      value >= std::numeric_limits<std::int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(value);
}

bool has_ogb_npz(const std::filesystem::path& raw) {
  std::error_code ec;
  return std::filesystem::is_regular_file(raw / kGraphArchive, ec);
}

OgbNpzContents read_ogb_npz(const std::filesystem::path& raw, bool symmetrize) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(raw / kLabelArchive, ec)) {
    throw InputError((raw / kLabelArchive).string(), 0, "",
                     "no such file (the labels of raw/data.npz's nodes)");
  }
  NpzArchive graph_archive(raw / kGraphArchive);
  NpzArchive label_archive(raw / kLabelArchive);
  OgbNpzContents contents;
  const std::int64_t num_nodes = read_num_nodes(graph_archive);
  contents.labels = read_labels(label_archive, num_nodes);
  contents.graph = read_edges(graph_archive, num_nodes, symmetrize);
  if (graph_archive.contains("node_feat")) {
    contents.features = read_features(graph_archive, num_nodes);
  }
  return contents;
}

}  // namespace gnnbed
