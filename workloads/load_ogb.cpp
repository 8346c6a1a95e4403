// Reader for the raw layout of OGB node-property datasets (what ogb's download unpacks):
// raw/{edge,node-feat,node-label,num-node-list}.csv[.gz], or raw/data.npz and
// raw/node-label.npz (load_ogb_npz.hpp), and split/<name>/{train,valid,test}.csv[.gz].
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/memory.hpp"
#include "workloads/common/text_reader.hpp"
#include "workloads/load_ogb_npz.hpp"
#include "workloads/loaders.hpp"

namespace gnnbed {
namespace {

// `name` or `name.gz` in `directory` (the plain one when both exist); nullopt when neither does.
std::optional<std::filesystem::path> find_table(const std::filesystem::path& directory,
                                                const std::string& name) {
  std::error_code ec;
  for (const std::filesystem::path& candidate : {directory / name, directory / (name + ".gz")}) {
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

std::filesystem::path require_table(const std::filesystem::path& directory,
                                    const std::string& name) {
  if (auto found = find_table(directory, name)) return *found;
  throw InputError((directory / name).string(), 0, "", "no such file (nor " + name + ".gz)");
}

std::filesystem::path choose_split(const std::filesystem::path& directory,
                                   const std::string& split_name) {
  const std::filesystem::path root = directory / "split";
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    throw InputError(root.string(), 0, "", "no such directory (OGB datasets keep splits there)");
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string listed;
  for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
  if (!split_name.empty()) {
    if (std::find(names.begin(), names.end(), split_name) == names.end()) {
      throw ConfigError("workload.ogb_split", "'" + split_name + "' is not a directory under " +
                                                  root.string() + " (there: " + listed + ")");
    }
    return root / split_name;
  }
  if (names.empty()) throw InputError(root.string(), 0, "", "holds no split directory");
  if (names.size() > 1) {
    throw ConfigError("workload.ogb_split",
                      root.string() + " holds several splits (" + listed + "); choose one");
  }
  return root / names.front();
}

std::optional<std::int64_t> read_num_nodes(const std::filesystem::path& raw) {
  const auto path = find_table(raw, "num-node-list.csv");
  if (!path) return std::nullopt;
  LineReader reader(*path);
  std::optional<std::int64_t> num_nodes;
  std::string_view line;
  while (reader.next(line)) {
    if (is_blank(line)) continue;
    if (num_nodes) {
      throw InputError(reader.file(), reader.line_number(), "num_nodes",
                       "a second graph; only single-graph datasets are supported");
    }
    FieldParser fields(reader, line, ',');
    num_nodes = fields.integer("num_nodes");
    fields.expect_end();
    if (*num_nodes < 1 || *num_nodes > std::numeric_limits<NodeId>::max()) {
      throw InputError(reader.file(), reader.line_number(), "num_nodes",
                       std::to_string(*num_nodes) + " is outside [1, " +
                           std::to_string(std::numeric_limits<NodeId>::max()) + "]");
    }
    // Before any file says more of the nodes.
    require_memory_for(*num_nodes * kLeastBytesPerNode, std::to_string(*num_nodes) + " nodes would",
                       reader.file(), reader.line_number(), "num_nodes");
  }
  if (!num_nodes) throw InputError(reader.file(), 0, "", "file is empty");
  return num_nodes;
}

// One label per line: an integer ("3", or "3.0" as pandas writes a float column), or "nan" / an
// empty field / -1 for no label.
std::int32_t parse_label(FieldParser& fields) {
  const std::string_view text = fields.text("label");
  if (text.empty() || text == "nan" || text == "NaN" || text == "NAN") return -1;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value != std::floor(value)) {
    fields.fail("label", "'" + std::string(text) + "' is not a class number (or nan for none)");
  }
  const std::optional<std::int32_t> label = ogb_label(value);
  if (!label) fields.fail("label", "'" + std::string(text) + "' is outside [-1, 2^31 - 1)");
  return *label;
}

std::vector<std::int32_t> read_labels(const std::filesystem::path& path,
                                      std::optional<std::int64_t> num_nodes) {
  LineReader reader(path);
  std::vector<std::int32_t> labels;
  if (num_nodes) labels.reserve(static_cast<std::size_t>(*num_nodes));
  parse_records<std::int32_t>(reader, ',', parse_label,
                              [&](std::int32_t label, std::int64_t) { labels.push_back(label); });
  if (labels.empty()) throw InputError(reader.file(), 0, "", "file is empty");
  if (num_nodes && static_cast<std::int64_t>(labels.size()) != *num_nodes) {
    throw InputError(reader.file(), 0, "label",
                     std::to_string(labels.size()) + " lines for " + std::to_string(*num_nodes) +
                         " nodes (num-node-list.csv); every node needs one");
  }
  check_node_count(static_cast<std::int64_t>(labels.size()), reader.file());
  return labels;
}

Graph read_edges(const std::filesystem::path& path, std::int64_t num_nodes, bool symmetrize) {
  LineReader reader(path);
  std::vector<NodeId> src;
  std::vector<NodeId> dst;
  auto node = [&](FieldParser& fields, std::string_view field) {
    const std::int64_t id = fields.integer(field);
    if (id < 0 || id >= num_nodes) {
      fields.fail(field, "node id " + std::to_string(id) + " is outside [0, " +
                             std::to_string(num_nodes) + ") (the number of label lines)");
    }
    return static_cast<NodeId>(id);
  };
  struct Edge {
    NodeId src;
    NodeId dst;
  };
  parse_records<Edge>(
      reader, ',',
      [&](FieldParser& fields) {
        const NodeId u = node(fields, "src");
        return Edge{u, node(fields, "dst")};
      },
      [&](const Edge& edge, std::int64_t) {
        src.push_back(edge.src);
        dst.push_back(edge.dst);
      });
  if (src.empty()) throw InputError(reader.file(), 0, "", "file is empty");
  EdgeListOptions options;
  options.symmetrize = symmetrize;
  return build_graph(num_nodes, src, dst, options, reader.file());
}

// The column names ("feature[j]", made once so errors can name columns) for a first row `line`;
// checks that the matrix it implies fits in memory and reserves it.
std::vector<std::string> feature_columns(std::string_view line, const LineReader& reader,
                                         std::int64_t num_nodes, std::vector<float>& values) {
  std::vector<std::string> column_names;
  const auto dim = std::count(line.begin(), line.end(), ',') + 1;
  for (std::int64_t j = 0; j < dim; ++j) {
    column_names.push_back("feature[" + std::to_string(j) + "]");
  }
  const auto cells = num_nodes * static_cast<std::int64_t>(column_names.size());
  require_memory_for(cells * static_cast<std::int64_t>(sizeof(float)),
                     std::to_string(num_nodes) + " nodes of " +
                         std::to_string(column_names.size()) + " features would",
                     reader.file(), reader.line_number(), "");
  values.reserve(static_cast<std::size_t>(cells));
  return column_names;
}

std::shared_ptr<const FeatureStore> read_features(const std::filesystem::path& path,
                                                  std::int64_t num_nodes) {
  LineReader reader(path);
  std::vector<float> values;
  std::string_view line;
  if (!reader.next(line)) throw InputError(reader.file(), 0, "", "file is empty");
  const std::vector<std::string> column_names = feature_columns(line, reader, num_nodes, values);
  // Row r is line r + 1: the rows before a line are known without reading them.
  auto parse_row = [&](FieldParser& fields, std::int64_t line_number, std::vector<float>& out) {
    if (line_number > num_nodes) {
      fields.fail("", "more rows than the " + std::to_string(num_nodes) + " nodes");
    }
    for (const std::string& name : column_names) out.push_back(fields.real32(name));
    if (!fields.at_end()) {
      fields.fail("", "more than " + std::to_string(column_names.size()) +
                          " values (the first row has " + std::to_string(column_names.size()) +
                          ")");
    }
  };
  FieldParser first_row(reader, line, ',');
  parse_row(first_row, reader.line_number(), values);
  std::vector<std::vector<float>> piece_values(static_cast<std::size_t>(reader.max_pieces()));
  reader.parse_in_pieces(
      [&](int piece, LineChunk& chunk) {
        std::string_view row;
        while (chunk.next(row)) {
          FieldParser fields(chunk, row, ',');
          parse_row(fields, chunk.line_number(), piece_values[static_cast<std::size_t>(piece)]);
        }
      },
      [&](int piece) {
        std::vector<float>& taken = piece_values[static_cast<std::size_t>(piece)];
        values.insert(values.end(), taken.begin(), taken.end());
        taken.clear();
      });
  const std::int64_t rows = reader.line_number();
  if (rows != num_nodes) {
    throw InputError(reader.file(), 0, "",
                     std::to_string(rows) + " rows for " + std::to_string(num_nodes) + " nodes");
  }
  return std::make_shared<const StoredFeatures>(num_nodes, static_cast<int>(column_names.size()),
                                                SharedArray(std::move(values)));
}

Split read_split(const std::filesystem::path& directory, std::span<const std::int32_t> labels) {
  const auto num_nodes = static_cast<std::int64_t>(labels.size());
  // 0 = in no part yet, else 1 + the index of the part that lists the node.
  std::vector<std::uint8_t> part_of(labels.size(), 0);
  const std::string part_files[] = {"train.csv", "valid.csv", "test.csv"};
  Split split;
  std::vector<NodeId>* parts[] = {&split.train, &split.val, &split.test};
  for (std::size_t part = 0; part < 3; ++part) {
    LineReader reader(require_table(directory, part_files[part]));
    auto parse_node = [](FieldParser& fields) {
      const std::int64_t id = fields.integer("node");
      fields.expect_end();
      return id;
    };
    parse_records<std::int64_t>(reader, ',', parse_node, [&](std::int64_t id, std::int64_t line) {
      if (id < 0 || id >= num_nodes) {
        throw InputError(
            reader.file(), line, "node",
            "node id " + std::to_string(id) + " is outside [0, " + std::to_string(num_nodes) + ")");
      }
      const auto v = static_cast<std::size_t>(id);
      if (part_of[v] != 0) {
        throw InputError(
            reader.file(), line, "node",
            "node " + std::to_string(id) + " is already listed in " + part_files[part_of[v] - 1]);
      }
      if (labels[v] < 0) {
        throw InputError(reader.file(), line, "node",
                         "node " + std::to_string(id) + " has no label");
      }
      part_of[v] = static_cast<std::uint8_t>(part + 1);
      parts[part]->push_back(static_cast<NodeId>(id));
    });
    if (reader.line_number() == 0) throw InputError(reader.file(), 0, "", "file is empty");
  }
  return split;
}

}  // namespace

Dataset load_ogb(const std::filesystem::path& directory, const OgbOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    throw InputError(directory.string(), 0, "", "no such directory");
  }
  const std::filesystem::path split_directory = choose_split(directory, options.split_name);
  const std::filesystem::path raw = directory / "raw";

  Dataset dataset;
  const std::filesystem::path normal = std::filesystem::absolute(directory).lexically_normal();
  dataset.name = (normal.has_filename() ? normal : normal.parent_path()).filename().string();
  std::vector<std::int32_t> labels;
  if (has_ogb_npz(raw)) {
    OgbNpzContents contents = read_ogb_npz(raw, options.symmetrize);
    labels = std::move(contents.labels);
    dataset.graph = std::move(contents.graph);
    dataset.features = std::move(contents.features);
  } else {
    labels = read_labels(require_table(raw, "node-label.csv"), read_num_nodes(raw));
    dataset.graph = read_edges(require_table(raw, "edge.csv"),
                               static_cast<std::int64_t>(labels.size()), options.symmetrize);
    if (const auto features = find_table(raw, "node-feat.csv")) {
      dataset.features = read_features(*features, static_cast<std::int64_t>(labels.size()));
    }
  }
  dataset.num_classes = *std::max_element(labels.begin(), labels.end()) + 1;
  dataset.split = read_split(split_directory, labels);
  dataset.labels = SharedArray(std::move(labels));
  dataset.validate(directory.string());
  return dataset;
}

}  // namespace gnnbed
