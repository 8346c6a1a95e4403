// The offsets of an implicit R-MAT-by-rows graph, kept in a file so that a run that needs the
// graph again maps them instead of drawing every node's degree (10-17 s for the billion-edge
// presets). The layout is section_file.hpp's: a header naming the parameters, one section.
#include <cstring>

#include "workloads/common/errors.hpp"
#include "workloads/mapped_file.hpp"
#include "workloads/rmat_rows.hpp"
#include "workloads/section_file.hpp"

namespace gnnbed {
namespace {

constexpr char kMagic[8] = {'G', 'N', 'N', 'B', 'E', 'D', 'O', '1'};
constexpr std::uint32_t kFormatVersion = 1;

struct OffsetsHeader {
  FilePreamble preamble;
  std::int64_t num_nodes;
  std::int64_t expected_edges;
  std::uint64_t seed;
  double a, b, c;
  SectionEntry offsets;
};
static_assert(sizeof(OffsetsHeader) == 96);  // no padding: written with memcpy

OffsetsHeader header_for(const RmatRowsParams& params) {
  OffsetsHeader header{};
  header.preamble = make_preamble(kMagic, kFormatVersion);
  header.num_nodes = params.num_nodes;
  header.expected_edges = params.num_edges;
  header.seed = params.seed;
  header.a = params.a;
  header.b = params.b;
  header.c = params.c;
  return header;
}

// The mapped offsets, or a null array when the file was written for other parameters (InputError
// for a damaged file).
SharedArray<EdgeIndex> mapped_offsets(const std::filesystem::path& path,
                                      const RmatRowsParams& params) {
  const std::shared_ptr<const MappedFile> file = MappedFile::open(path);
  check_preamble(*file, sizeof(OffsetsHeader), kMagic, kFormatVersion, "a gnnbed offsets file");
  OffsetsHeader header{};
  std::memcpy(&header, file->data(), sizeof header);
  const OffsetsHeader expected = header_for(params);
  if (header.num_nodes != expected.num_nodes || header.expected_edges != expected.expected_edges ||
      header.seed != expected.seed || header.a != expected.a || header.b != expected.b ||
      header.c != expected.c) {
    throw InputError(file->file(), 0, "header",
                     "was written for other R-MAT parameters than its name says");
  }
  const ExpectedSection section{
      "offsets", (static_cast<std::uint64_t>(params.num_nodes) + 1) * sizeof(EdgeIndex),
      "num_nodes + 1"};
  check_section_table(*file, std::span(&header.offsets, 1), std::span(&section, 1),
                      header.preamble.file_bytes);
  return view_section<EdgeIndex>(file, header.offsets);
}

void write_offsets(const std::filesystem::path& path, const RmatRowsParams& params,
                   std::span<const EdgeIndex> offsets) {
  require_little_endian_host();
  OffsetsHeader header = header_for(params);
  const SectionPayload payload = SectionPayload::of(std::as_bytes(offsets));
  header.preamble.file_bytes =
      lay_out_sections(std::span(&payload, 1), std::span(&header.offsets, 1));
  write_sectioned_file(path, std::as_bytes(std::span(&header, 1)), std::span(&header.offsets, 1),
                       std::span(&payload, 1), header.preamble.file_bytes);
}

}  // namespace

Graph implicit_rmat_rows_graph(const RmatRowsParams& params, const std::string& offsets_file,
                               const ProgressCallback& progress) {
  auto generator = std::make_shared<const RmatRowsGenerator>(params);
  if (std::filesystem::exists(offsets_file)) {
    return Graph(mapped_offsets(offsets_file, params), std::move(generator), offsets_file);
  }
  std::vector<EdgeIndex> offsets = rmat_rows_offsets(*generator, progress);
  write_offsets(offsets_file, params, offsets);
  return Graph(SharedArray(std::move(offsets)), std::move(generator), "rmat-rows");
}

}  // namespace gnnbed
