#pragma once
// Workloads sized like the P3 paper's datasets (R-MAT structure, generated labels and features),
// with a scale factor applied to node, edge and split counts (average degree is kept). Every
// preset runs at the paper's full size: products in memory, the billion-edge graphs either
// implicit (in-neighbours computed on demand) or streamed once to a cached binary file
// (GraphStorage, docs/large_graphs.md).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/common/progress.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

// How a preset's structure is generated. symmetric_rmat: generate_rmat (undirected, distinct
// edges, built in memory); rmat_rows: R-MAT drawn row by row (rmat_rows.hpp: directed multigraph,
// computable on demand), for graphs too large to build in memory.
enum class GraphModel { symmetric_rmat, rmat_rows };

// Where a generated graph's in-neighbour lists live: computed into memory; implicit (computed on
// demand, rmat_rows only); a binary file in a cache directory, written once (streaming, O(nodes)
// memory) and memory-mapped; or auto: memory up to kAutoMemoryEdges CSR entries, beyond that
// implicit where the model allows it.
enum class GraphStorage { automatic, memory, implicit, file };
inline constexpr std::int64_t kAutoMemoryEdges = std::int64_t{1} << 28;

struct PresetSpec {
  std::string name;
  std::string modelled_on;  // the real dataset and where its numbers come from
  std::int64_t num_nodes;
  // Edges as the paper counts them; the CSR holds both directions (2x as many entries), in
  // expectation for rmat_rows.
  std::int64_t num_undirected_edges;
  int feature_dim;
  int num_classes;
  std::int64_t num_train, num_val, num_test;
  // R-MAT quadrant probabilities of the structure (d = 1 - a - b - c).
  double rmat_a = 0.57, rmat_b = 0.19, rmat_c = 0.19;
  GraphModel model = GraphModel::symmetric_rmat;
  // 0: labels independent of the structure (every edge where R-MAT puts it). Otherwise the
  // classes are communities of the graph and this share of its edges joins two nodes of one
  // class (the real graph's edge homophily), which gives partitioners such as METIS the
  // locality of the real graph (symmetric_rmat only).
  double edge_homophily = 0;
};

const std::vector<PresetSpec>& presets();

// Throws ConfigError listing the known names when `name` is not one.
const PresetSpec& find_preset(std::string_view name);

// The counts of `spec` multiplied by `scale` (0 < scale <= 1 normally; at least 1 of each).
PresetSpec scaled(const PresetSpec& spec, double scale);

// CSR entries the preset's graph holds (expected, for rmat_rows).
std::int64_t preset_csr_entries(const PresetSpec& spec);

// The storage `automatic` resolves to for `spec` (others are returned as they are).
GraphStorage resolve_storage(const PresetSpec& spec, GraphStorage storage);

struct PresetOptions {
  GraphStorage storage = GraphStorage::automatic;
  // GraphStorage::file: where generated files are kept, one per parameter set (the file name is a
  // digest of every parameter), so that a second run maps the file instead of generating it.
  // GraphStorage::implicit: where the graph's offsets are kept the same way, if set.
  std::string cache_directory;
  // Long steps (offsets of a billion-node graph, writing a file) report their progress.
  StepProgress progress;
};

// R-MAT structure, uniform labels (the structure's communities where the preset has an edge
// homophily) and class-conditional generated features (so that training on a preset learns
// something), a seeded random split.
Dataset generate_preset(const PresetSpec& spec, std::uint64_t seed,
                        const PresetOptions& options = {});

// The cached file generate_preset uses for GraphStorage::file (it may not exist yet).
std::string preset_cache_file(const PresetSpec& spec, std::uint64_t seed,
                              const std::string& cache_directory);

}  // namespace gnnbed
