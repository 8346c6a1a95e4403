// Link-prediction workloads: the bundled citation graphs, SNAP edge lists and knowledge-graph
// triples, with a seeded held-out split.
#include "workloads/link_prediction/link_prediction_data.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/text_reader.hpp"
#include "workloads/loaders.hpp"
#include "workloads/workload_config.hpp"

namespace gnnbed {
namespace {

bool is_bundled(const std::string& name) {
  return name == "cora" || name == "citeseer" || name == "pubmed";
}

// Every edge of a graph loaded without symmetrizing, as (source, 0, target).
LinkPredictionData triples_of_edge_list(const std::filesystem::path& file, std::string name) {
  EdgeListFileOptions options;
  options.symmetrize = false;
  const Graph graph = load_edge_list(file, options);
  LinkPredictionData data;
  data.name = std::move(name);
  data.num_entities = graph.num_nodes();
  data.relation_names = {"edge"};
  data.train.reserve(static_cast<std::size_t>(graph.num_edges()));
  for (NodeId v = 0; v < graph.num_nodes(); ++v) {
    for (const NodeId u : graph.in_neighbors(v)) data.train.push_back({u, 0, v});
  }
  return data;
}

// Dense ids for names in order of first appearance.
class NameIds {
 public:
  std::int32_t id(std::string_view name, FieldParser& fields, std::string_view field) {
    const auto found = ids_.find(std::string(name));
    if (found != ids_.end()) return found->second;
    if (names_.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
      fields.fail(field, "more distinct names than 32-bit ids hold");
    }
    const auto next = static_cast<std::int32_t>(names_.size());
    ids_.emplace(std::string(name), next);
    names_.emplace_back(name);
    return next;
  }
  std::vector<std::string>& names() { return names_; }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
  std::vector<std::string> names_;
};

}  // namespace

nlohmann::json LinkPredictionData::summary() const {
  return {{"name", name},
          {"entities", num_entities},
          {"relations", num_relations()},
          {"train_edges", train.size()},
          {"test_edges", test.size()}};
}

LinkPredictionSource link_prediction_source_from_json(const nlohmann::json& object,
                                                      const LinkPredictionSource& defaults,
                                                      const std::string& where) {
  LinkPredictionSource source = defaults;
  JsonFieldReader reader(object, where);
  reader.read("source", source.source);
  reader.read("format", source.format);
  reader.read("test_fraction", source.test_fraction);
  reader.read("split_seed", source.split_seed);
  reader.read("entities", source.entities);
  reader.read("group_size", source.group_size);
  reader.read("degree", source.degree);
  reader.read("graph_seed", source.graph_seed);
  reader.finish();
  require(source.entities >= 2 && source.entities <= std::numeric_limits<std::int32_t>::max(),
          reader.path("entities"), "must be in [2, 2^31 - 1]");
  require(source.group_size >= 2, reader.path("group_size"), "must be at least 2");
  require(source.degree >= 1 && source.degree < source.group_size, reader.path("degree"),
          "must be in [1, group_size - 1]");
  require_one_of(reader.path("format"), source.format, {"edge_list", "triples"});
  require(source.test_fraction >= 0 && source.test_fraction < 1, reader.path("test_fraction"),
          "must be in [0, 1)");
  require(!source.source.empty(), reader.path("source"), "must name a dataset or a file");
  return source;
}

nlohmann::json to_json(const LinkPredictionSource& source) {
  return {{"source", source.source},
          {"format", source.format},
          {"test_fraction", source.test_fraction},
          {"split_seed", source.split_seed},
          {"entities", source.entities},
          {"group_size", source.group_size},
          {"degree", source.degree},
          {"graph_seed", source.graph_seed}};
}

LinkPredictionData planted_communities(std::int64_t entities, int group_size, int degree,
                                       std::uint64_t seed) {
  LinkPredictionData data;
  data.name = "planted";
  data.num_entities = entities;
  data.relation_names = {"edge"};
  data.train.reserve(static_cast<std::size_t>(entities) * static_cast<std::size_t>(degree));
  for_each_planted_edge(entities, group_size, degree, seed,
                        [&](const Triple& edge) { data.train.push_back(edge); });
  return data;
}

void for_each_planted_edge(std::int64_t entities, int group_size, int degree, std::uint64_t seed,
                           const std::function<void(const Triple&)>& edge) {
  std::vector<std::int32_t> others;
  for (std::int64_t group = 0; group < entities; group += group_size) {
    const std::int64_t end = std::min<std::int64_t>(group + group_size, entities);
    for (std::int64_t u = group; u < end; ++u) {
      others.clear();
      for (std::int64_t v = group; v < end; ++v) {
        if (v != u) others.push_back(static_cast<std::int32_t>(v));
      }
      Rng rng(hash_mix(seed, static_cast<std::uint64_t>(u)));
      const auto picks = std::min<std::size_t>(static_cast<std::size_t>(degree), others.size());
      for (std::size_t k = 0; k < picks; ++k) {  // the first `picks` of a partial shuffle
        std::swap(others[k], others[k + rng.below(others.size() - k)]);
        edge({static_cast<std::int32_t>(u), 0, others[k]});
      }
    }
  }
}

LinkPredictionData load_triples_tsv(const std::string& file) {
  LineReader reader(file);
  NameIds entities;
  NameIds relations;
  LinkPredictionData data;
  data.name = std::filesystem::path(file).stem().string();
  std::string_view line;
  while (reader.next(line)) {
    if (is_blank(line) || line.front() == '#') continue;
    FieldParser fields(reader, line, '\t');
    Triple triple;
    triple.source = entities.id(fields.text("head"), fields, "head");
    triple.relation = relations.id(fields.text("relation"), fields, "relation");
    triple.target = entities.id(fields.text("tail"), fields, "tail");
    fields.expect_end();
    data.train.push_back(triple);
  }
  if (data.train.empty()) throw InputError(file, 0, "", "no triples in the file");
  data.num_entities = static_cast<std::int64_t>(entities.names().size());
  data.relation_names = std::move(relations.names());
  return data;
}

void split_held_out(std::span<const Triple> triples, double test_fraction, std::uint64_t seed,
                    LinkPredictionData& data) {
  data.train.clear();
  data.test.clear();
  for (std::size_t i = 0; i < triples.size(); ++i) {
    (is_held_out(i, test_fraction, seed) ? data.test : data.train).push_back(triples[i]);
  }
}

bool is_held_out(std::size_t position, double test_fraction, std::uint64_t seed) {
  return unit_double(hash_mix(seed, position)) < test_fraction;
}

LinkPredictionData load_link_prediction(const LinkPredictionSource& source) {
  LinkPredictionData data;
  if (source.source == "planted") {
    data =
        planted_communities(source.entities, source.group_size, source.degree, source.graph_seed);
  } else if (is_bundled(source.source)) {
    data = triples_of_edge_list(
        std::filesystem::path(bundled_datasets_directory()) / source.source / "edges.tsv",
        source.source);
  } else if (source.format == "triples") {
    data = load_triples_tsv(source.source);
  } else {
    data =
        triples_of_edge_list(source.source, std::filesystem::path(source.source).stem().string());
  }
  const std::vector<Triple> all = std::move(data.train);
  split_held_out(all, source.test_fraction, source.split_seed, data);
  if (data.train.empty()) {
    throw ConfigError("workload.test_fraction", "leaves no edge of " + data.name + " to train on");
  }
  return data;
}

}  // namespace gnnbed
