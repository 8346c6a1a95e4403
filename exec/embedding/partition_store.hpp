#pragma once
// Where the embeddings of entity partitions live while PBG-style training runs: all in memory, or
// swapped to disk so that only the partitions of the bucket being trained are in memory, as PBG
// does on one machine when the embeddings exceed its memory. A partition carries its embeddings
// and its row-wise Adagrad state; a swap moves both.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "strategies/config/embedding_config.hpp"
#include "workloads/link_prediction/entity_buckets.hpp"

namespace gnnbed {

struct PartitionTable {
  std::int64_t rows = 0;
  int dimension = 0;
  std::vector<float> embeddings;   // rows x dimension, row = offset within the partition
  std::vector<float> adagrad_sum;  // by row: accumulated mean squared gradient (RowAdagrad)

  float* row(std::int64_t offset) { return embeddings.data() + offset * dimension; }
  const float* row(std::int64_t offset) const { return embeddings.data() + offset * dimension; }
  std::int64_t bytes() const {
    return static_cast<std::int64_t>((embeddings.size() + adagrad_sum.size()) * sizeof(float));
  }
};

// Partition `members`' starting table: entity e's coordinate j is normal(0, init_scale) drawn from
// (seed, e, j), so every partitioning and every store starts from the same embedding of e.
PartitionTable initial_partition_table(std::span<const std::int32_t> members, int dimension,
                                       double init_scale, std::uint64_t seed);

struct SwapCounters {
  std::int64_t bytes_read = 0;
  std::int64_t bytes_written = 0;
  std::int64_t loads = 0;
  std::int64_t stores = 0;
  double seconds = 0;
};

class PartitionStore {
 public:
  virtual ~PartitionStore() = default;
  // Makes `partitions` resident; a store may write others out to make room.
  virtual void hold(std::span<const int> partitions) = 0;
  // A resident partition's table (throws Error for one not held).
  virtual PartitionTable& table(int partition) = 0;
  const SwapCounters& swaps() const { return swaps_; }

 protected:
  SwapCounters swaps_;
};

// Every partition in memory from the start.
class MemoryPartitionStore final : public PartitionStore {
 public:
  MemoryPartitionStore(const EntityPartitioning& partitioning, const EmbeddingModelConfig& model,
                       std::uint64_t init_seed);
  // Tables trained elsewhere (a distributed run's, gathered), by partition.
  explicit MemoryPartitionStore(std::vector<PartitionTable> tables) : tables_(std::move(tables)) {}
  void hold(std::span<const int>) override {}
  PartitionTable& table(int partition) override;

 private:
  std::vector<PartitionTable> tables_;
};

// Partitions in files under `directory` (partition-<p>.bin), at most the held ones in memory: a
// partition no longer held is written back, a newly held one read (or created at its start values
// the first time). The files are this run's scratch space: the store refuses a directory holding
// other partition files, and removes its files when destroyed.
class DiskPartitionStore final : public PartitionStore {
 public:
  DiskPartitionStore(std::filesystem::path directory, const EntityPartitioning& partitioning,
                     const EmbeddingModelConfig& model, std::uint64_t init_seed);
  ~DiskPartitionStore() override;
  DiskPartitionStore(const DiskPartitionStore&) = delete;
  DiskPartitionStore& operator=(const DiskPartitionStore&) = delete;

  void hold(std::span<const int> partitions) override;
  PartitionTable& table(int partition) override;

 private:
  std::filesystem::path file_of(int partition) const;
  void store(int partition);
  void load(int partition);

  std::filesystem::path directory_;
  const EntityPartitioning& partitioning_;
  EmbeddingModelConfig model_;
  std::uint64_t init_seed_;
  std::vector<std::unique_ptr<PartitionTable>> resident_;  // by partition; null when on disk
  std::vector<bool> on_disk_;
};

std::unique_ptr<PartitionStore> make_partition_store(const EntityPartitioning& partitioning,
                                                     const EmbeddingModelConfig& model,
                                                     const EmbeddingTrainingConfig& training);

}  // namespace gnnbed
