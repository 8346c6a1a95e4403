#pragma once
// What the two ranking protocols (link_ranking.hpp: against every entity; sampled_ranking.hpp:
// against sampled candidates, as PBG evaluates) share: the known edges the filtered ranking leaves
// out, rows of entities gathered from a partition store, and the rank summaries.
#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "exec/embedding/link_ranking.hpp"

namespace gnnbed {

// The other ends of every known edge, by (entity, relation): what the filtered ranking leaves out.
class KnownEdges {
 public:
  // Keeps only the known edges a held-out edge's ranking asks about: those from a held-out edge's
  // source under its relation, and those to a held-out edge's target under its relation, so its
  // memory follows the held-out edges' neighbourhoods, not the whole graph.
  KnownEdges(const KnownEdgeLists& known, std::span<const Triple> held_out) {
    for (const Triple& e : held_out) {
      targets_.try_emplace(key(e.source, e.relation));
      sources_.try_emplace(key(e.target, e.relation));
    }
    for (const std::span<const Triple> list : known) {
      for (const Triple& e : list) {
        if (const auto found = targets_.find(key(e.source, e.relation)); found != targets_.end()) {
          found->second.push_back(e.target);
        }
        if (const auto found = sources_.find(key(e.target, e.relation)); found != sources_.end()) {
          found->second.push_back(e.source);
        }
      }
    }
    for (auto* lists : {&targets_, &sources_}) {
      for (auto& [k, list] : *lists) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
      }
    }
  }
  // The known targets of (edge.source, edge.relation), or sources of (edge.target, relation),
  // sorted; `edge` must be one of the held-out edges.
  std::span<const std::int32_t> other_ends(const Triple& edge, bool targets) const {
    const auto& lists = targets ? targets_ : sources_;
    const auto found =
        lists.find(targets ? key(edge.source, edge.relation) : key(edge.target, edge.relation));
    return found == lists.end() ? std::span<const std::int32_t>{} : found->second;
  }

 private:
  static std::uint64_t key(std::int32_t entity, std::int32_t relation) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(entity)) << 32) |
           static_cast<std::uint32_t>(relation);
  }
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> targets_;
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> sources_;
};

// The embeddings of `entities` (global ids, repeats allowed), packed in that order, gathered
// holding one partition of `store` at a time.
std::vector<float> gather_entity_rows(std::span<const std::int32_t> entities,
                                      const EntityPartitioning& partitioning, PartitionStore& store,
                                      int dimension);

// Adds one ranking (1 + `above`) to a summary; divide() turns the sums into means.
void add_rank(RankSummary& summary, std::int64_t above);
void divide(RankSummary& summary, double count);

}  // namespace gnnbed
