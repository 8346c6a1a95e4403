// gnnbed's binary workload file; the layout is documented field by field in docs/binary_format.md.
// Loading trusts nothing in the file: every count, offset and length is checked against the
// others and against the file size before any array is viewed, and the arrays are then validated
// as if they had come from text.
#include "workloads/binary_format.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>

#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/mapped_file.hpp"

namespace gnnbed {
namespace {

constexpr char kMagic[8] = {'G', 'N', 'N', 'B', 'E', 'D', 'W', '1'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kByteOrderMark = 0x01020304;
constexpr std::uint64_t kAlignBytes = 4096;
constexpr std::uint64_t kHeaderBytes = 4096;
constexpr std::uint32_t kFlagHasLabels = 1;
constexpr std::size_t kNameBytes = 128;

enum class FeatureKind : std::uint32_t { none = 0, stored = 1, generated = 2 };

enum Section : std::size_t { kOffsets, kSources, kLabels, kTrain, kVal, kTest, kFeatures, kCount };
constexpr const char* kSectionNames[kCount] = {"offsets", "sources", "labels",  "train",
                                               "val",     "test",    "features"};

struct SectionEntry {
  std::uint64_t offset_bytes;
  std::uint64_t length_bytes;
};

// Written and read with memcpy: a standard-layout struct without padding, little-endian.
struct Header {
  char magic[8];
  std::uint32_t format_version;
  std::uint32_t byte_order;
  std::uint64_t header_bytes;
  std::uint64_t file_bytes;
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
static_assert(sizeof(Header) <= kHeaderBytes);

std::uint64_t align_up(std::uint64_t bytes) {
  return (bytes + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
}

template <typename T>
std::span<const std::byte> bytes_of(std::span<const T> values) {
  return std::as_bytes(values);
}

// A view of a section whose bounds and length were checked against the file.
template <typename T>
SharedArray<T> view_section(const std::shared_ptr<const MappedFile>& file,
                            const SectionEntry& section) {
  return SharedArray<T>(file->view<T>(section.offset_bytes, section.length_bytes / sizeof(T)),
                        file);
}

// The binary file keeps only the parameters of generated features and rebuilds them over the
// dataset's labels, so features made from other labels would silently come back different.
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

}  // namespace

void write_binary_workload(const Dataset& dataset, const std::filesystem::path& path) {
  if constexpr (std::endian::native != std::endian::little) {
    throw SystemError("the binary workload format is little-endian; this host is not");
  }
  dataset.validate("dataset '" + dataset.name + "'");
  if (dataset.name.size() >= kNameBytes) {
    throw Error("dataset name '" + dataset.name + "' is longer than the binary format's " +
                std::to_string(kNameBytes - 1) + " bytes");
  }
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format_version = kFormatVersion;
  header.byte_order = kByteOrderMark;
  header.header_bytes = kHeaderBytes;
  header.num_nodes = dataset.num_nodes();
  header.num_edges = dataset.graph.num_edges();
  header.num_train = static_cast<std::int64_t>(dataset.split.train.size());
  header.num_val = static_cast<std::int64_t>(dataset.split.val.size());
  header.num_test = static_cast<std::int64_t>(dataset.split.test.size());
  header.num_classes = dataset.num_classes;
  header.flags = dataset.labels.empty() ? 0 : kFlagHasLabels;
  std::memcpy(header.name, dataset.name.data(), dataset.name.size());

  std::span<const std::byte> payload[kCount] = {
      bytes_of(dataset.graph.offsets()),
      bytes_of(dataset.graph.sources()),
      bytes_of(dataset.labels.span()),
      bytes_of(std::span<const NodeId>(dataset.split.train)),
      bytes_of(std::span<const NodeId>(dataset.split.val)),
      bytes_of(std::span<const NodeId>(dataset.split.test)),
      {}};
  if (dataset.features) {
    header.feature_dim = dataset.features->dim();
    if (const auto* stored = dynamic_cast<const StoredFeatures*>(dataset.features.get())) {
      header.feature_kind = static_cast<std::uint32_t>(FeatureKind::stored);
      payload[kFeatures] = bytes_of(stored->values());
    } else if (const auto* generated =
                   dynamic_cast<const GeneratedFeatures*>(dataset.features.get())) {
      check_generated_labels(dataset, *generated);
      header.feature_kind = static_cast<std::uint32_t>(FeatureKind::generated);
      header.feature_seed = generated->seed();
      header.feature_signal = generated->signal();
    } else {
      throw Error("dataset '" + dataset.name + "': features of kind " +
                  dataset.features->describe().value("kind", std::string("unknown")) +
                  " cannot be written to a binary workload (only stored or generated)");
    }
  }

  std::uint64_t offset = kHeaderBytes;
  for (std::size_t s = 0; s < kCount; ++s) {
    header.sections[s] = {offset, payload[s].size()};
    offset = align_up(offset + payload[s].size());
  }
  // Padded to a whole number of blocks, so every (possibly empty) section starts inside the file.
  header.file_bytes = offset;

  write_file_atomically(path, [&](std::ostream& out) {
    static constexpr char kZeros[kAlignBytes] = {};
    auto write_bytes = [&](const void* data, std::uint64_t length) {
      out.write(static_cast<const char*>(data), static_cast<std::streamsize>(length));
    };
    write_bytes(&header, sizeof header);
    std::uint64_t written = sizeof header;
    for (std::size_t s = 0; s < kCount; ++s) {
      write_bytes(kZeros, header.sections[s].offset_bytes - written);
      write_bytes(payload[s].data(), payload[s].size());
      written = header.sections[s].offset_bytes + payload[s].size();
    }
    write_bytes(kZeros, header.file_bytes - written);
  });
}

Dataset load_binary_workload(const std::filesystem::path& path) {
  if constexpr (std::endian::native != std::endian::little) {
    throw SystemError("the binary workload format is little-endian; this host is not");
  }
  const std::shared_ptr<const MappedFile> file = MappedFile::open(path);
  const std::string& origin = file->file();
  const std::uint64_t file_bytes = file->size_bytes();
  auto fail = [&](const std::string& field, const std::string& problem) {
    throw InputError(origin, 0, field, problem);
  };
  if (file_bytes < sizeof(Header)) {
    fail("header", "the file has " + std::to_string(file_bytes) + " bytes, fewer than the " +
                       std::to_string(sizeof(Header)) + "-byte header (truncated?)");
  }
  Header header{};
  std::memcpy(&header, file->data(), sizeof header);

  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) {
    fail("magic", "the file does not start with GNNBEDW1 (not a gnnbed binary workload)");
  }
  if (header.byte_order != kByteOrderMark) {
    fail("byte_order", "the file was written with another byte order");
  }
  if (header.format_version != kFormatVersion) {
    fail("format_version", "version " + std::to_string(header.format_version) +
                               ", this build reads version " + std::to_string(kFormatVersion));
  }
  if (header.header_bytes != kHeaderBytes) {
    fail("header_bytes",
         std::to_string(header.header_bytes) + ", expected " + std::to_string(kHeaderBytes));
  }
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
  if (header.num_classes < 0) fail("num_classes", std::to_string(header.num_classes) + " < 0");
  if ((header.flags & ~kFlagHasLabels) != 0) {
    fail("flags", "unknown bits set (" + std::to_string(header.flags) + ")");
  }
  const bool has_labels = (header.flags & kFlagHasLabels) != 0;
  const auto kind = static_cast<FeatureKind>(header.feature_kind);
  if (header.feature_kind > static_cast<std::uint32_t>(FeatureKind::generated)) {
    fail("feature_kind", std::to_string(header.feature_kind) + " is not 0, 1 or 2");
  }
  if (kind == FeatureKind::none ? header.feature_dim != 0 : header.feature_dim <= 0) {
    fail("feature_dim", std::to_string(header.feature_dim) + " does not suit feature kind " +
                            std::to_string(header.feature_kind));
  }
  if (kind == FeatureKind::generated && !has_labels) {
    fail("feature_kind", "generated features need labels, but the file has none");
  }

  const auto stored_values =
      kind == FeatureKind::stored ? static_cast<std::uint64_t>(n) * header.feature_dim : 0;
  const std::uint64_t expected[kCount] = {
      (static_cast<std::uint64_t>(n) + 1) * sizeof(EdgeIndex),
      static_cast<std::uint64_t>(header.num_edges) * sizeof(NodeId),
      has_labels ? static_cast<std::uint64_t>(n) * sizeof(std::int32_t) : 0,
      static_cast<std::uint64_t>(header.num_train) * sizeof(NodeId),
      static_cast<std::uint64_t>(header.num_val) * sizeof(NodeId),
      static_cast<std::uint64_t>(header.num_test) * sizeof(NodeId),
      stored_values * sizeof(float)};
  const char* implied_by[kCount] = {
      "num_nodes + 1",          "num_edges", "num_nodes", "num_train", "num_val", "num_test",
      "num_nodes x feature_dim"};
  std::uint64_t previous_end = kHeaderBytes;
  for (std::size_t s = 0; s < kCount; ++s) {
    const SectionEntry& section = header.sections[s];
    const std::string name = kSectionNames[s];
    if (section.offset_bytes % kAlignBytes != 0) {
      fail(name, "section starts at byte " + std::to_string(section.offset_bytes) +
                     ", not a multiple of " + std::to_string(kAlignBytes));
    }
    if (section.offset_bytes < previous_end) {
      fail(name, "section starts at byte " + std::to_string(section.offset_bytes) +
                     ", inside the header or the section before it");
    }
    if (section.length_bytes != expected[s]) {
      fail(name, "section holds " + std::to_string(section.length_bytes) + " bytes but " +
                     implied_by[s] + " implies " + std::to_string(expected[s]));
    }
    if (section.offset_bytes > file_bytes ||
        section.length_bytes > file_bytes - section.offset_bytes) {
      fail(name, "section '" + name + "' ends at byte " +
                     std::to_string(section.offset_bytes + section.length_bytes) +
                     " but the file has " + std::to_string(file_bytes) + " bytes (truncated?)");
    }
    previous_end = section.offset_bytes + section.length_bytes;
  }
  if (header.file_bytes != file_bytes) {
    fail("file_bytes", "the header says the file has " + std::to_string(header.file_bytes) +
                           " bytes but it has " + std::to_string(file_bytes) +
                           (file_bytes < header.file_bytes ? " (truncated?)" : ""));
  }

  // Validation reads these whole right away: ask for them in one go rather than page by page.
  for (const Section s : {kOffsets, kSources, kLabels}) {
    file->prefetch(header.sections[s].offset_bytes, header.sections[s].length_bytes);
  }
  auto split_ids = [&](Section s) {
    const auto ids = view_section<NodeId>(file, header.sections[s]);
    return std::vector<NodeId>(ids.begin(), ids.end());
  };

  Dataset dataset;
  dataset.name = header.name;
  dataset.num_classes = header.num_classes;
  dataset.graph = Graph(view_section<EdgeIndex>(file, header.sections[kOffsets]),
                        view_section<NodeId>(file, header.sections[kSources]), origin);
  if (has_labels) dataset.labels = view_section<std::int32_t>(file, header.sections[kLabels]);
  dataset.split.train = split_ids(kTrain);
  dataset.split.val = split_ids(kVal);
  dataset.split.test = split_ids(kTest);
  if (kind == FeatureKind::stored) {
    dataset.features = std::make_shared<const StoredFeatures>(
        n, header.feature_dim, view_section<float>(file, header.sections[kFeatures]));
  } else if (kind == FeatureKind::generated) {
    dataset.features = std::make_shared<const GeneratedFeatures>(
        header.feature_dim, dataset.labels, header.feature_signal, header.feature_seed);
  }
  dataset.validate(origin);
  return dataset;
}

}  // namespace gnnbed
