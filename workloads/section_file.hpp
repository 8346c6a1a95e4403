#pragma once
// The layout gnnbed's binary files share (docs/binary_format.md): a 4096-byte header that starts
// with a common preamble (magic, version, byte order, header and file sizes), then sections that
// each start at a 4096-byte boundary, in the order of the header's section table, zero-padded
// between them and up to the end of the file. Writers lay the sections out and write the file
// atomically; readers check the preamble and the section table against the lengths the header's
// counts imply and against the file's size before viewing any section.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>

#include "workloads/mapped_file.hpp"
#include "workloads/shared_array.hpp"

namespace gnnbed {

inline constexpr std::uint64_t kSectionAlignBytes = 4096;
inline constexpr std::uint64_t kFileHeaderBytes = 4096;
inline constexpr std::uint32_t kByteOrderMark = 0x01020304;

// The first 32 bytes of every header, little-endian.
struct FilePreamble {
  char magic[8];
  std::uint32_t format_version;
  std::uint32_t byte_order;
  std::uint64_t header_bytes;
  std::uint64_t file_bytes;
};
static_assert(sizeof(FilePreamble) == 32);

struct SectionEntry {
  std::uint64_t offset_bytes;
  std::uint64_t length_bytes;
};

// Throws SystemError on a big-endian host: the files are little-endian only.
void require_little_endian_host();

// A preamble for a new file; file_bytes is set by lay_out_sections' caller.
FilePreamble make_preamble(const char (&magic)[8], std::uint32_t format_version);

// One section's content: its length, and how to write exactly that many bytes (no function: an
// empty section). Most sections are a span in memory (of()); a graph computed on demand streams
// its edges in chunks instead.
struct SectionPayload {
  std::uint64_t length_bytes = 0;
  std::function<void(std::ostream&)> write;

  static SectionPayload of(std::span<const std::byte> bytes);
};

// Places sections of the payloads' lengths after the header, each at the first 4096-byte boundary
// after the one before, into `table`; returns the file size (padded to a whole 4096-byte block, so
// that every section, even an empty one, starts inside the file).
std::uint64_t lay_out_sections(std::span<const SectionPayload> payloads,
                               std::span<SectionEntry> table);

// Writes `header` (at most 4096 bytes, zero-padded) and every payload at its table offset, zero
// padding up to `file_bytes`, atomically. Refuses up front (SystemError naming the file and both
// sizes) when the file system has less room than `file_bytes`, and removes temporaries that an
// interrupted earlier write of the same file left behind.
void write_sectioned_file(const std::filesystem::path& path, std::span<const std::byte> header,
                          std::span<const SectionEntry> table,
                          std::span<const SectionPayload> payloads, std::uint64_t file_bytes);

// Checks that `file` is at least `header_size` bytes long and that its preamble has `magic`
// (`what` names that kind of file in the message), the byte order mark, `format_version` and a
// 4096-byte header. Throws InputError(file, 0, "header" or the preamble field, problem).
void check_preamble(const MappedFile& file, std::size_t header_size, const char (&magic)[8],
                    std::uint32_t format_version, const std::string& what);

struct ExpectedSection {
  const char* name;
  std::uint64_t length_bytes;
  const char* implied_by;  // the header counts that imply the length, for messages
};

// Checks every section's alignment, order, length and bounds, then the header's file size, in
// that order; throws InputError(file, 0, section name or "file_bytes", problem).
void check_section_table(const MappedFile& file, std::span<const SectionEntry> table,
                         std::span<const ExpectedSection> expected,
                         std::uint64_t header_file_bytes);

// A view of a section whose bounds and length were checked against the file.
template <typename T>
SharedArray<T> view_section(const std::shared_ptr<const MappedFile>& file,
                            const SectionEntry& section) {
  return SharedArray<T>(file->view<T>(section.offset_bytes, section.length_bytes / sizeof(T)),
                        file);
}

template <typename T>
std::span<const std::byte> section_bytes(std::span<const T> values) {
  return std::as_bytes(values);
}

}  // namespace gnnbed
