// Reader for SNAP-style edge lists ("src dst" per line). Lines are parsed in place (no per-line
// allocation), pieces of the file on OpenMP threads; ids are kept 32-bit unless relabelling needs
// the original 64-bit values.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/text_reader.hpp"
#include "workloads/loaders.hpp"

namespace gnnbed {
namespace {

constexpr std::int64_t kMaxNodeId = std::numeric_limits<NodeId>::max() - 1;

bool is_comment_or_blank(std::string_view line) {
  for (const char c : line) {
    if (c != ' ' && c != '\t') return c == '#' || c == '%';
  }
  return true;
}

std::int64_t read_id(FieldParser& fields, std::string_view field, bool relabel) {
  const std::int64_t id = fields.integer(field);
  if (id < 0) fields.fail(field, "node id " + std::to_string(id) + " is negative");
  if (!relabel && id > kMaxNodeId) {
    fields.fail(field, "node id " + std::to_string(id) + " does not fit 32-bit node ids (at most " +
                           std::to_string(kMaxNodeId) +
                           "); relabel the ids if fewer distinct ones occur");
  }
  return id;
}

// The edges of some lines of the file, and the largest id among them with the line it first
// occurs on (the line a node count too large for memory is blamed on).
struct EdgeLines {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  // With relabelling, the original ids (src, dst interleaved) until the dense numbering is known.
  std::vector<std::int64_t> original;
  std::int64_t max_id = -1;
  std::int64_t max_id_line = 0;

  void parse(LineChunk& chunk, bool relabel) {
    std::string_view line;
    while (chunk.next(line)) {
      if (is_comment_or_blank(line)) continue;
      FieldParser fields(chunk, line, ' ');
      const std::int64_t u = read_id(fields, "src", relabel);
      const std::int64_t v = read_id(fields, "dst", relabel);
      if (!fields.at_end()) {
        fields.fail("", "expected exactly 2 fields (src dst), got more: '" + std::string(line) +
                            "' (weighted or temporal edge lists are not supported)");
      }
      if (relabel) {
        original.push_back(u);
        original.push_back(v);
        continue;
      }
      src.push_back(static_cast<NodeId>(u));
      dst.push_back(static_cast<NodeId>(v));
      if (u > max_id || v > max_id) {
        max_id = std::max({max_id, u, v});
        max_id_line = chunk.line_number();
      }
    }
  }

  // Appends `later`, the lines after these, and empties it (keeping its memory for its next lines).
  void take(EdgeLines& later) {
    src.insert(src.end(), later.src.begin(), later.src.end());
    dst.insert(dst.end(), later.dst.begin(), later.dst.end());
    original.insert(original.end(), later.original.begin(), later.original.end());
    if (later.max_id > max_id) {
      max_id = later.max_id;
      max_id_line = later.max_id_line;
    }
    later.src.clear();
    later.dst.clear();
    later.original.clear();
    later.max_id = -1;
    later.max_id_line = 0;
  }
};

// Numbers the distinct ids of `original` (src, dst interleaved) 0..k-1 in increasing order and
// writes the edges with the new ids; returns k.
std::int64_t relabel_ids(std::vector<std::int64_t> original, std::vector<NodeId>& src,
                         std::vector<NodeId>& dst, const std::string& file) {
  const auto num_edges = static_cast<std::int64_t>(original.size() / 2);
  src.resize(static_cast<std::size_t>(num_edges));
  dst.resize(static_cast<std::size_t>(num_edges));
  const std::int64_t max_id = *std::max_element(original.begin(), original.end());
  std::vector<std::int64_t> distinct;
  std::vector<NodeId> table;
  // Ids no larger than a few times their count (the usual case): a direct table, no sorting.
  // Sparse ids (hashes, 64-bit ids): sorted distinct ids and binary search.
  const bool use_table = max_id < kMaxNodeId && max_id < 2 * num_edges;
  std::int64_t num_nodes = 0;
  if (use_table) {
    table.assign(static_cast<std::size_t>(max_id) + 1, 0);
    for (const std::int64_t id : original) table[static_cast<std::size_t>(id)] = 1;
    for (NodeId& entry : table) entry = entry != 0 ? static_cast<NodeId>(num_nodes++) : -1;
  } else {
    distinct = original;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    num_nodes = static_cast<std::int64_t>(distinct.size());
    check_node_count(num_nodes, file);
  }
  auto dense = [&](std::int64_t id) {
    if (use_table) return table[static_cast<std::size_t>(id)];
    return static_cast<NodeId>(std::lower_bound(distinct.begin(), distinct.end(), id) -
                               distinct.begin());
  };
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < num_edges; ++e) {
    const auto i = static_cast<std::size_t>(e);
    src[i] = dense(original[2 * i]);
    dst[i] = dense(original[2 * i + 1]);
  }
  return num_nodes;
}

}  // namespace

Graph load_edge_list(const std::filesystem::path& file, const EdgeListFileOptions& options) {
  LineReader reader(file);
  const bool relabel = options.relabel;
  EdgeLines edges;
  std::vector<EdgeLines> pieces(static_cast<std::size_t>(reader.max_pieces()));
  reader.parse_in_pieces(
      [&](int piece, LineChunk& chunk) {
        pieces[static_cast<std::size_t>(piece)].parse(chunk, relabel);
      },
      [&](int piece) { edges.take(pieces[static_cast<std::size_t>(piece)]); });
  if (reader.line_number() == 0) throw InputError(reader.file(), 0, "", "file is empty");
  if (edges.src.empty() && edges.original.empty()) {
    throw InputError(reader.file(), 0, "", "no edges (only comments or blank lines)");
  }
  std::vector<NodeId>& src = edges.src;
  std::vector<NodeId>& dst = edges.dst;
  const std::int64_t max_id = edges.max_id;
  const std::int64_t max_id_line = edges.max_id_line;

  std::int64_t num_nodes = max_id + 1;
  if (relabel) {
    num_nodes = relabel_ids(std::move(edges.original), src, dst, reader.file());
  } else {
    // Ids are node numbers: the largest makes the node count, whatever the edges.
    const auto num_edges = static_cast<std::int64_t>(src.size());
    require_memory_for(
        num_nodes * kLeastBytesPerNode + 2 * num_edges * static_cast<std::int64_t>(sizeof(NodeId)),
        "node id " + std::to_string(max_id) + " makes " + std::to_string(num_nodes) +
            " nodes (workload.relabel numbers the ids densely); their structure, "
            "labels and degrees would",
        reader.file(), max_id_line, "");
  }
  EdgeListOptions build;
  build.symmetrize = options.symmetrize;
  build.drop_self_loops = options.drop_self_loops;
  return build_graph(num_nodes, src, dst, build, reader.file());
}

}  // namespace gnnbed
