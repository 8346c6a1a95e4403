#include "tests/support/npz_writer.hpp"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace gnnbed::testing {
namespace {

std::string npy(const std::string& descr, const std::vector<std::int64_t>& shape,
                bool fortran_order, const void* data, std::size_t bytes) {
  std::string dims;
  for (const std::int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                       ", 'shape': (" + dims + "), }";
  constexpr std::size_t kPrefixBytes = 10;  // magic, version, header length
  header += std::string((64 - (kPrefixBytes + header.size() + 1) % 64) % 64, ' ') + "\n";
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  file.append(static_cast<const char*>(data), bytes);
  return file;
}

void put(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

std::string deflate_raw(const std::string& data) {
  z_stream zip{};
  if (deflateInit2(&zip, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&zip, static_cast<uLong>(data.size())), '\0');
  zip.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zip.avail_in = static_cast<uInt>(data.size());
  zip.next_out = reinterpret_cast<Bytef*>(out.data());
  zip.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&zip, Z_FINISH);
  out.resize(zip.total_out);
  deflateEnd(&zip);
  if (status != Z_STREAM_END) throw std::runtime_error("deflate failed");
  return out;
}

}  // namespace

std::string npy_int64(const std::vector<std::int64_t>& shape, bool fortran_order,
                      std::span<const std::int64_t> values) {
  return npy("<i8", shape, fortran_order, values.data(), values.size_bytes());
}

std::string npy_float64(const std::vector<std::int64_t>& shape, std::span<const double> values) {
  return npy("<f8", shape, false, values.data(), values.size_bytes());
}

void write_npz(const std::filesystem::path& path,
               const std::vector<std::pair<std::string, std::string>>& members, bool deflated) {
  const std::uint16_t method = deflated ? 8 : 0;
  std::string archive;
  std::string directory;
  for (const auto& [array, content] : members) {
    const std::string name = array + ".npy";
    const std::string data = deflated ? deflate_raw(content) : content;
    const auto crc = crc32_z(0, reinterpret_cast<const Bytef*>(content.data()), content.size());
    // The fields a local header and a directory entry share, from "version needed" on.
    std::string common;
    put(common, 20, 2);  // version needed: 2.0
    put(common, 0, 2);   // flags
    put(common, method, 2);
    put(common, 0, 4);  // time and date
    put(common, crc, 4);
    put(common, data.size(), 4);
    put(common, content.size(), 4);
    put(common, name.size(), 2);
    put(common, 0, 2);  // extra field length
    const std::size_t local_header = archive.size();
    put(archive, 0x04034b50, 4);
    archive += common + name + data;
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2);  // version made by
    directory += common;
    put(directory, 0, 2);  // comment length
    put(directory, 0, 2);  // disk
    put(directory, 0, 6);  // internal and external attributes
    put(directory, local_header, 4);
    directory += name;
  }
  const std::size_t directory_offset = archive.size();
  archive += directory;
  put(archive, 0x06054b50, 4);
  put(archive, 0, 4);  // disk numbers
  put(archive, members.size(), 2);
  put(archive, members.size(), 2);
  put(archive, directory.size(), 4);
  put(archive, directory_offset, 4);
  put(archive, 0, 2);  // comment length
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(archive.data(), static_cast<std::streamsize>(archive.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace gnnbed::testing
