#pragma once
// gnnbed's own binary workload file: one file, fixed header, 4 KiB-aligned sections (CSR offsets,
// CSR sources, labels, split, stored features), little-endian. Loading memory-maps the file, so a
// generated 60 M-edge graph loads in the time it takes to validate it. See docs/binary_format.md.
#include <filesystem>

#include "workloads/common/progress.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

// Writes atomically (a temporary beside `path`, renamed when complete; refused up front when the
// disk lacks room). Stored features are written as float32 rows; generated features are written
// as their parameters only. An implicit graph's lists are computed and written chunk by chunk,
// reporting (edges written, edges) to `progress`.
void write_binary_workload(const Dataset& dataset, const std::filesystem::path& path,
                           const ProgressCallback& progress = {});

// Source-id sections up to this size are checked whole when loaded; larger ones as they are used
// (SourceCheck::on_use), so that a sampled simulation of a billion-edge file reads only the pages
// its batches touch.
inline constexpr std::uint64_t kEagerSourceCheckBytes = std::uint64_t{1} << 30;

// Maps the file and validates header, section bounds, graph and dataset; throws InputError naming
// the file and the header field or section at fault (wrong magic, version, truncation, ...).
Dataset load_binary_workload(const std::filesystem::path& path);
// The same, with source ids checked whole at load only up to `eager_source_check_bytes`.
Dataset load_binary_workload(const std::filesystem::path& path,
                             std::uint64_t eager_source_check_bytes);

// gnnbed's binary files keep only the parameters of generated features and rebuild them over the
// dataset's labels, so features made from other labels would silently come back different: throws
// Error for those.
void check_generated_labels(const Dataset& dataset, const GeneratedFeatures& generated);

}  // namespace gnnbed
