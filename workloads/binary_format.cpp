// gnnbed's binary workload file; the layout is documented field by field in docs/binary_format.md.
// Loading trusts nothing in the file: every count, offset and length is checked against the
// others and against the file size before any array is viewed, and the arrays are then validated
// as if they had come from text.
#include "workloads/binary_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/mapped_file.hpp"
#include "workloads/section_file.hpp"
#include "workloads/sparse_features.hpp"
#include "workloads/sparse_section.hpp"

namespace gnnbed {
namespace {

constexpr char kMagic[8] = {'G', 'N', 'N', 'B', 'E', 'D', 'W', '1'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kFlagHasLabels = 1;
constexpr std::size_t kNameBytes = 128;

// Sparse features keep their non-zero count in the header's feature_seed field, and their CSR
// arrays one after the other in the features section: row offsets (int64, num_nodes + 1), columns
// (int32, nonzeros), values (float32, nonzeros).
enum class FeatureKind : std::uint32_t { none = 0, stored = 1, generated = 2, sparse = 3 };

enum Section : std::size_t { kOffsets, kSources, kLabels, kTrain, kVal, kTest, kFeatures, kCount };
constexpr const char* kSectionNames[kCount] = {"offsets", "sources", "labels",  "train",
                                               "val",     "test",    "features"};

// Written and read with memcpy: a standard-layout struct without padding, little-endian.
struct Header {
  FilePreamble preamble;
  std::int64_t num_nodes;
  std::int64_t num_edges;
  std::int64_t num_train;
  std::int64_t num_val;
  std::int64_t num_test;
  std::int32_t num_classes;
  std::uint32_t flags;
  std::uint32_t feature_kind;
  std::int32_t feature_dim;
  std::uint64_t feature_seed;
  float feature_signal;
  std::uint32_t reserved;
  char name[kNameBytes];
  SectionEntry sections[kCount];
};
static_assert(offsetof(Header, num_nodes) == 32);
static_assert(offsetof(Header, num_classes) == 72);
static_assert(offsetof(Header, feature_seed) == 88);
static_assert(offsetof(Header, name) == 104);
static_assert(offsetof(Header, sections) == 232);
static_assert(sizeof(Header) == 344);
static_assert(sizeof(Header) <= kFileHeaderBytes);

// Edges per chunk when streaming an implicit graph's lists: 64 MiB of ids, computed in parallel.
constexpr std::int64_t kStreamedEdgesPerChunk = std::int64_t{1} << 24;

// The lists of a stored graph as they lie; those of an implicit graph computed chunk by chunk of
// nodes and written as they come, so that writing holds O(nodes + chunk) memory.
SectionPayload sources_payload(const Graph& graph, const ProgressCallback& progress) {
  if (!graph.is_implicit()) {
    SectionPayload payload = SectionPayload::of(section_bytes(graph.sources()));
    if (progress) progress(graph.num_edges(), graph.num_edges());
    return payload;
  }
  const auto length = static_cast<std::uint64_t>(graph.num_edges()) * sizeof(NodeId);
  return {
      length, [&graph, progress](std::ostream& out) {
        const std::span<const EdgeIndex> offsets = graph.offsets();
        const std::int64_t n = graph.num_nodes();
        std::vector<NodeId> chunk;
        for (std::int64_t first = 0; first < n;) {
          // Whole rows, about kStreamedEdgesPerChunk edges (at least one row).
          const EdgeIndex target =
              offsets[static_cast<std::size_t>(first)] + kStreamedEdgesPerChunk;
          const auto end_row = std::upper_bound(offsets.begin() + first + 1, offsets.end(), target);
          const std::int64_t last =
              std::max(first + 1, static_cast<std::int64_t>(end_row - offsets.begin()) - 1);
          const EdgeIndex base = offsets[static_cast<std::size_t>(first)];
          chunk.resize(static_cast<std::size_t>(offsets[static_cast<std::size_t>(last)] - base));
#pragma omp parallel for schedule(dynamic, 256)
          for (std::int64_t v = first; v < last; ++v) {
            graph.copy_in_neighbors(static_cast<NodeId>(v),
                                    chunk.data() + (offsets[static_cast<std::size_t>(v)] - base));
          }
          out.write(reinterpret_cast<const char*>(chunk.data()),
                    static_cast<std::streamsize>(chunk.size() * sizeof(NodeId)));
          if (!out) return;  // write_file_atomically reports the failed stream
          first = last;
          if (progress) progress(offsets[static_cast<std::size_t>(first)], graph.num_edges());
        }
      }};
}

}  // namespace

void check_generated_labels(const Dataset& dataset, const GeneratedFeatures& generated) {
  if (dataset.labels.empty()) {
    throw Error("dataset '" + dataset.name +
                "' has generated features but no labels; the binary format rebuilds generated "
                "features from the dataset's labels");
  }
  const GeneratedFeatures rebuilt(generated.dim(), dataset.labels, generated.signal(),
                                  generated.seed());
  const std::int64_t n = dataset.num_nodes();
  const std::int64_t samples = std::min<std::int64_t>(n, 4096);
  for (std::int64_t k = 0; k < samples; ++k) {
    const auto v = static_cast<NodeId>(k * n / samples);
    for (int j = 0; j < std::min(generated.dim(), 4); ++j) {
      if (generated.value(v, j) != rebuilt.value(v, j)) {
        throw Error("dataset '" + dataset.name +
                    "': its generated features were made from labels other than the dataset's "
                    "(node " +
                    std::to_string(v) + " differs); the binary format cannot keep them");
      }
    }
  }
}

void write_binary_workload(const Dataset& dataset, const std::filesystem::path& path,
                           const ProgressCallback& progress) {
  require_little_endian_host();
  dataset.validate("dataset '" + dataset.name + "'");
  if (dataset.name.size() >= kNameBytes) {
    throw Error("dataset name '" + dataset.name + "' is longer than the binary format's " +
                std::to_string(kNameBytes - 1) + " bytes");
  }
  Header header{};
  header.preamble = make_preamble(kMagic, kFormatVersion);
  header.num_nodes = dataset.num_nodes();
  header.num_edges = dataset.graph.num_edges();
  header.num_train = static_cast<std::int64_t>(dataset.split.train.size());
  header.num_val = static_cast<std::int64_t>(dataset.split.val.size());
  header.num_test = static_cast<std::int64_t>(dataset.split.test.size());
  header.num_classes = dataset.num_classes;
  header.flags = dataset.labels.empty() ? 0 : kFlagHasLabels;
  std::memcpy(header.name, dataset.name.data(), dataset.name.size());

  SectionPayload payload[kCount] = {
      SectionPayload::of(section_bytes(dataset.graph.offsets())),
      sources_payload(dataset.graph, progress),
      SectionPayload::of(section_bytes(dataset.labels.span())),
      SectionPayload::of(section_bytes(std::span<const NodeId>(dataset.split.train))),
      SectionPayload::of(section_bytes(std::span<const NodeId>(dataset.split.val))),
      SectionPayload::of(section_bytes(std::span<const NodeId>(dataset.split.test))),
      {}};
  if (dataset.features) {
    header.feature_dim = dataset.features->dim();
    if (const auto* stored = dynamic_cast<const StoredFeatures*>(dataset.features.get())) {
      header.feature_kind = static_cast<std::uint32_t>(FeatureKind::stored);
      payload[kFeatures] = SectionPayload::of(section_bytes(stored->values()));
    } else if (const auto* sparse = dynamic_cast<const SparseFeatures*>(dataset.features.get())) {
      header.feature_kind = static_cast<std::uint32_t>(FeatureKind::sparse);
      header.feature_seed = static_cast<std::uint64_t>(sparse->nonzeros());
      payload[kFeatures] = sparse_features_payload(*sparse);
    } else if (const auto* generated =
                   dynamic_cast<const GeneratedFeatures*>(dataset.features.get())) {
      check_generated_labels(dataset, *generated);
      header.feature_kind = static_cast<std::uint32_t>(FeatureKind::generated);
      header.feature_seed = generated->seed();
      header.feature_signal = generated->signal();
    } else {
      throw Error("dataset '" + dataset.name + "': features of kind " +
                  dataset.features->describe().value("kind", std::string("unknown")) +
                  " cannot be written to a binary workload (only stored, sparse or generated)");
    }
  }

  header.preamble.file_bytes = lay_out_sections(payload, header.sections);
  write_sectioned_file(path, std::as_bytes(std::span(&header, 1)), header.sections, payload,
                       header.preamble.file_bytes);
}

Dataset load_binary_workload(const std::filesystem::path& path) {
  return load_binary_workload(path, kEagerSourceCheckBytes);
}

Dataset load_binary_workload(const std::filesystem::path& path,
                             std::uint64_t eager_source_check_bytes) {
  require_little_endian_host();
  const std::shared_ptr<const MappedFile> file = MappedFile::open(path);
  const std::string& origin = file->file();
  auto fail = [&](const std::string& field, const std::string& problem) {
    throw InputError(origin, 0, field, problem);
  };
  check_preamble(*file, sizeof(Header), kMagic, kFormatVersion, "a gnnbed binary workload");
  Header header{};
  std::memcpy(&header, file->data(), sizeof header);
  if (std::memchr(header.name, 0, kNameBytes) == nullptr) fail("name", "is not NUL-terminated");
  const std::int64_t n = header.num_nodes;
  if (n < 0 || n > std::numeric_limits<NodeId>::max()) {
    fail("num_nodes", std::to_string(n) + " is outside [0, 2^31 - 1]");
  }
  // Bounds that keep every length below computed without overflow.
  constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max() / 8;
  if (header.num_edges < 0 || header.num_edges > kMaxCount) {
    fail("num_edges", std::to_string(header.num_edges) + " is not a valid edge count");
  }
  const std::pair<const char*, std::int64_t> split_counts[] = {
      {"num_train", header.num_train}, {"num_val", header.num_val}, {"num_test", header.num_test}};
  for (const auto& [field, count] : split_counts) {
    if (count < 0 || count > n) {
      fail(field, std::to_string(count) + " is outside [0, num_nodes = " + std::to_string(n) + "]");
    }
  }
  if (header.num_classes < 0 || header.num_classes > std::max<std::int64_t>(n, 1)) {
    fail("num_classes", std::to_string(header.num_classes) + " is outside [0, num_nodes = " +
                            std::to_string(n) + "]: every class needs a node");
  }
  if ((header.flags & ~kFlagHasLabels) != 0) {
    fail("flags", "unknown bits set (" + std::to_string(header.flags) + ")");
  }
  const bool has_labels = (header.flags & kFlagHasLabels) != 0;
  const auto kind = static_cast<FeatureKind>(header.feature_kind);
  if (header.feature_kind > static_cast<std::uint32_t>(FeatureKind::sparse)) {
    fail("feature_kind", std::to_string(header.feature_kind) + " is not 0, 1, 2 or 3");
  }
  if (kind == FeatureKind::none ? header.feature_dim != 0 : header.feature_dim <= 0) {
    fail("feature_dim", std::to_string(header.feature_dim) + " does not suit feature kind " +
                            std::to_string(header.feature_kind));
  }
  if (kind == FeatureKind::generated && !std::isfinite(header.feature_signal)) {
    fail("feature_signal", "is not finite");
  }
  if (kind == FeatureKind::generated && !has_labels) {
    fail("feature_kind", "generated features need labels, but the file has none");
  }
  if (kind == FeatureKind::generated) {
    require_memory_for_generated_features(header.num_classes, header.feature_dim, origin);
  }

  const auto stored_values =
      kind == FeatureKind::stored ? static_cast<std::uint64_t>(n) * header.feature_dim : 0;
  const std::uint64_t sparse_nonzeros = kind == FeatureKind::sparse ? header.feature_seed : 0;
  if (kind == FeatureKind::sparse &&
      sparse_nonzeros >
          static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(header.feature_dim)) {
    fail("feature_seed", "sparse features' " + std::to_string(sparse_nonzeros) +
                             " non-zeros exceed num_nodes x feature_dim");
  }
  const std::uint64_t feature_bytes =
      kind == FeatureKind::sparse
          ? sparse_section_bytes(static_cast<std::uint64_t>(n), sparse_nonzeros)
          : stored_values * sizeof(float);
  const std::uint64_t expected[kCount] = {
      (static_cast<std::uint64_t>(n) + 1) * sizeof(EdgeIndex),
      static_cast<std::uint64_t>(header.num_edges) * sizeof(NodeId),
      has_labels ? static_cast<std::uint64_t>(n) * sizeof(std::int32_t) : 0,
      static_cast<std::uint64_t>(header.num_train) * sizeof(NodeId),
      static_cast<std::uint64_t>(header.num_val) * sizeof(NodeId),
      static_cast<std::uint64_t>(header.num_test) * sizeof(NodeId),
      feature_bytes};
  const char* implied_by[kCount] = {
      "num_nodes + 1",
      "num_edges",
      "num_nodes",
      "num_train",
      "num_val",
      "num_test",
      kind == FeatureKind::sparse ? "8 (num_nodes + 1) + 8 nonzeros" : "num_nodes x feature_dim"};
  ExpectedSection sections[kCount];
  for (std::size_t s = 0; s < kCount; ++s) {
    sections[s] = {kSectionNames[s], expected[s], implied_by[s]};
  }
  check_section_table(*file, header.sections, sections, header.preamble.file_bytes);

  // Validation reads these whole right away: ask for them in one go rather than page by page.
  for (const Section s : {kOffsets, kSources, kLabels}) {
    if (s == kSources && header.sections[s].length_bytes > eager_source_check_bytes) {
      file->expect_random_reads(header.sections[s].offset_bytes, header.sections[s].length_bytes);
      continue;
    }
    file->prefetch(header.sections[s].offset_bytes, header.sections[s].length_bytes);
  }
  auto split_ids = [&](Section s) {
    const auto ids = view_section<NodeId>(file, header.sections[s]);
    return std::vector<NodeId>(ids.begin(), ids.end());
  };

  Dataset dataset;
  dataset.name = header.name;
  dataset.num_classes = header.num_classes;
  // A large graph is mapped, not read: its ids are checked as they are used (SourceCheck).
  const SourceCheck check = header.sections[kSources].length_bytes <= eager_source_check_bytes
                                ? SourceCheck::at_construction
                                : SourceCheck::on_use;
  dataset.graph = Graph(view_section<EdgeIndex>(file, header.sections[kOffsets]),
                        view_section<NodeId>(file, header.sections[kSources]), origin, check);
  if (has_labels) dataset.labels = view_section<std::int32_t>(file, header.sections[kLabels]);
  dataset.split.train = split_ids(kTrain);
  dataset.split.val = split_ids(kVal);
  dataset.split.test = split_ids(kTest);
  if (kind == FeatureKind::stored) {
    SharedArray<float> values = view_section<float>(file, header.sections[kFeatures]);
    if (const std::string bad = non_finite_feature(values.span(), header.feature_dim);
        !bad.empty()) {
      fail("features", bad);
    }
    dataset.features =
        std::make_shared<const StoredFeatures>(n, header.feature_dim, std::move(values));
  } else if (kind == FeatureKind::sparse) {
    file->prefetch(header.sections[kFeatures].offset_bytes,
                   header.sections[kFeatures].length_bytes);
    dataset.features = view_sparse_features(file, header.sections[kFeatures], n, header.feature_dim,
                                            sparse_nonzeros);
  }
  dataset.validate(origin);
  // Generated features size their class means by the largest label: built once labels are checked.
  if (kind == FeatureKind::generated) {
    dataset.features = std::make_shared<const GeneratedFeatures>(
        header.feature_dim, dataset.labels, header.feature_signal, header.feature_seed);
  }
  return dataset;
}

}  // namespace gnnbed
