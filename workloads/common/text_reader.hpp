#pragma once
// Line-oriented reading of text data files, plain or gzip-compressed (zlib reads both), with the
// file name and line number at hand so that every parse error can say exactly where it is.
// Large files are parsed in parallel: the reader hands out blocks of whole lines, split into pieces
// that OpenMP threads parse at once (LineReader::parse_in_pieces, parse_records), and the first
// error in file order is the one thrown, as reading line by line would.
#include <cfloat>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gnnbed {

// A run of whole lines of one file, with the number of its first line: the part of a file one
// thread parses. Lines end with '\n' or "\r\n"; the last may have no line end.
class LineChunk {
 public:
  LineChunk() = default;
  LineChunk(const std::string& file, std::string_view text, std::int64_t first_line_number)
      : file_(&file),
        next_(text.data()),
        end_(text.data() + text.size()),
        line_number_(first_line_number - 1) {}

  // Next line without its line end; false when the chunk has no more.
  bool next(std::string_view& line) {
    if (next_ == end_) return false;
    const char* start = next_;
    const auto* newline =
        static_cast<const char*>(std::memchr(start, '\n', static_cast<std::size_t>(end_ - start)));
    const char* stop = newline != nullptr ? newline : end_;
    next_ = newline != nullptr ? newline + 1 : end_;
    if (stop > start && stop[-1] == '\r') --stop;
    line = std::string_view(start, static_cast<std::size_t>(stop - start));
    ++line_number_;
    return true;
  }

  const std::string& file() const { return *file_; }
  // The number of the line next() gave last (the first line's number less one before that).
  std::int64_t line_number() const { return line_number_; }
  // What next() has not given yet.
  std::string_view rest() const {
    return std::string_view(next_, static_cast<std::size_t>(end_ - next_));
  }

 private:
  const std::string* file_ = nullptr;
  const char* next_ = nullptr;
  const char* end_ = nullptr;
  std::int64_t line_number_ = 0;
};

// How LineReader reads ahead and splits for parallel parsing. The defaults keep every thread busy
// on large files; tests make them tiny to put piece boundaries between a few short lines.
struct LineReaderOptions {
  // Whole lines read ahead at once; 0: 2 MiB per OpenMP thread, within [4, 64] MiB.
  std::size_t block_bytes = 0;
  std::size_t min_piece_bytes = std::size_t{256} << 10;  // least a thread is given to parse
  int pieces_per_thread = 4;  // more pieces than threads: a slow thread delays the block less
};

class LineReader {
 public:
  // Throws InputError when the file cannot be opened.
  explicit LineReader(const std::filesystem::path& path, const LineReaderOptions& options = {});
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its line end ('\n' or "\r\n"); false at the end of the file. Throws
  // InputError on a read error or a truncated compressed stream.
  bool next(std::string_view& line);

  const std::string& file() const { return file_; }
  std::int64_t line_number() const { return block_.line_number(); }

  // The most pieces parse_in_pieces hands out per block: size per-piece state with it.
  int max_pieces() const;
  // Reads the rest of the file block by block; splits each block at line ends into at most
  // max_pieces() pieces; calls parse(piece, chunk) for the pieces on OpenMP threads, then
  // merge(piece) for each in file order on the calling thread. After merging a piece whose parse
  // threw, throws that exception: so merge sees every line before the first bad one, and an error
  // merge throws for an earlier line wins. line_number() then counts the lines read.
  void parse_in_pieces(const std::function<void(int piece, LineChunk& chunk)>& parse,
                       const std::function<void(int piece)>& merge);

 private:
  bool next_block();
  bool refill();
  void split_block(int most, std::vector<std::string_view>& pieces) const;

  std::string file_;
  LineReaderOptions options_;
  struct GzFile;
  std::unique_ptr<GzFile> gz_;
  // Mapped, not taken from the heap: glibc raises its mmap threshold to the size of any mapped
  // block the heap frees, and a loader's vectors of a few MB would then stay resident once freed
  // (20 MB more after an OGB load). A page costs only once touched: a reader of a tiny file maps
  // two blocks but touches a page or two.
  struct Unmap {
    std::size_t bytes;
    void operator()(char* data) const;
  };
  static std::unique_ptr<char[], Unmap> map_buffer(std::size_t bytes);
  std::unique_ptr<char[], Unmap> buffer_;
  std::size_t buffer_bytes_ = 0;
  std::size_t end_ = 0;  // buffer_[0, end_) holds read data; block_ the unparsed whole lines of it
  LineChunk block_;
  bool eof_ = false;
  // A read error or damaged stream, reported once the lines read before it are parsed.
  std::string pending_error_;
};

// Splits one line into fields and parses them, naming the field in every error.
// Separator ' ' means "any run of spaces or tabs"; any other character separates exactly.
class FieldParser {
 public:
  FieldParser(const LineReader& reader, std::string_view line, char separator)
      : FieldParser(reader.file(), reader.line_number(), line, separator) {}
  FieldParser(const LineChunk& chunk, std::string_view line, char separator)
      : FieldParser(chunk.file(), chunk.line_number(), line, separator) {}

  std::string_view text(std::string_view field_name) {
    if (separator_ == ' ') return blank_separated(field_name);
    if (exhausted_) fail(field_name, "missing (the line ends too early)");
    const char* start = next_;
    while (next_ != end_ && *next_ != separator_) ++next_;
    const std::string_view field(start, static_cast<std::size_t>(next_ - start));
    if (next_ == end_) {
      exhausted_ = true;
    } else {
      ++next_;
    }
    return field;
  }

  std::int64_t integer(std::string_view field_name) {
    const std::string_view field = text(field_name);
    // The usual field, up to 18 digits with an optional '-', cannot overflow: parsed here. The
    // rest, errors included, by from_chars.
    const char* p = field.data();
    const char* const stop = p + field.size();
    const bool negative = p != stop && *p == '-';
    if (negative) ++p;
    if (p != stop && stop - p <= 18) {
      std::int64_t value = 0;
      while (p != stop && static_cast<unsigned char>(*p - '0') < 10)
        value = value * 10 + (*p++ - '0');
      if (p == stop) return negative ? -value : value;
    }
    return integer_slowly(field_name, field);
  }

  double real(std::string_view field_name) {
    const std::string_view field = text(field_name);
    double value = 0;
    if (parse_plain_decimal(field, value)) return value;
    return real_slowly(field_name, field);
  }
  float real32(std::string_view field_name);
  bool at_end() const;
  // Throws InputError if fields remain after the last expected one.
  void expect_end();

  // Throws InputError for this line, naming `field_name`.
  [[noreturn]] void fail(std::string_view field_name, const std::string& problem) const;

 private:
  FieldParser(const std::string& file, std::int64_t line_number, std::string_view line,
              char separator)
      : file_(file),
        line_number_(line_number),
        next_(line.data()),
        end_(line.data() + line.size()),
        separator_(separator) {}

  std::string_view blank_separated(std::string_view field_name);
  std::int64_t integer_slowly(std::string_view field_name, std::string_view field) const;
  double real_slowly(std::string_view field_name, std::string_view field) const;

  // "[-]digits" or "[-]digits.digits" whose digits make an integer m <= 2^53, with k <= 22 digits
  // after the point: m and 10^k are exact doubles and one division rounds m / 10^k correctly, to
  // the double from_chars gives (Clinger's fast path). False for any other form, left to
  // from_chars: exponents, longer mantissas, errors.
  static bool parse_plain_decimal(std::string_view field, double& value) {
    static_assert(FLT_EVAL_METHOD == 0, "the division must round to double, not wider");
    static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                              1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                              1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* p = field.data();
    const char* const end = p + field.size();
    const bool negative = p != end && *p == '-';
    if (negative) ++p;
    std::uint64_t mantissa = 0;
    auto digits = [&] {
      const char* start = p;
      for (; p != end && static_cast<unsigned char>(*p - '0') < 10; ++p) {
        mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
      }
      return p - start;
    };
    const auto whole_digits = digits();
    std::ptrdiff_t fraction_digits = 0;
    if (whole_digits == 0) return false;
    if (p != end) {
      if (*p != '.') return false;
      ++p;
      fraction_digits = digits();
      if (fraction_digits == 0 || p != end) return false;
    }
    // 19 digits cannot wrap the 64-bit accumulator; 2^53 and 10^22 are the exact limits.
    if (whole_digits + fraction_digits > 19 || mantissa > (std::uint64_t{1} << 53) ||
        fraction_digits > 22) {
      return false;
    }
    const double magnitude = static_cast<double>(mantissa) / kPowersOfTen[fraction_digits];
    value = negative ? -magnitude : magnitude;
    return true;
  }

  const std::string& file_;
  std::int64_t line_number_;
  const char* next_;
  const char* end_;
  char separator_;
  bool exhausted_ = false;
};

// True when the line is empty or holds only spaces/tabs.
bool is_blank(std::string_view line);

// Parses the rest of `reader`'s lines, one Record per line, on OpenMP threads, and returns the
// number of lines of the file. parse_line(fields) reads one line's fields (FieldParser over
// `separator`) and returns its record, throwing for a bad line (fields.fail); apply(record,
// line_number) takes the records in file order on the calling thread, for what depends on other
// lines (duplicates, counts). Fields after those parse_line reads are an error, found after apply
// has taken the line's record (parse_line calls fields.expect_end() itself to have it found
// before). The first error in file order is the one thrown.
template <typename Record, typename ParseLine, typename Apply>
std::int64_t parse_records(LineReader& reader, char separator, ParseLine&& parse_line,
                           Apply&& apply) {
  std::vector<std::vector<Record>> records(static_cast<std::size_t>(reader.max_pieces()));
  std::vector<std::int64_t> first_line(records.size());
  reader.parse_in_pieces(
      [&](int piece, LineChunk& chunk) {
        std::vector<Record>& out = records[static_cast<std::size_t>(piece)];
        first_line[static_cast<std::size_t>(piece)] = chunk.line_number() + 1;
        std::string_view line;
        while (chunk.next(line)) {
          FieldParser fields(chunk, line, separator);
          out.push_back(parse_line(fields));
          fields.expect_end();
        }
      },
      [&](int piece) {
        std::vector<Record>& taken = records[static_cast<std::size_t>(piece)];
        std::int64_t line_number = first_line[static_cast<std::size_t>(piece)];
        for (const Record& record : taken) apply(record, line_number++);
        taken.clear();
      });
  return reader.line_number();
}

}  // namespace gnnbed
