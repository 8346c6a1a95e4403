// Reader for the TSV layout of the bundled datasets, workloads/datasets/* (see their README).
// Everything the files say twice (meta.tsv counts versus the data files) must agree, so a damaged
// or hand-edited copy is caught here instead of silently training on different data.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/text_reader.hpp"
#include "workloads/loaders.hpp"
#include "workloads/mapped_file.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

struct MetaEntry {
  std::string key;
  std::string value;
  std::int64_t line = 0;
};

class Meta {
 public:
  explicit Meta(const std::filesystem::path& path) {
    LineReader reader(path);
    file_ = reader.file();
    std::string_view line;
    bool any_line = false;
    while (reader.next(line)) {
      any_line = true;
      if (is_blank(line)) continue;
      const auto tab = line.find('\t');
      if (tab == std::string_view::npos || tab == 0) {
        throw InputError(file_, reader.line_number(), "key",
                         "expected 'key<TAB>value', got '" + std::string(line) + "'");
      }
      MetaEntry entry{std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)),
                      reader.line_number()};
      if (const MetaEntry* earlier = find(entry.key)) {
        throw InputError(file_, entry.line, entry.key,
                         "listed twice (first on line " + std::to_string(earlier->line) + ")");
      }
      entries_.push_back(std::move(entry));
    }
    if (!any_line) throw InputError(file_, 0, "", "file is empty");
  }

  const std::string& file() const { return file_; }

  const MetaEntry* find(std::string_view key) const {
    for (const MetaEntry& entry : entries_) {
      if (entry.key == key) return &entry;
    }
    return nullptr;
  }

  const MetaEntry& required(std::string_view key) const {
    const MetaEntry* entry = find(key);
    if (entry == nullptr) throw InputError(file_, 0, std::string(key), "missing (required key)");
    return *entry;
  }

  std::int64_t integer(const MetaEntry& entry) const {
    std::int64_t value = 0;
    const std::string& text = entry.value;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      throw InputError(file_, entry.line, entry.key, "'" + text + "' is not an integer");
    }
    return value;
  }

  std::int64_t integer_in(std::string_view key, std::int64_t low, std::int64_t high) const {
    const MetaEntry& entry = required(key);
    const std::int64_t value = integer(entry);
    if (value < low || value > high) {
      throw InputError(file_, entry.line, entry.key,
                       std::to_string(value) + " is outside [" + std::to_string(low) + ", " +
                           std::to_string(high) + "]");
    }
    return value;
  }

  // The count meta.tsv states for `key`, if it states one.
  std::optional<std::int64_t> stated_count(std::string_view key) const {
    const MetaEntry* entry = find(key);
    if (entry == nullptr) return std::nullopt;
    return integer(*entry);
  }

  // A count that meta.tsv may state: when it does, the data file must agree.
  void check_count(std::string_view key, std::int64_t actual, const std::string& data_file,
                   const std::string& what) const {
    const MetaEntry* entry = find(key);
    if (entry == nullptr) return;
    const std::int64_t stated = integer(*entry);
    if (stated != actual) {
      throw InputError(file_, entry->line, entry->key,
                       "says " + std::to_string(stated) + " but " + data_file + " has " +
                           std::to_string(actual) + " " + what);
    }
  }

 private:
  std::string file_;
  std::vector<MetaEntry> entries_;
};

NodeId node_id(FieldParser& fields, std::string_view field, std::int64_t num_nodes) {
  const std::int64_t id = fields.integer(field);
  if (id < 0 || id >= num_nodes) {
    fields.fail(field, "node id " + std::to_string(id) + " is outside [0, " +
                           std::to_string(num_nodes) + ") (num_nodes in meta.tsv)");
  }
  return static_cast<NodeId>(id);
}

// Records that `line` lists `node` (line_of: the line that first did, 0 for none); a node listed
// twice is an error of the second line.
void mark_listed(std::vector<std::int64_t>& line_of, NodeId node, const std::string& file,
                 std::int64_t line) {
  std::int64_t& first = line_of[static_cast<std::size_t>(node)];
  if (first != 0) {
    throw InputError(file, line, "node",
                     "node " + std::to_string(node) + " is listed twice (first on line " +
                         std::to_string(first) + ")");
  }
  first = line;
}

// Parses every line into a Record (parse_records, on OpenMP threads): parse_line(fields) reads
// the fields it expects, apply(record, line_number) takes the records in file order, and extra
// fields are an error. Returns the number of lines.
template <typename Record, typename ParseLine, typename Apply>
std::int64_t for_each_record(const std::filesystem::path& path, ParseLine&& parse_line,
                             Apply&& apply) {
  LineReader reader(path);
  const std::int64_t lines = parse_records<Record>(reader, '\t', parse_line, apply);
  if (lines == 0) throw InputError(reader.file(), 0, "", "file is empty");
  return lines;
}

Graph read_edges(const std::filesystem::path& path, const Meta& meta, std::int64_t num_nodes) {
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  std::int64_t self_loops = 0;
  struct Edge {
    NodeId src;
    NodeId dst;
  };
  const std::int64_t lines = for_each_record<Edge>(
      path,
      [&](FieldParser& fields) {
        const NodeId u = node_id(fields, "src", num_nodes);
        return Edge{u, node_id(fields, "dst", num_nodes)};
      },
      [&](const Edge& edge, std::int64_t) {
        src.push_back(edge.src);
        dst.push_back(edge.dst);
        if (edge.src == edge.dst) ++self_loops;
      });
  const std::string file = path.string();
  meta.check_count("num_undirected_edges", lines, file, "lines");
  meta.check_count("num_self_loops", self_loops, file, "self loops");

  Graph graph = build_graph(num_nodes, src, dst, EdgeListOptions{}, file);
  if (graph.num_edges() != 2 * (lines - self_loops) + self_loops) {
    // Some undirected edge is listed twice (maybe once per direction): find the later copy.
    std::vector<std::pair<std::uint64_t, std::int64_t>> keyed(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
      const auto low = static_cast<std::uint64_t>(std::min(src[i], dst[i]));
      const auto high = static_cast<std::uint64_t>(std::max(src[i], dst[i]));
      keyed[i] = {low << 32 | high, static_cast<std::int64_t>(i) + 1};
    }
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 1; i < keyed.size(); ++i) {
      if (keyed[i].first == keyed[i - 1].first) {
        throw InputError(file, keyed[i].second, "src",
                         "edge " + std::to_string(keyed[i].first >> 32) + " - " +
                             std::to_string(keyed[i].first & 0xffffffffULL) +
                             " is listed twice (also on line " +
                             std::to_string(keyed[i - 1].second) + ")");
      }
    }
  }
  return graph;
}

// One line of features_sparse.tsv.
struct FeatureEntry {
  NodeId node = 0;
  std::int32_t column = 0;
  float value = 0;
};

FeatureEntry parse_feature_entry(FieldParser& fields, std::int64_t num_nodes, int dim) {
  const NodeId v = node_id(fields, "node", num_nodes);
  const std::int64_t column = fields.integer("feature");
  if (column < 0 || column >= dim) {
    fields.fail("feature", "column " + std::to_string(column) + " is outside [0, " +
                               std::to_string(dim) + ") (num_features in meta.tsv)");
  }
  return FeatureEntry{v, static_cast<std::int32_t>(column), fields.real32("value")};
}

// CSR rows from feature entries in any order. Entries grouped by node in increasing node order
// (as writers emit them) are appended where they end up, 8 bytes each; only entries out of that
// order make the builder keep every entry's node too and counting-sort them at the end.
class SparseRowsBuilder {
 public:
  SparseRowsBuilder(std::int64_t num_nodes, int dim, std::int64_t expected_entries) {
    rows_.rows = num_nodes;
    rows_.cols = dim;
    rows_.offsets.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
    rows_.columns.reserve(static_cast<std::size_t>(expected_entries));
    rows_.weights.reserve(static_cast<std::size_t>(expected_entries));
  }

  void add(const FeatureEntry& entry) {
    if (entry.node < last_node_ && nodes_.empty()) record_nodes_so_far();
    if (!nodes_.empty()) nodes_.push_back(entry.node);
    last_node_ = std::max(last_node_, entry.node);
    ++rows_.offsets[static_cast<std::size_t>(entry.node) + 1];
    rows_.columns.push_back(entry.column);
    rows_.weights.push_back(entry.value);
  }

  // The rows, each sorted by column.
  SparseMatrix finish() && {
    for (std::size_t v = 1; v < rows_.offsets.size(); ++v) {
      rows_.offsets[v] += rows_.offsets[v - 1];
    }
    if (!nodes_.empty()) sort_by_node();
    sort_rows_by_column();
    return std::move(rows_);
  }

 private:
  // The nodes of the entries added so far, grouped in increasing order: each node's count of them.
  void record_nodes_so_far() {
    nodes_.reserve(rows_.columns.capacity());
    for (std::size_t v = 0; v + 1 < rows_.offsets.size(); ++v) {
      nodes_.insert(nodes_.end(), static_cast<std::size_t>(rows_.offsets[v + 1]),
                    static_cast<NodeId>(v));
    }
  }

  // A counting sort of the entries by node (offsets already summed), stable within a node.
  void sort_by_node() {
    std::vector<std::int32_t> columns(rows_.columns.size());
    std::vector<float> weights(rows_.weights.size());
    std::vector<std::int64_t> cursor(rows_.offsets.begin(), rows_.offsets.end() - 1);
    for (std::size_t e = 0; e < nodes_.size(); ++e) {
      const auto slot = static_cast<std::size_t>(cursor[static_cast<std::size_t>(nodes_[e])]++);
      columns[slot] = rows_.columns[e];
      weights[slot] = rows_.weights[e];
    }
    nodes_ = {};
    rows_.columns = std::move(columns);
    rows_.weights = std::move(weights);
  }

  void sort_rows_by_column() {
#pragma omp parallel
    {
      std::vector<std::pair<std::int32_t, float>> row;
#pragma omp for schedule(dynamic, 1024)
      for (std::int64_t v = 0; v < rows_.rows; ++v) {
        const auto begin = static_cast<std::size_t>(rows_.offsets[static_cast<std::size_t>(v)]);
        const auto end = static_cast<std::size_t>(rows_.offsets[static_cast<std::size_t>(v) + 1]);
        if (std::is_sorted(rows_.columns.begin() + static_cast<std::ptrdiff_t>(begin),
                           rows_.columns.begin() + static_cast<std::ptrdiff_t>(end))) {
          continue;
        }
        row.clear();
        for (std::size_t e = begin; e < end; ++e) {
          row.emplace_back(rows_.columns[e], rows_.weights[e]);
        }
        std::stable_sort(row.begin(), row.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t e = begin; e < end; ++e) {
          rows_.columns[e] = row[e - begin].first;
          rows_.weights[e] = row[e - begin].second;
        }
      }
    }
  }

  SparseMatrix rows_;
  NodeId last_node_ = 0;
  std::vector<NodeId> nodes_;  // every entry's node, once entries came out of node order
};

// The (node << 32 | column) pairs that sorted rows hold more than once.
std::unordered_set<std::uint64_t> repeated_entries(const SparseMatrix& rows) {
  std::unordered_set<std::uint64_t> repeated;
  for (std::int64_t v = 0; v < rows.rows; ++v) {
    for (auto e = rows.offsets[static_cast<std::size_t>(v)] + 1;
         e < rows.offsets[static_cast<std::size_t>(v) + 1]; ++e) {
      const std::int32_t column = rows.columns[static_cast<std::size_t>(e)];
      if (column == rows.columns[static_cast<std::size_t>(e) - 1]) {
        repeated.insert(static_cast<std::uint64_t>(v) << 32 | static_cast<std::uint32_t>(column));
      }
    }
  }
  return repeated;
}

// Reads the file again in order and throws InputError at the second line of the first of the
// `repeated` pairs listed twice, as a reader going line by line reports it: the fast path keeps
// no line numbers, and this is an error path.
[[noreturn]] void throw_first_repeated(const std::filesystem::path& path, std::int64_t num_nodes,
                                       int dim, const std::unordered_set<std::uint64_t>& repeated) {
  std::unordered_set<std::uint64_t> seen;
  for_each_record<FeatureEntry>(
      path, [&](FieldParser& fields) { return parse_feature_entry(fields, num_nodes, dim); },
      [&](const FeatureEntry& entry, std::int64_t line) {
        const std::uint64_t key =
            static_cast<std::uint64_t>(entry.node) << 32 | static_cast<std::uint32_t>(entry.column);
        if (repeated.count(key) != 0 && !seen.insert(key).second) {
          throw InputError(path.string(), line, "feature",
                           "node " + std::to_string(entry.node) + " feature " +
                               std::to_string(entry.column) + " is listed twice");
        }
      });
  throw Error(path.string() + ": an entry listed twice was not found again");
}

// Bag-of-words files stay sparse (SparseFeatures) unless dense rows would take less memory.
// Entries are read without line numbers straight into CSR rows (8 bytes each, sized by meta.tsv's
// count where it states one); an entry listed twice is found in the sorted rows and reported from
// a second, ordered reading.
std::shared_ptr<const FeatureStore> read_sparse_features(const std::filesystem::path& path,
                                                         const Meta& meta, std::int64_t num_nodes,
                                                         int dim) {
  // A stated count reserves room, but no more than the file could hold (a line per byte at most).
  std::error_code size_error;
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, size_error));
  const std::int64_t expected = std::clamp<std::int64_t>(
      meta.stated_count("num_feature_nonzeros").value_or(0), 0, size_error ? 0 : file_bytes);
  SparseRowsBuilder builder(num_nodes, dim, expected);
  const auto parse = [&](FieldParser& fields) {
    return parse_feature_entry(fields, num_nodes, dim);
  };
  std::int64_t lines = 0;
  try {
    lines = for_each_record<FeatureEntry>(
        path, parse, [&](const FeatureEntry& entry, std::int64_t) { builder.add(entry); });
  } catch (const InputError&) {
    // Every line before the bad one is in `builder`: one listed twice there comes first.
    const auto repeated = repeated_entries(std::move(builder).finish());
    if (!repeated.empty()) throw_first_repeated(path, num_nodes, dim, repeated);
    throw;
  }
  SparseMatrix rows = std::move(builder).finish();
  if (const auto repeated = repeated_entries(rows); !repeated.empty()) {
    throw_first_repeated(path, num_nodes, dim, repeated);
  }
  meta.check_count("num_feature_nonzeros", lines, path.string(), "lines");
  auto features = std::make_shared<const SparseFeatures>(std::move(rows));
  if (SparseFeatures::smaller_than_dense(num_nodes, dim, features->nonzeros())) return features;
  std::vector<NodeId> nodes(static_cast<std::size_t>(num_nodes));
  std::iota(nodes.begin(), nodes.end(), NodeId{0});
  std::vector<float> values(static_cast<std::size_t>(num_nodes) * static_cast<std::size_t>(dim));
  features->gather(nodes, values.data());
  return std::make_shared<const StoredFeatures>(num_nodes, dim, SharedArray(std::move(values)));
}

std::shared_ptr<const FeatureStore> read_dense_features(const std::filesystem::path& path,
                                                        std::int64_t num_nodes, int dim) {
  if constexpr (std::endian::native != std::endian::little) {
    throw InputError(path.string(), 0, "", "little-endian float32 files need a little-endian host");
  }
  auto mapped = MappedFile::open(path);
  const auto count = static_cast<std::size_t>(num_nodes) * static_cast<std::size_t>(dim);
  if (mapped->size_bytes() != count * sizeof(float)) {
    throw InputError(mapped->file(), 0, "",
                     "has " + std::to_string(mapped->size_bytes()) + " bytes, expected " +
                         std::to_string(num_nodes) + " nodes x " + std::to_string(dim) +
                         " features x 4 bytes = " + std::to_string(count * sizeof(float)));
  }
  const std::span<const float> values = mapped->view<float>(0, count);
  if (const std::string bad = non_finite_feature(values, dim); !bad.empty()) {
    throw InputError(mapped->file(), 0, "value", bad);
  }
  return std::make_shared<const StoredFeatures>(num_nodes, dim,
                                                SharedArray<float>(values, std::move(mapped)));
}

std::vector<std::int32_t> read_labels(const std::filesystem::path& path, const Meta& meta,
                                      std::int64_t num_nodes, std::int64_t num_classes) {
  const auto n = static_cast<std::size_t>(num_nodes);
  std::vector<std::int32_t> labels(n, -1);
  std::vector<std::int64_t> line_of(n, 0);
  const std::string file = path.string();
  struct Label {
    NodeId node;
    std::int32_t label;
  };
  const std::int64_t lines = for_each_record<Label>(
      path,
      [&](FieldParser& fields) {
        const NodeId v = node_id(fields, "node", num_nodes);
        const std::int64_t label = fields.integer("class");
        if (label < -1 || label >= num_classes) {
          fields.fail("class", std::to_string(label) + " is outside [-1, " +
                                   std::to_string(num_classes) +
                                   ") (num_classes in meta.tsv; -1 = no label)");
        }
        return Label{v, static_cast<std::int32_t>(label)};
      },
      [&](const Label& entry, std::int64_t line) {
        mark_listed(line_of, entry.node, file, line);
        labels[static_cast<std::size_t>(entry.node)] = entry.label;
      });
  if (lines != num_nodes) {
    const auto missing = std::find(line_of.begin(), line_of.end(), 0) - line_of.begin();
    throw InputError(file, 0, "node",
                     "node " + std::to_string(missing) + " has no line (" + std::to_string(lines) +
                         " lines for " + std::to_string(num_nodes) +
                         " nodes; every node needs one, -1 = no label)");
  }
  meta.check_count("num_unlabeled_nodes", std::count(labels.begin(), labels.end(), -1), file,
                   "nodes labelled -1");
  return labels;
}

Split read_split(const std::filesystem::path& path, const Meta& meta,
                 std::span<const std::int32_t> labels) {
  const auto num_nodes = static_cast<std::int64_t>(labels.size());
  std::vector<std::int64_t> line_of(labels.size(), 0);
  Split split;
  const std::string file = path.string();
  struct Member {
    NodeId node;
    std::vector<NodeId>* part;
  };
  for_each_record<Member>(
      path,
      [&](FieldParser& fields) {
        const NodeId v = node_id(fields, "node", num_nodes);
        const std::string_view part = fields.text("split");
        std::vector<NodeId>* ids = part == "train"  ? &split.train
                                   : part == "val"  ? &split.val
                                   : part == "test" ? &split.test
                                                    : nullptr;
        if (ids == nullptr) {
          // Appended, not "'" + std::string(part): GCC 12 warns falsely (-Wrestrict) on that here.
          std::string problem = "'";
          problem.append(part).append("' is not one of train, val, test");
          fields.fail("split", problem);
        }
        return Member{v, ids};
      },
      [&](const Member& member, std::int64_t line) {
        mark_listed(line_of, member.node, file, line);
        if (labels[static_cast<std::size_t>(member.node)] < 0) {
          throw InputError(
              file, line, "node",
              "node " + std::to_string(member.node) + " has no label (-1 in labels.tsv)");
        }
        member.part->push_back(member.node);
      });
  meta.check_count("num_train", static_cast<std::int64_t>(split.train.size()), file, "train nodes");
  meta.check_count("num_val", static_cast<std::int64_t>(split.val.size()), file, "val nodes");
  meta.check_count("num_test", static_cast<std::int64_t>(split.test.size()), file, "test nodes");
  return split;
}

}  // namespace

Dataset load_planetoid_tsv(const std::filesystem::path& directory) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    throw InputError(directory.string(), 0, "", "no such directory");
  }
  const Meta meta(directory / "meta.tsv");
  const std::int64_t num_nodes =
      meta.integer_in("num_nodes", 1, std::numeric_limits<NodeId>::max());
  // Every class has a labelled node, and every node a line of labels.tsv: no more classes.
  const std::int64_t num_classes = meta.integer_in("num_classes", 1, num_nodes);
  const MetaEntry& format = meta.required("feature_format");
  const std::int64_t dim_if_any =
      format.value == "MISSING"
          ? 0
          : meta.integer_in("num_features", 1, std::numeric_limits<int>::max());
  const std::int64_t node_bytes = static_cast<std::int64_t>(
      sizeof(std::int64_t) + sizeof(std::int32_t) + dim_if_any * sizeof(float));
  require_memory_for(num_nodes * node_bytes,
                     std::to_string(num_nodes) + " nodes with " + std::to_string(dim_if_any) +
                         " features each would",
                     meta.file(), meta.required("num_nodes").line, "num_nodes");

  Dataset dataset;
  // Normalized first, so that "cora/" and "." name the directory itself.
  const std::filesystem::path normal = std::filesystem::absolute(directory).lexically_normal();
  dataset.name = (normal.has_filename() ? normal : normal.parent_path()).filename().string();
  dataset.num_classes = static_cast<int>(num_classes);
  dataset.graph = read_edges(directory / "edges.tsv", meta, num_nodes);
  if (format.value != "MISSING") {
    const auto dim =
        static_cast<int>(meta.integer_in("num_features", 1, std::numeric_limits<int>::max()));
    if (std::string_view(format.value).starts_with("features_sparse.tsv")) {
      dataset.features =
          read_sparse_features(directory / "features_sparse.tsv", meta, num_nodes, dim);
    } else if (std::string_view(format.value).starts_with("features.bin")) {
      dataset.features = read_dense_features(directory / "features.bin", num_nodes, dim);
    } else {
      throw InputError(meta.file(), format.line, format.key,
                       "'" + format.value +
                           "' names no known format (features_sparse.tsv, features.bin or "
                           "MISSING)");
    }
  }
  std::vector<std::int32_t> labels =
      read_labels(directory / "labels.tsv", meta, num_nodes, num_classes);
  dataset.split = read_split(directory / "split.tsv", meta, labels);
  dataset.labels = SharedArray(std::move(labels));
  dataset.validate(directory.string());
  return dataset;
}

}  // namespace gnnbed
