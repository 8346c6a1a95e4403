#pragma once
// Link-prediction workloads, as PyTorch-BigGraph trains on them: a list of (source, relation,
// target) triples over a set of entities, split into the edges trained on and the held-out edges
// ranked to measure quality. A social graph is one relation; a knowledge graph has many.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace gnnbed {

// One directed edge. Ids are global entity ids, or, inside a bucket (entity_buckets.hpp), offsets
// within the source's and the target's partitions.
struct Triple {
  std::int32_t source = 0;
  std::int32_t relation = 0;
  std::int32_t target = 0;
  friend bool operator==(const Triple&, const Triple&) = default;
};

struct LinkPredictionData {
  std::string name;
  std::int64_t num_entities = 0;
  std::vector<std::string> relation_names;  // at least one
  std::vector<Triple> train;
  std::vector<Triple> test;  // held out: never trained on, ranked by evaluation

  int num_relations() const { return static_cast<int>(relation_names.size()); }
  nlohmann::json summary() const;
};

// Where the triples come from and how the held-out edges are chosen.
struct LinkPredictionSource {
  // A bundled dataset's name (cora, citeseer, pubmed: its citation graph, each edge once, as one
  // relation), "planted" (generated: planted_communities()), or a file's path.
  std::string source = "cora";
  // For a path: "edge_list" (SNAP-style "src dst" lines, one relation) or "triples" (tab-separated
  // "head<TAB>relation<TAB>tail" names, as knowledge graphs ship; ids by first appearance).
  std::string format = "edge_list";
  double test_fraction = 0.1;  // each edge held out with this chance, drawn from split_seed
  std::uint64_t split_seed = 1;
  // "planted": entities, the size of their groups, edges per entity, and the generator's seed.
  std::int64_t entities = 10000;
  int group_size = 20;
  int degree = 8;
  std::uint64_t graph_seed = 1;
};

LinkPredictionSource link_prediction_source_from_json(const nlohmann::json& object,
                                                      const LinkPredictionSource& defaults,
                                                      const std::string& where);
nlohmann::json to_json(const LinkPredictionSource& source);

// Loads and splits. Throws InputError naming the file and line of bad data, ConfigError for a
// bad field.
LinkPredictionData load_link_prediction(const LinkPredictionSource& source);

// A tab-separated triples file: every line "head<TAB>relation<TAB>tail" (names, no header; '#'
// comment and blank lines ignored). Entities and relations are numbered in order of first
// appearance. Returns every triple in `train`.
LinkPredictionData load_triples_tsv(const std::string& file);

// A graph with planted structure, for quality checks with a known answer and for graphs of any
// size: `entities` entities in consecutive groups of `group_size` (the last one smaller when it
// does not divide), each entity with edges to `degree` distinct others of its group, drawn from
// `seed` and the entity (so any part of the graph can be generated alone). One relation. A model
// that learnt the groups, and there is nothing else to learn, ranks a held-out edge's end
// uniformly among the group's entities that have no known edge with its other end.
LinkPredictionData planted_communities(std::int64_t entities, int group_size, int degree,
                                       std::uint64_t seed);
// The edges planted_communities generates, in its order, one call each, without holding them (a
// graph too large for memory, counted into buckets).
void for_each_planted_edge(std::int64_t entities, int group_size, int degree, std::uint64_t seed,
                           const std::function<void(const Triple&)>& edge);

// Holds out each of `triples` with chance `test_fraction`, a pure function of `seed` and the
// triple's position, so the split does not depend on how the file was read.
void split_held_out(std::span<const Triple> triples, double test_fraction, std::uint64_t seed,
                    LinkPredictionData& data);
// Whether split_held_out holds out the triple at `position`.
bool is_held_out(std::size_t position, double test_fraction, std::uint64_t seed);

}  // namespace gnnbed
