// The "metis" partitioner: multilevel k-way partitioning (METIS_PartGraphKway), minimising the
// edge cut under METIS's default 3 % imbalance tolerance.
#include <metis.h>

#include <limits>

#include "workloads/common/errors.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

constexpr const char* kField = "partitioner.metis";

// METIS wants an undirected graph without self loops, as CSR over idx_t.
struct MetisGraph {
  std::vector<idx_t> xadj;
  std::vector<idx_t> adjncy;
};

MetisGraph metis_input(const Graph& graph) {
  const Graph* symmetric = &graph;
  Graph symmetrized;
  if (!graph.is_symmetric()) {
    // Every in-edge u -> v becomes the undirected edge {u, v}.
    std::vector<NodeId> destinations(graph.sources().size());
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::int64_t v = 0; v < graph.num_nodes(); ++v) {
      const auto row = static_cast<std::size_t>(v);
      std::fill(destinations.begin() + graph.offsets()[row],
                destinations.begin() + graph.offsets()[row + 1], static_cast<NodeId>(v));
    }
    EdgeListOptions options;
    options.symmetrize = true;
    options.drop_self_loops = true;
    options.deduplicate = true;
    symmetrized =
        build_graph(graph.num_nodes(), graph.sources(), destinations, options, "metis input");
    symmetric = &symmetrized;
  }
  const auto n = static_cast<std::size_t>(symmetric->num_nodes());
  std::vector<EdgeIndex> kept(n + 1, 0);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < symmetric->num_nodes(); ++v) {
    EdgeIndex count = 0;
    for (const NodeId u : symmetric->in_neighbors(static_cast<NodeId>(v))) count += u != v;
    kept[static_cast<std::size_t>(v) + 1] = count;
  }
  for (std::size_t v = 0; v < n; ++v) kept[v + 1] += kept[v];
  if (kept[n] > std::numeric_limits<idx_t>::max()) {
    throw ConfigError(kField, "the graph has " + std::to_string(kept[n]) +
                                  " adjacency entries but this METIS build has " +
                                  std::to_string(sizeof(idx_t) * 8) + "-bit indices (at most " +
                                  std::to_string(std::numeric_limits<idx_t>::max()) + ")");
  }
  MetisGraph result;
  result.xadj.assign(kept.begin(), kept.end());
  result.adjncy.resize(static_cast<std::size_t>(kept[n]));
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t v = 0; v < symmetric->num_nodes(); ++v) {
    auto out = static_cast<std::size_t>(kept[static_cast<std::size_t>(v)]);
    for (const NodeId u : symmetric->in_neighbors(static_cast<NodeId>(v))) {
      if (u != v) result.adjncy[out++] = u;
    }
  }
  return result;
}

class MetisPartitioner final : public Partitioner {
 public:
  std::string name() const override { return "metis"; }

  NodePartition partition(const Graph& graph, int num_parts, std::uint64_t seed) const override {
    require(num_parts >= 1, "num_parts", "must be at least 1, got " + std::to_string(num_parts));
    const std::int64_t n = graph.num_nodes();
    // METIS rejects one part; the answer needs no partitioner anyway.
    if (num_parts == 1 || n == 0) {
      return NodePartition::explicit_owners(num_parts,
                                            std::vector<std::int32_t>(static_cast<std::size_t>(n)));
    }
    MetisGraph input = metis_input(graph);

    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % std::numeric_limits<idx_t>::max());
    auto num_vertices = static_cast<idx_t>(n);
    idx_t num_constraints = 1;
    auto parts = static_cast<idx_t>(num_parts);
    idx_t edge_cut = 0;
    std::vector<idx_t> owners(static_cast<std::size_t>(n));
    const int status = METIS_PartGraphKway(&num_vertices, &num_constraints, input.xadj.data(),
                                           input.adjncy.data(), nullptr, nullptr, nullptr, &parts,
                                           nullptr, nullptr, options, &edge_cut, owners.data());
    const std::string what = "METIS_PartGraphKway on " + std::to_string(n) + " nodes, " +
                             std::to_string(input.adjncy.size()) + " adjacency entries, " +
                             std::to_string(num_parts) + " parts";
    switch (status) {
      case METIS_OK:
        break;
      case METIS_ERROR_INPUT:
        throw ConfigError(kField, what + " rejected its input");
      case METIS_ERROR_MEMORY:
        throw SystemError(what + " ran out of memory");
      default:
        throw Error(what + " failed (METIS status " + std::to_string(status) + ")");
    }
    return NodePartition::explicit_owners(num_parts,
                                          std::vector<std::int32_t>(owners.begin(), owners.end()));
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_metis_partitioner() {
  return std::make_unique<MetisPartitioner>();
}

}  // namespace gnnbed
