#include "workloads/npz_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64EndLocator = 0x07064b50;
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::size_t kEndOfDirectoryBytes = 22;
constexpr std::size_t kDirectoryEntryBytes = 46;
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::uint16_t kZip64Extra = 0x0001;
constexpr std::uint32_t kZip32Saturated = 0xFFFFFFFF;
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

std::uint64_t little_endian(const unsigned char* bytes, int count) {
  std::uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

// Bytes at `offset` of the archive, all of them or an InputError saying what was being read.
std::vector<unsigned char> read_at(std::ifstream& in, const std::string& file, std::uint64_t offset,
                                   std::size_t count, const std::string& what) {
  std::vector<unsigned char> bytes(count);
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count));
  if (!in || static_cast<std::size_t>(in.gcount()) != count) {
    throw InputError(
        file, 0, "",
        "truncated zip archive: cannot read " + what + " at byte " + std::to_string(offset));
  }
  return bytes;
}

float half_to_float(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const int exponent = (half >> 10) & 0x1f;
  std::uint32_t mantissa = half & 0x3ffu;
  std::uint32_t bits = 0;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity or NaN
  } else if (exponent != 0) {
    bits = sign | (static_cast<std::uint32_t>(exponent - 15 + 127) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {
    int shift = 0;  // subnormal: normalise
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (static_cast<std::uint32_t>(127 - 15 - shift + 1) << 23) |
           ((mantissa & 0x3ffu) << 13);
  } else {
    bits = sign;
  }
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// One element of `type` at `bytes` (little-endian), as Value.
template <typename Value>
Value element_value(NpyType type, const unsigned char* bytes) {
  auto load = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  };
  switch (type) {
    case NpyType::int8:
      return static_cast<Value>(load(std::int8_t{}));
    case NpyType::int16:
      return static_cast<Value>(load(std::int16_t{}));
    case NpyType::int32:
      return static_cast<Value>(load(std::int32_t{}));
    case NpyType::int64:
      return static_cast<Value>(load(std::int64_t{}));
    case NpyType::uint8:
      return static_cast<Value>(load(std::uint8_t{}));
    case NpyType::uint16:
      return static_cast<Value>(load(std::uint16_t{}));
    case NpyType::uint32:
      return static_cast<Value>(load(std::uint32_t{}));
    case NpyType::uint64:
      return static_cast<Value>(load(std::uint64_t{}));
    case NpyType::float16:
      return static_cast<Value>(half_to_float(load(std::uint16_t{})));
    case NpyType::float32:
      return static_cast<Value>(load(float{}));
    case NpyType::float64:
      return static_cast<Value>(load(double{}));
    case NpyType::boolean:
      return static_cast<Value>(bytes[0] != 0);
  }
  return Value{};
}

// `count` elements, one every `stride` bytes from `raw`, as Value.
template <typename Value>
void convert_elements(NpyType type, const unsigned char* raw, std::size_t stride, std::size_t count,
                      Value* out) {
  for (std::size_t i = 0; i < count; ++i) out[i] = element_value<Value>(type, raw + i * stride);
}

void require_integers(const NpyHeader& header, const std::string& where) {
  const NpyType type = header.type;
  if (type == NpyType::float16 || type == NpyType::float32 || type == NpyType::float64 ||
      type == NpyType::boolean) {
    throw InputError(where, 0, "descr", "holds no integers (ids must be an integer array)");
  }
}

// The text after `key` in the header dictionary, up to the next top-level ',' or '}'.
std::string header_value(const std::string& header, const std::string& key,
                         const std::string& where) {
  const std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) throw InputError(where, 0, key, "missing from the .npy header");
  std::size_t begin = header.find(':', at);
  if (begin == std::string::npos) throw InputError(where, 0, key, "has no value in the header");
  ++begin;
  int depth = 0;
  std::size_t end = begin;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string value = header.substr(begin, end - begin);
  const auto first = value.find_first_not_of(" ");
  const auto last = value.find_last_not_of(" ");
  return first == std::string::npos ? "" : value.substr(first, last - first + 1);
}

std::pair<NpyType, int> parse_descr(const std::string& quoted, const std::string& where) {
  if (quoted.size() < 5 || (quoted.front() != '\'' && quoted.front() != '"')) {
    throw InputError(where, 0, "descr",
                     quoted + " is not a simple type (structured arrays are not read)");
  }
  const std::string descr = quoted.substr(1, quoted.size() - 2);
  const char order = descr[0];
  const char kind = descr[1];
  int bytes = 0;
  try {
    bytes = std::stoi(descr.substr(2));
  } catch (const std::exception&) {
    throw InputError(where, 0, "descr", "'" + descr + "' has no element size");
  }
  if (order == '>' && bytes > 1) {
    throw InputError(where, 0, "descr", "'" + descr + "' is big-endian; save it little-endian");
  }
  const std::array<std::pair<std::string, NpyType>, 12> known = {{{"i1", NpyType::int8},
                                                                  {"i2", NpyType::int16},
                                                                  {"i4", NpyType::int32},
                                                                  {"i8", NpyType::int64},
                                                                  {"u1", NpyType::uint8},
                                                                  {"u2", NpyType::uint16},
                                                                  {"u4", NpyType::uint32},
                                                                  {"u8", NpyType::uint64},
                                                                  {"f2", NpyType::float16},
                                                                  {"f4", NpyType::float32},
                                                                  {"f8", NpyType::float64},
                                                                  {"b1", NpyType::boolean}}};
  for (const auto& [name, type] : known) {
    if (name[0] == kind && name.substr(1) == std::to_string(bytes)) return {type, bytes};
  }
  throw InputError(where, 0, "descr",
                   "'" + descr + "' is not an integer, float or boolean type this reader knows");
}

std::vector<std::int64_t> parse_shape(const std::string& tuple, const std::string& where) {
  if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')') {
    throw InputError(where, 0, "shape", "'" + tuple + "' is not a tuple");
  }
  std::vector<std::int64_t> shape;
  std::size_t at = 1;
  while (at < tuple.size() - 1) {
    const std::size_t comma = std::min(tuple.find(',', at), tuple.size() - 1);
    const std::string part = tuple.substr(at, comma - at);
    if (part.find_first_not_of(' ') != std::string::npos) {
      std::size_t used = 0;
      long long dimension = -1;
      try {
        dimension = std::stoll(part, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || dimension < 0) {
        throw InputError(where, 0, "shape", "'" + tuple + "' has a dimension that is not a count");
      }
      shape.push_back(dimension);
    }
    at = comma + 1;
  }
  return shape;
}

}  // namespace

std::int64_t NpyHeader::elements() const {
  std::int64_t count = 1;
  for (const std::int64_t d : shape) count *= d;
  return count;
}

std::string npz_location(const std::string& archive, const std::string& array) {
  return archive + ":" + array;
}

struct NpzArchive::Member {
  std::string array;
  std::uint16_t method = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed_bytes = 0;
  std::uint64_t bytes = 0;
  std::uint64_t local_header = 0;
};

// A member's bytes, inflated when deflated, its CRC-32 checked at the end.
class NpzArchive::MemberStream {
 public:
  MemberStream(const std::string& file, const Member& member, const std::string& where)
      : where_(where), member_(member), in_(file, std::ios::binary) {
    if (!in_) throw InputError(file, 0, "", "cannot open");
    const auto local = read_at(in_, file, member.local_header, kLocalHeaderBytes, "a member");
    if (little_endian(local.data(), 4) != kLocalHeader) {
      throw InputError(where, 0, "", "the member's local header is corrupt");
    }
    data_begin_ = member.local_header + kLocalHeaderBytes + little_endian(local.data() + 26, 2) +
                  little_endian(local.data() + 28, 2);
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(data_begin_));
    if (member.method == 8) {
      if (inflateInit2(&zip_, -MAX_WBITS) != Z_OK) throw Error("zlib: inflateInit2 failed");
      inflating_ = true;
      input_.resize(kChunkBytes);
    } else if (member.method != 0) {
      throw InputError(where, 0, "",
                       "compressed with zip method " + std::to_string(member.method) +
                           " (only stored and deflated members are read)");
    }
  }
  ~MemberStream() {
    if (inflating_) inflateEnd(&zip_);
  }
  MemberStream(const MemberStream&) = delete;
  MemberStream& operator=(const MemberStream&) = delete;

  // Exactly `count` bytes into `out`, or an InputError saying the member ends early.
  void read(unsigned char* out, std::size_t count) {
    if (produced_ + count > member_.bytes) fail("ends before its data does");
    if (inflating_) {
      inflate_into(out, count);
    } else {
      in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(count));
      if (static_cast<std::size_t>(in_.gcount()) != count) fail("is truncated");
    }
    crc_ = crc32_z(crc_, out, count);
    produced_ += count;
  }

  std::uint64_t left() const { return member_.bytes - produced_; }
  std::uint64_t position() const { return produced_; }

  // Moves on to byte `byte` of the member (at or after position()) without checksumming what it
  // passes: the checksum restarts there, for finish_with. A stored member is entered by seeking;
  // a deflated one has to be inflated up to there, and what is inflated is discarded.
  void skip_to(std::uint64_t byte) {
    if (byte < produced_ || byte > member_.bytes) fail("ends before its data does");
    if (inflating_) {
      std::vector<unsigned char> discarded(kChunkBytes);
      while (produced_ < byte) {
        const auto count =
            static_cast<std::size_t>(std::min<std::uint64_t>(byte - produced_, kChunkBytes));
        inflate_into(discarded.data(), count);
        produced_ += count;
      }
    } else {
      in_.clear();
      in_.seekg(static_cast<std::streamoff>(data_begin_ + byte));
      produced_ = byte;
    }
    checksummed_from_ = byte;
    crc_ = crc32_z(0, nullptr, 0);
  }

  // Every byte read and the checksum right.
  void finish() const { check_whole(produced_, crc_); }
  // The same for a member read in two parts: this stream from its start up to where `rest` was
  // moved (skip_to), `rest` from there on.
  void finish_with(const MemberStream& rest) const {
    if (produced_ != rest.checksummed_from_) fail("has data between the parts read");
    const auto rest_bytes = static_cast<z_off_t>(rest.produced_ - rest.checksummed_from_);
    check_whole(rest.produced_, crc32_combine(crc_, rest.crc_, rest_bytes));
  }

 private:
  void inflate_into(unsigned char* out, std::size_t count) {
    zip_.next_out = out;
    zip_.avail_out = static_cast<uInt>(count);
    while (zip_.avail_out > 0) {
      if (zip_.avail_in == 0) {
        const std::uint64_t left = member_.compressed_bytes - consumed_;
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(left, input_.size()));
        in_.read(reinterpret_cast<char*>(input_.data()), static_cast<std::streamsize>(want));
        const auto got = static_cast<std::size_t>(in_.gcount());
        if (got == 0) fail("is truncated");
        consumed_ += got;
        zip_.next_in = input_.data();
        zip_.avail_in = static_cast<uInt>(got);
      }
      const int status = inflate(&zip_, Z_NO_FLUSH);
      if (status == Z_STREAM_END && zip_.avail_out > 0) fail("ends before its data does");
      if (status != Z_OK && status != Z_STREAM_END) fail("is not valid deflate data");
    }
  }
  void check_whole(std::uint64_t produced, uLong crc) const {
    if (produced != member_.bytes) fail("has data after the array's elements");
    if (crc != member_.crc) fail("fails its CRC-32 check (the archive is damaged)");
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw InputError(where_, 0, "", "the member " + problem);
  }

  std::string where_;
  Member member_;
  std::ifstream in_;
  z_stream zip_{};
  bool inflating_ = false;
  std::vector<unsigned char> input_;
  std::uint64_t data_begin_ = 0;  // where the member's bytes start in the archive
  std::uint64_t consumed_ = 0;
  std::uint64_t produced_ = 0;
  std::uint64_t checksummed_from_ = 0;
  uLong crc_ = crc32_z(0, nullptr, 0);
};

namespace {

struct Directory {
  std::uint64_t entries = 0;
  std::uint64_t offset = 0;
};

// Where the central directory is and how many entries it has: from the end record, or from the
// zip64 end record where the end record's fields are saturated.
Directory find_directory(std::ifstream& in, const std::string& file) {
  const auto size = static_cast<std::uint64_t>(in.tellg());
  if (size < kEndOfDirectoryBytes) throw InputError(file, 0, "", "too short for a zip archive");
  // The end record sits in the last 22 bytes plus a comment of at most 65,535.
  const std::uint64_t tail = std::min<std::uint64_t>(size, kEndOfDirectoryBytes + 65535);
  const auto bytes = read_at(in, file, size - tail, static_cast<std::size_t>(tail), "the end");
  std::size_t end = bytes.size() - kEndOfDirectoryBytes + 1;
  do {
    --end;
  } while (end > 0 && little_endian(bytes.data() + end, 4) != kEndOfDirectory);
  if (little_endian(bytes.data() + end, 4) != kEndOfDirectory) {
    throw InputError(file, 0, "", "not a zip archive (no end-of-directory record)");
  }
  Directory directory{little_endian(bytes.data() + end + 10, 2),
                      little_endian(bytes.data() + end + 16, 4)};
  if (directory.offset != kZip32Saturated && directory.entries != 0xFFFF) return directory;
  const std::uint64_t end_offset = size - tail + end;
  const auto locator = read_at(in, file, end_offset - 20, 20, "the zip64 locator");
  if (little_endian(locator.data(), 4) != kZip64EndLocator) {
    throw InputError(file, 0, "", "zip64 sizes without a zip64 locator");
  }
  const auto record =
      read_at(in, file, little_endian(locator.data() + 8, 8), 56, "the zip64 end record");
  if (little_endian(record.data(), 4) != kZip64EndOfDirectory) {
    throw InputError(file, 0, "", "the zip64 end record is corrupt");
  }
  return {little_endian(record.data() + 32, 8), little_endian(record.data() + 48, 8)};
}

}  // namespace

// The directory entry at `at`; `at` moves to the next one.
NpzArchive::Member NpzArchive::read_entry(std::ifstream& in, std::uint64_t& at,
                                          std::uint64_t index) const {
  const auto entry = read_at(in, file_, at, kDirectoryEntryBytes, "a directory entry");
  if (little_endian(entry.data(), 4) != kDirectoryEntry) {
    throw InputError(file_, 0, "", "directory entry " + std::to_string(index) + " is corrupt");
  }
  const auto name_bytes = static_cast<std::size_t>(little_endian(entry.data() + 28, 2));
  const auto extra_bytes = static_cast<std::size_t>(little_endian(entry.data() + 30, 2));
  const auto comment_bytes = little_endian(entry.data() + 32, 2);
  const auto names =
      read_at(in, file_, at + kDirectoryEntryBytes, name_bytes + extra_bytes, "a member's name");
  const std::string name(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(name_bytes));
  if ((little_endian(entry.data() + 8, 2) & 1) != 0) {
    throw InputError(file_, 0, name, "is encrypted");
  }
  Member member;
  member.method = static_cast<std::uint16_t>(little_endian(entry.data() + 10, 2));
  member.crc = static_cast<std::uint32_t>(little_endian(entry.data() + 16, 4));
  member.compressed_bytes = little_endian(entry.data() + 20, 4);
  member.bytes = little_endian(entry.data() + 24, 4);
  member.local_header = little_endian(entry.data() + 42, 4);
  // Zip64: the saturated fields, in this order, are in the extra field 0x0001.
  for (std::size_t x = name_bytes; x + 4 <= names.size();) {
    const auto length = static_cast<std::size_t>(little_endian(names.data() + x + 2, 2));
    std::size_t field = x + 4;
    if (little_endian(names.data() + x, 2) == kZip64Extra) {
      for (std::uint64_t* value : {&member.bytes, &member.compressed_bytes, &member.local_header}) {
        if (*value == kZip32Saturated && field + 8 <= x + 4 + length && field + 8 <= names.size()) {
          *value = little_endian(names.data() + field, 8);
          field += 8;
        }
      }
    }
    x += 4 + length;
  }
  member.array = name.size() > 4 && name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
  at += kDirectoryEntryBytes + name_bytes + extra_bytes + comment_bytes;
  return member;
}

NpzArchive::NpzArchive(const std::filesystem::path& path) : file_(path.string()) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(file_, 0, "", "cannot open");
  const Directory directory = find_directory(in, file_);
  std::uint64_t at = directory.offset;
  for (std::uint64_t e = 0; e < directory.entries; ++e) members_.push_back(read_entry(in, at, e));
}

NpzArchive::~NpzArchive() = default;

std::vector<std::string> NpzArchive::arrays() const {
  std::vector<std::string> names;
  for (const Member& m : members_) names.push_back(m.array);
  return names;
}

bool NpzArchive::contains(const std::string& array) const {
  return std::any_of(members_.begin(), members_.end(),
                     [&](const Member& m) { return m.array == array; });
}

const NpzArchive::Member& NpzArchive::member(const std::string& array) const {
  for (const Member& m : members_) {
    if (m.array == array) return m;
  }
  std::string listed;
  for (const Member& m : members_) listed += (listed.empty() ? "" : ", ") + m.array;
  throw InputError(file_, 0, array, "no such array in the archive (there: " + listed + ")");
}

NpyHeader NpzArchive::open(const std::string& array, std::unique_ptr<MemberStream>& stream) {
  const std::string where = npz_location(file_, array);
  stream = std::make_unique<MemberStream>(file_, member(array), where);
  std::array<unsigned char, 12> prefix{};  // magic, version, and a 2- or 4-byte length
  stream->read(prefix.data(), 8);
  if (std::memcmp(prefix.data(), "\x93NUMPY", 6) != 0) {
    throw InputError(where, 0, "", "not a .npy array (no \\x93NUMPY magic)");
  }
  const int major = prefix[6];
  if (major < 1 || major > 3) {
    throw InputError(where, 0, "", ".npy format version " + std::to_string(major) + " is unknown");
  }
  const int length_bytes = major == 1 ? 2 : 4;
  stream->read(prefix.data() + 8, static_cast<std::size_t>(length_bytes));
  const auto header_bytes =
      static_cast<std::size_t>(little_endian(prefix.data() + 8, length_bytes));
  const std::uint64_t data_bytes = stream->left();
  if (header_bytes > data_bytes) throw InputError(where, 0, "", "the .npy header is truncated");
  std::string text(header_bytes, '\0');
  stream->read(reinterpret_cast<unsigned char*>(text.data()), header_bytes);
  NpyHeader header;
  std::tie(header.type, header.element_bytes) =
      parse_descr(header_value(text, "descr", where), where);
  const std::string order = header_value(text, "fortran_order", where);
  if (order != "True" && order != "False") {
    throw InputError(where, 0, "fortran_order", "'" + order + "' is not True or False");
  }
  header.fortran_order = order == "True";
  header.shape = parse_shape(header_value(text, "shape", where), where);
  // Before anything is sized by the shape: it must describe exactly the bytes that follow.
  std::uint64_t bytes = static_cast<std::uint64_t>(header.element_bytes);
  for (const std::int64_t d : header.shape) {
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes)) {
      bytes = std::numeric_limits<std::uint64_t>::max();
      break;
    }
  }
  if (bytes != data_bytes - header_bytes) {
    throw InputError(where, 0, "shape",
                     "describes " + std::to_string(bytes) +
                         " bytes of data, but the member holds " +
                         std::to_string(data_bytes - header_bytes));
  }
  return header;
}

NpyHeader NpzArchive::header(const std::string& array) {
  std::unique_ptr<MemberStream> stream;
  return open(array, stream);
}

template <typename Value, typename CheckHeader>
void NpzArchive::read_elements(const std::string& array, const CheckHeader& check_header,
                               const std::function<void(std::span<const Value>)>& consume) {
  std::unique_ptr<MemberStream> stream;
  const NpyHeader header = open(array, stream);
  check_header(header);
  const auto element = static_cast<std::size_t>(header.element_bytes);
  const std::size_t per_chunk = kChunkBytes / element;
  std::vector<unsigned char> raw(per_chunk * element);
  std::vector<Value> values(per_chunk);
  for (std::int64_t left = header.elements(); left > 0;) {
    const auto count = static_cast<std::size_t>(std::min<std::int64_t>(left, per_chunk));
    stream->read(raw.data(), count * element);
    convert_elements(header.type, raw.data(), element, count, values.data());
    consume(std::span<const Value>(values.data(), count));
    left -= static_cast<std::int64_t>(count);
  }
  stream->finish();
}

void NpzArchive::read_reals(const std::string& array,
                            const std::function<void(std::span<const double>)>& consume) {
  read_elements<double>(
      array, [](const NpyHeader&) {}, consume);
}

void NpzArchive::read_integers(const std::string& array,
                               const std::function<void(std::span<const std::int64_t>)>& consume) {
  const std::string where = npz_location(file_, array);
  read_elements<std::int64_t>(
      array, [&](const NpyHeader& header) { require_integers(header, where); }, consume);
}

void NpzArchive::read_integer_columns(
    const std::string& array,
    const std::function<void(std::span<const std::int64_t>, std::span<const std::int64_t>)>&
        consume) {
  const std::string where = npz_location(file_, array);
  std::unique_ptr<MemberStream> first_row;
  const NpyHeader header = open(array, first_row);
  require_integers(header, where);
  if (header.shape.size() != 2 || header.shape[0] != 2) {
    throw InputError(where, 0, "shape", "must be (2, n): two rows");
  }
  // open() checked that the shape's bytes fit the member, so no product here overflows.
  const auto element = static_cast<std::uint64_t>(header.element_bytes);
  const std::int64_t columns = header.shape[1];
  std::unique_ptr<MemberStream> second_row;
  if (!header.fortran_order) {
    open(array, second_row);
    second_row->skip_to(second_row->position() + static_cast<std::uint64_t>(columns) * element);
  }
  // A chunk holds `per_chunk` columns: in C order a run of each row, in Fortran order the pairs.
  const std::size_t per_chunk = kChunkBytes / (2 * element);
  std::vector<unsigned char> raw(2 * per_chunk * element);
  std::vector<std::int64_t> values(2 * per_chunk);
  for (std::int64_t left = columns; left > 0;) {
    const auto count = static_cast<std::size_t>(std::min<std::int64_t>(left, per_chunk));
    const std::size_t row_bytes = count * element;
    std::size_t stride = element;
    std::size_t second_at = row_bytes;
    if (second_row) {
      first_row->read(raw.data(), row_bytes);
      second_row->read(raw.data() + row_bytes, row_bytes);
    } else {
      first_row->read(raw.data(), 2 * row_bytes);
      stride = 2 * element;
      second_at = element;
    }
    convert_elements(header.type, raw.data(), stride, count, values.data());
    convert_elements(header.type, raw.data() + second_at, stride, count, values.data() + count);
    consume(std::span<const std::int64_t>(values.data(), count),
            std::span<const std::int64_t>(values.data() + count, count));
    left -= static_cast<std::int64_t>(count);
  }
  if (second_row) {
    first_row->finish_with(*second_row);
  } else {
    first_row->finish();
  }
}

}  // namespace gnnbed
