// Shared pieces of the ranking protocols (ranking_support.hpp).
#include "exec/embedding/ranking_support.hpp"

namespace gnnbed {

std::vector<float> gather_entity_rows(std::span<const std::int32_t> entities,
                                      const EntityPartitioning& partitioning, PartitionStore& store,
                                      int dimension) {
  const auto d = static_cast<std::size_t>(dimension);
  std::vector<float> rows(entities.size() * d);
  for (int p = 0; p < partitioning.num_partitions(); ++p) {
    const int hold[] = {p};
    store.hold(hold);
    const PartitionTable& table = store.table(p);
    for (std::size_t i = 0; i < entities.size(); ++i) {
      if (partitioning.partition_of(entities[i]) != p) continue;
      std::copy_n(table.row(partitioning.offset_of(entities[i])), d, &rows[i * d]);
    }
  }
  return rows;
}

void add_rank(RankSummary& summary, std::int64_t above) {
  const double rank = static_cast<double>(above + 1);
  summary.mrr += 1.0 / rank;
  summary.hits_at_1 += rank <= 1 ? 1 : 0;
  summary.hits_at_10 += rank <= 10 ? 1 : 0;
}

void divide(RankSummary& summary, double count) {
  summary.mrr /= count;
  summary.hits_at_1 /= count;
  summary.hits_at_10 /= count;
}

}  // namespace gnnbed
