#pragma once
// Sparse features (CSR rows) as one section of a sectioned file: the binary workload format's
// features (feature kind 3) and a shard's placed part of them. The section holds the row offsets
// (int64, rows + 1), then the columns (int32, nonzeros), then the values (float32, nonzeros).
#include <cstdint>
#include <memory>

#include "workloads/mapped_file.hpp"
#include "workloads/section_file.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {

// The bytes of a section holding `rows` rows with `nonzeros` entries.
constexpr std::uint64_t sparse_section_bytes(std::uint64_t rows, std::uint64_t nonzeros) {
  return (rows + 1) * sizeof(std::int64_t) + nonzeros * (sizeof(std::int32_t) + sizeof(float));
}

// The section's payload: the CSR arrays, one after the other.
SectionPayload sparse_features_payload(const SparseFeatures& features);
// Views a section of that layout (its length checked against sparse_section_bytes) as rows of
// `dim` columns, checked whole (InputError naming the file and field "features").
std::shared_ptr<const SparseFeatures> view_sparse_features(
    const std::shared_ptr<const MappedFile>& file, const SectionEntry& section,
    std::int64_t num_nodes, int dim, std::uint64_t nonzeros);

}  // namespace gnnbed
