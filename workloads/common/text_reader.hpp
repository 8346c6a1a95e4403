#pragma once
// Line-oriented reading of text data files, plain or gzip-compressed (zlib reads both), with the
// file name and line number at hand so that every parse error can say exactly where it is.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gnnbed {

class LineReader {
 public:
  // Throws InputError when the file cannot be opened.
  explicit LineReader(const std::filesystem::path& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its line end ('\n' or "\r\n"); false at the end of the file. Throws
  // InputError on a read error or a truncated compressed stream.
  bool next(std::string_view& line);

  const std::string& file() const { return file_; }
  std::int64_t line_number() const { return line_number_; }

 private:
  bool refill();

  std::string file_;
  struct GzFile;
  std::unique_ptr<GzFile> gz_;
  // Not zero-filled: gzread writes before anything reads, and a reader of a tiny file then costs
  // the pages it touches rather than a 2 MiB memset.
  std::unique_ptr<char[]> buffer_;
  std::size_t buffer_bytes_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::int64_t line_number_ = 0;
};

// Splits one line into fields and parses them, naming the field in every error.
// Separator ' ' means "any run of spaces or tabs"; any other character separates exactly.
class FieldParser {
 public:
  FieldParser(const LineReader& reader, std::string_view line, char separator);

  std::string_view text(std::string_view field_name);
  std::int64_t integer(std::string_view field_name);
  double real(std::string_view field_name);
  float real32(std::string_view field_name);
  bool at_end() const;
  // Throws InputError if fields remain after the last expected one.
  void expect_end();

 private:
  [[noreturn]] void fail(std::string_view field_name, const std::string& problem) const;

  const LineReader& reader_;
  std::string_view rest_;
  char separator_;
  bool exhausted_ = false;
};

// True when the line is empty or holds only spaces/tabs.
bool is_blank(std::string_view line);

}  // namespace gnnbed
