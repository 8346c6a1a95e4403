#include "workloads/section_file.hpp"

#include <bit>
#include <cstring>

#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"

namespace gnnbed {
namespace {

std::uint64_t align_up(std::uint64_t bytes) {
  return (bytes + kSectionAlignBytes - 1) / kSectionAlignBytes * kSectionAlignBytes;
}

}  // namespace

void require_little_endian_host() {
  if constexpr (std::endian::native != std::endian::little) {
    throw SystemError("gnnbed's binary files are little-endian; this host is not");
  }
}

FilePreamble make_preamble(const char (&magic)[8], std::uint32_t format_version) {
  FilePreamble preamble{};
  std::memcpy(preamble.magic, magic, sizeof preamble.magic);
  preamble.format_version = format_version;
  preamble.byte_order = kByteOrderMark;
  preamble.header_bytes = kFileHeaderBytes;
  return preamble;
}

SectionPayload SectionPayload::of(std::span<const std::byte> bytes) {
  return {bytes.size(), [bytes](std::ostream& out) {
            out.write(reinterpret_cast<const char*>(bytes.data()),
                      static_cast<std::streamsize>(bytes.size()));
          }};
}

std::uint64_t lay_out_sections(std::span<const SectionPayload> payloads,
                               std::span<SectionEntry> table) {
  std::uint64_t offset = kFileHeaderBytes;
  for (std::size_t s = 0; s < payloads.size(); ++s) {
    table[s] = {offset, payloads[s].length_bytes};
    offset = align_up(offset + payloads[s].length_bytes);
  }
  return offset;
}

void write_sectioned_file(const std::filesystem::path& path, std::span<const std::byte> header,
                          std::span<const SectionEntry> table,
                          std::span<const SectionPayload> payloads, std::uint64_t file_bytes) {
  remove_stale_temporaries(path);
  require_free_space(path, file_bytes);
  write_file_atomically(path, [&](std::ostream& out) {
    static constexpr char kZeros[kSectionAlignBytes] = {};
    auto write_bytes = [&](const void* data, std::uint64_t length) {
      out.write(static_cast<const char*>(data), static_cast<std::streamsize>(length));
    };
    write_bytes(header.data(), header.size());
    std::uint64_t written = header.size();
    for (std::size_t s = 0; s < payloads.size(); ++s) {
      write_bytes(kZeros, table[s].offset_bytes - written);
      const auto before = static_cast<std::uint64_t>(out.tellp());
      if (payloads[s].write) payloads[s].write(out);
      const auto wrote = static_cast<std::uint64_t>(out.tellp()) - before;
      if (out && wrote != payloads[s].length_bytes) {
        throw Error("writing " + path.string() + ": section " + std::to_string(s) + " wrote " +
                    std::to_string(wrote) + " bytes, its table entry says " +
                    std::to_string(payloads[s].length_bytes));
      }
      written = table[s].offset_bytes + payloads[s].length_bytes;
    }
    write_bytes(kZeros, file_bytes - written);
  });
}

void check_preamble(const MappedFile& file, std::size_t header_size, const char (&magic)[8],
                    std::uint32_t format_version, const std::string& what) {
  auto fail = [&](const std::string& field, const std::string& problem) {
    throw InputError(file.file(), 0, field, problem);
  };
  if (file.size_bytes() < header_size) {
    fail("header", "the file has " + std::to_string(file.size_bytes()) + " bytes, fewer than the " +
                       std::to_string(header_size) + "-byte header (truncated?)");
  }
  FilePreamble preamble{};
  std::memcpy(&preamble, file.data(), sizeof preamble);
  if (std::memcmp(preamble.magic, magic, sizeof preamble.magic) != 0) {
    fail("magic", "the file does not start with " + std::string(magic, sizeof preamble.magic) +
                      " (not " + what + ")");
  }
  if (preamble.byte_order != kByteOrderMark) {
    fail("byte_order", "the file was written with another byte order");
  }
  if (preamble.format_version != format_version) {
    fail("format_version", "version " + std::to_string(preamble.format_version) +
                               ", this build reads version " + std::to_string(format_version));
  }
  if (preamble.header_bytes != kFileHeaderBytes) {
    fail("header_bytes",
         std::to_string(preamble.header_bytes) + ", expected " + std::to_string(kFileHeaderBytes));
  }
}

void check_section_table(const MappedFile& file, std::span<const SectionEntry> table,
                         std::span<const ExpectedSection> expected,
                         std::uint64_t header_file_bytes) {
  const std::uint64_t file_bytes = file.size_bytes();
  auto fail = [&](const std::string& field, const std::string& problem) {
    throw InputError(file.file(), 0, field, problem);
  };
  std::uint64_t previous_end = kFileHeaderBytes;
  for (std::size_t s = 0; s < expected.size(); ++s) {
    const SectionEntry& section = table[s];
    const std::string name = expected[s].name;
    if (section.offset_bytes % kSectionAlignBytes != 0) {
      fail(name, "section starts at byte " + std::to_string(section.offset_bytes) +
                     ", not a multiple of " + std::to_string(kSectionAlignBytes));
    }
    if (section.offset_bytes < previous_end) {
      fail(name, "section starts at byte " + std::to_string(section.offset_bytes) +
                     ", inside the header or the section before it");
    }
    if (section.length_bytes != expected[s].length_bytes) {
      fail(name, "section holds " + std::to_string(section.length_bytes) + " bytes but " +
                     expected[s].implied_by + " implies " +
                     std::to_string(expected[s].length_bytes));
    }
    if (section.offset_bytes > file_bytes ||
        section.length_bytes > file_bytes - section.offset_bytes) {
      fail(name, "section '" + name + "' ends at byte " +
                     std::to_string(section.offset_bytes + section.length_bytes) +
                     " but the file has " + std::to_string(file_bytes) + " bytes (truncated?)");
    }
    previous_end = section.offset_bytes + section.length_bytes;
  }
  if (header_file_bytes != file_bytes) {
    fail("file_bytes", "the header says the file has " + std::to_string(header_file_bytes) +
                           " bytes but it has " + std::to_string(file_bytes) +
                           (file_bytes < header_file_bytes ? " (truncated?)" : ""));
  }
}

}  // namespace gnnbed
