// Partition stores: memory, and disk swapping (partition_store.hpp).
#include "exec/embedding/partition_store.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <string>

#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

constexpr std::array<char, 8> kMagic{'G', 'N', 'B', 'D', 'P', 'A', 'R', 'T'};
constexpr std::uint32_t kVersion = 1;

struct FileHeader {
  std::array<char, 8> magic = kMagic;
  std::uint32_t version = kVersion;
  std::int32_t dimension = 0;
  std::int64_t rows = 0;
};

void write_table(const std::filesystem::path& file, const PartitionTable& table) {
  write_file_atomically(file, [&](std::ostream& out) {
    FileHeader header;
    header.dimension = table.dimension;
    header.rows = table.rows;
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    out.write(reinterpret_cast<const char*>(table.embeddings.data()),
              static_cast<std::streamsize>(table.embeddings.size() * sizeof(float)));
    out.write(reinterpret_cast<const char*>(table.adagrad_sum.data()),
              static_cast<std::streamsize>(table.adagrad_sum.size() * sizeof(float)));
  });
}

// Reads a table written by write_table, checking that it is the partition expected.
PartitionTable read_table(const std::filesystem::path& file, std::int64_t rows, int dimension) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), 0, "", "cannot open the swapped partition");
  FileHeader header;
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  if (!in || header.magic != kMagic || header.version != kVersion) {
    throw InputError(file.string(), 0, "header", "not a gnnbed partition file of version 1");
  }
  if (header.rows != rows || header.dimension != dimension) {
    throw InputError(file.string(), 0, "header",
                     "holds " + std::to_string(header.rows) + " x " +
                         std::to_string(header.dimension) + " embeddings, expected " +
                         std::to_string(rows) + " x " + std::to_string(dimension));
  }
  PartitionTable table;
  table.rows = rows;
  table.dimension = dimension;
  table.embeddings.resize(static_cast<std::size_t>(rows * dimension));
  table.adagrad_sum.resize(static_cast<std::size_t>(rows));
  in.read(reinterpret_cast<char*>(table.embeddings.data()),
          static_cast<std::streamsize>(table.embeddings.size() * sizeof(float)));
  in.read(reinterpret_cast<char*>(table.adagrad_sum.data()),
          static_cast<std::streamsize>(table.adagrad_sum.size() * sizeof(float)));
  if (!in || in.peek() != std::char_traits<char>::eof()) {
    throw InputError(file.string(), 0, "", "truncated or too long for its header");
  }
  return table;
}

}  // namespace

PartitionTable initial_partition_table(std::span<const std::int32_t> members, int dimension,
                                       double init_scale, std::uint64_t seed) {
  PartitionTable table;
  table.rows = static_cast<std::int64_t>(members.size());
  table.dimension = dimension;
  table.embeddings.resize(members.size() * static_cast<std::size_t>(dimension));
  table.adagrad_sum.assign(members.size(), 0.0f);
  for (std::size_t offset = 0; offset < members.size(); ++offset) {
    float* row = table.row(static_cast<std::int64_t>(offset));
    for (int j = 0; j < dimension; ++j) {
      row[j] = static_cast<float>(init_scale) *
               standard_normal(hash_mix(seed, static_cast<std::uint64_t>(members[offset]),
                                        static_cast<std::uint64_t>(j)));
    }
  }
  return table;
}

MemoryPartitionStore::MemoryPartitionStore(const EntityPartitioning& partitioning,
                                           const EmbeddingModelConfig& model,
                                           std::uint64_t init_seed) {
  for (int p = 0; p < partitioning.num_partitions(); ++p) {
    tables_.push_back(initial_partition_table(partitioning.members(p), model.dimension,
                                              model.init_scale, init_seed));
  }
}

PartitionTable& MemoryPartitionStore::table(int partition) {
  return tables_.at(static_cast<std::size_t>(partition));
}

DiskPartitionStore::DiskPartitionStore(std::filesystem::path directory,
                                       const EntityPartitioning& partitioning,
                                       const EmbeddingModelConfig& model, std::uint64_t init_seed)
    : directory_(std::move(directory)),
      partitioning_(partitioning),
      model_(model),
      init_seed_(init_seed),
      resident_(static_cast<std::size_t>(partitioning.num_partitions())),
      on_disk_(static_cast<std::size_t>(partitioning.num_partitions()), false) {
  check_output_folder(directory_, "training.swap_directory");
  std::filesystem::create_directories(directory_);
  for (int p = 0; p < partitioning.num_partitions(); ++p) {
    if (std::filesystem::exists(file_of(p))) {
      throw ConfigError("training.swap_directory",
                        directory_.string() + " already holds " + file_of(p).filename().string() +
                            " (another run's partitions?): give an empty directory");
    }
  }
}

DiskPartitionStore::~DiskPartitionStore() {
  for (int p = 0; p < static_cast<int>(on_disk_.size()); ++p) {
    std::error_code ignored;  // scratch files: a failure to remove one must not throw here
    if (on_disk_[static_cast<std::size_t>(p)]) std::filesystem::remove(file_of(p), ignored);
  }
}

std::filesystem::path DiskPartitionStore::file_of(int partition) const {
  return directory_ / ("partition-" + std::to_string(partition) + ".bin");
}

void DiskPartitionStore::store(int partition) {
  const Stopwatch clock;
  std::unique_ptr<PartitionTable>& table = resident_[static_cast<std::size_t>(partition)];
  write_table(file_of(partition), *table);
  on_disk_[static_cast<std::size_t>(partition)] = true;
  swaps_.bytes_written += table->bytes();
  ++swaps_.stores;
  table.reset();
  swaps_.seconds += clock.seconds();
}

void DiskPartitionStore::load(int partition) {
  const Stopwatch clock;
  auto table = std::make_unique<PartitionTable>();
  if (on_disk_[static_cast<std::size_t>(partition)]) {
    *table = read_table(file_of(partition), partitioning_.size(partition), model_.dimension);
    swaps_.bytes_read += table->bytes();
    ++swaps_.loads;
  } else {
    *table = initial_partition_table(partitioning_.members(partition), model_.dimension,
                                     model_.init_scale, init_seed_);
  }
  resident_[static_cast<std::size_t>(partition)] = std::move(table);
  swaps_.seconds += clock.seconds();
}

void DiskPartitionStore::hold(std::span<const int> partitions) {
  for (int p = 0; p < static_cast<int>(resident_.size()); ++p) {
    const bool wanted = std::find(partitions.begin(), partitions.end(), p) != partitions.end();
    if (!wanted && resident_[static_cast<std::size_t>(p)]) store(p);
  }
  for (const int p : partitions) {
    if (!resident_.at(static_cast<std::size_t>(p))) load(p);
  }
}

PartitionTable& DiskPartitionStore::table(int partition) {
  const auto& table = resident_.at(static_cast<std::size_t>(partition));
  if (!table) {
    throw Error("partition " + std::to_string(partition) + " is on disk, not held in memory");
  }
  return *table;
}

std::unique_ptr<PartitionStore> make_partition_store(const EntityPartitioning& partitioning,
                                                     const EmbeddingModelConfig& model,
                                                     const EmbeddingTrainingConfig& training) {
  const std::uint64_t seed = embedding_init_seed(training);
  if (training.swap_directory.empty()) {
    return std::make_unique<MemoryPartitionStore>(partitioning, model, seed);
  }
  return std::make_unique<DiskPartitionStore>(training.swap_directory, partitioning, model, seed);
}

}  // namespace gnnbed
