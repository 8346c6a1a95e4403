#pragma once
// OGB's NumPy raw layout (ogbn-papers100M): raw/data.npz with num_nodes_list, edge_index (2 x E)
// and node_feat (N x F, optional), and raw/node-label.npz with node_label (N or N x 1, NaN for
// no label). load_ogb reads it where raw/data.npz exists; the splits stay CSV.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "workloads/features.hpp"
#include "workloads/graph.hpp"

namespace gnnbed {

struct OgbNpzContents {
  std::vector<std::int32_t> labels;  // -1: no label
  Graph graph;
  std::shared_ptr<const FeatureStore> features;  // null without node_feat
};

// OGB's rule for a label value in either layout: NaN or -1 is no label (-1); an integer in
// [0, 2^31 - 1) is a class; anything else is not a label (nullopt).
std::optional<std::int32_t> ogb_label(double value);

bool has_ogb_npz(const std::filesystem::path& raw);
OgbNpzContents read_ogb_npz(const std::filesystem::path& raw, bool symmetrize);

}  // namespace gnnbed
