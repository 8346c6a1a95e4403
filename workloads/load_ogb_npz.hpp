#pragma once
// OGB's NumPy raw layout (ogbn-papers100M): raw/data.npz with num_nodes_list, edge_index (2 x E)
// and node_feat (N x F, optional), and raw/node-label.npz with node_label (N or N x 1, NaN for
// no label). load_ogb reads it where raw/data.npz exists; the splits stay CSV.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "workloads/features.hpp"
#include "workloads/graph.hpp"

namespace gnnbed {

struct OgbNpzContents {
  std::vector<std::int32_t> labels;  // -1: no label
  Graph graph;
  std::shared_ptr<const FeatureStore> features;  // null without node_feat
};

bool has_ogb_npz(const std::filesystem::path& raw);
OgbNpzContents read_ogb_npz(const std::filesystem::path& raw, bool symmetrize);

}  // namespace gnnbed
