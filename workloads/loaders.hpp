#pragma once
// Readers for the on-disk layouts gnnbed accepts. Every reader validates what it reads and throws
// InputError naming the file, line and field at fault; nothing is returned half-read.
#include <filesystem>
#include <string>

#include "workloads/dataset.hpp"
#include "workloads/graph.hpp"

namespace gnnbed {

// The TSV layout of the bundled datasets under workloads/datasets/:
// meta.tsv (num_nodes, num_features, num_classes, feature_format), edges.tsv (each undirected
// edge once), features_sparse.tsv or features.bin, labels.tsv (-1 = none), split.tsv.
// Features come back stored; a dataset whose meta says `feature_format MISSING` comes back
// without features. Edges are symmetrized; self loops in the file are kept.
Dataset load_planetoid_tsv(const std::filesystem::path& directory);

struct EdgeListFileOptions {
  bool symmetrize = true;  // the file lists each undirected edge (in either direction)
  bool drop_self_loops = false;
  // Renumber the ids that occur in the file densely as 0..k-1, in increasing id order. Without it
  // the graph has max id + 1 nodes and ids that never occur are isolated nodes.
  bool relabel = false;
};

// A SNAP-style edge list: lines "src dst" separated by spaces or tabs, '#' or '%' comment lines,
// blank lines ignored. Structure only.
Graph load_edge_list(const std::filesystem::path& file, const EdgeListFileOptions& options);

struct OgbOptions {
  std::string split_name;  // directory under split/; empty = the only one there
  bool symmetrize = true;  // OGB lists each undirected edge once (add_inverse_edge)
};

// The OGB raw node-property layout: raw/edge.csv[.gz], raw/node-feat.csv[.gz] (optional),
// raw/node-label.csv[.gz], raw/num-node-list.csv[.gz] (optional; else max id + 1),
// split/<name>/{train,valid,test}.csv[.gz]. A label written as "nan" means unlabelled. Where
// raw/data.npz exists (ogbn-papers100M), the graph, features and labels come from it and
// raw/node-label.npz instead (load_ogb_npz.hpp).
Dataset load_ogb(const std::filesystem::path& directory, const OgbOptions& options);

}  // namespace gnnbed
