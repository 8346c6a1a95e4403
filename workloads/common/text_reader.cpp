#include "workloads/common/text_reader.hpp"

#include <omp.h>
#include <sys/mman.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <sstream>

#include "workloads/common/errors.hpp"

namespace gnnbed {

struct LineReader::GzFile {
  gzFile handle = nullptr;
  ~GzFile() {
    if (handle != nullptr) gzclose(handle);
  }
};

namespace {

// zlib's own buffer: large reads of a plain file then go straight into ours.
constexpr unsigned kGzBufferBytes = 1 << 20;
// The most one gzread call asks for (its length is an unsigned int).
constexpr std::size_t kMaxReadBytes = std::size_t{1} << 30;

// Lines of `text` (which holds whole lines): line ends, plus a last line without one.
std::int64_t count_lines(std::string_view text) {
  const auto ends = std::count(text.begin(), text.end(), '\n');
  return static_cast<std::int64_t>(ends) + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

}  // namespace

LineReader::LineReader(const std::filesystem::path& path, const LineReaderOptions& options)
    : file_(path.string()), options_(options), gz_(std::make_unique<GzFile>()) {
  if (options_.block_bytes == 0) {
    const auto threads = static_cast<std::size_t>(omp_get_max_threads());
    options_.block_bytes = std::clamp(threads << 21, std::size_t{4} << 20, std::size_t{64} << 20);
  }
  options_.min_piece_bytes = std::max<std::size_t>(options_.min_piece_bytes, 1);
  options_.pieces_per_thread = std::max(options_.pieces_per_thread, 1);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(file_, 0, "", "no such file (or not a regular file)");
  }
  gz_->handle = gzopen(file_.c_str(), "rb");
  if (gz_->handle == nullptr) {
    throw InputError(file_, 0, "", std::string("cannot open: ") + std::strerror(errno));
  }
  gzbuffer(gz_->handle, kGzBufferBytes);
  // A block and the partial line before it; grown for longer lines.
  buffer_bytes_ = 2 * options_.block_bytes;
  buffer_ = map_buffer(buffer_bytes_);
  block_ = LineChunk(file_, std::string_view(buffer_.get(), 0), 1);
}

LineReader::~LineReader() = default;

void LineReader::Unmap::operator()(char* data) const { munmap(data, bytes); }

std::unique_ptr<char[], LineReader::Unmap> LineReader::map_buffer(std::size_t bytes) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) throw std::bad_alloc();
  return std::unique_ptr<char[], Unmap>(static_cast<char*>(data), Unmap{bytes});
}

// Appends what the file has next to buffer_[0, end_); false at its end or on an error, which
// pending_error_ then holds.
bool LineReader::refill() {
  if (eof_) return false;
  if (buffer_bytes_ - end_ < options_.block_bytes) {
    auto larger = map_buffer(2 * buffer_bytes_);
    std::memcpy(larger.get(), buffer_.get(), end_);
    buffer_ = std::move(larger);
    buffer_bytes_ *= 2;
  }
  // A block at a time, so that blocks are about block_bytes.
  const auto wanted =
      static_cast<unsigned>(std::min({buffer_bytes_ - end_, options_.block_bytes, kMaxReadBytes}));
  const int got = gzread(gz_->handle, buffer_.get() + end_, wanted);
  if (got <= 0) {
    eof_ = true;
    int code = 0;
    const char* message = gzerror(gz_->handle, &code);
    if (got < 0) {
      pending_error_ = std::string("read error: ") + message;
    } else if (code != Z_OK && code != Z_STREAM_END) {
      pending_error_ = std::string("compressed stream is damaged or truncated: ") + message;
    }
    return false;
  }
  end_ += static_cast<std::size_t>(got);
  return true;
}

// Makes block_ the next run of whole lines, about a block's worth or the rest of the file; false
// at the end of the file. Throws the pending read error once the lines before it are parsed: at
// the line it cut, as a reader that reads only when it runs out of whole lines would.
bool LineReader::next_block() {
  const std::int64_t next_line = block_.line_number() + 1;
  const auto begin = static_cast<std::size_t>(block_.rest().data() - buffer_.get());
  std::memmove(buffer_.get(), buffer_.get() + begin, end_ - begin);
  end_ -= begin;
  block_ = LineChunk(file_, std::string_view(buffer_.get(), 0), next_line);
  std::size_t searched = 0;  // buffer_[0, searched) holds no line end
  for (;;) {
    if (end_ >= options_.block_bytes || eof_) {
      const void* last = memrchr(buffer_.get() + searched, '\n', end_ - searched);
      std::size_t stop = last != nullptr ? static_cast<const char*>(last) - buffer_.get() + 1 : 0;
      searched = end_;
      if (eof_ && pending_error_.empty()) stop = end_;
      if (stop > 0) {
        block_ = LineChunk(file_, std::string_view(buffer_.get(), stop), next_line);
        return true;
      }
      if (!pending_error_.empty()) throw InputError(file_, next_line, "", pending_error_);
      if (eof_) return false;
    }
    // A line longer than a block is read on until its end.
    refill();
  }
}

bool LineReader::next(std::string_view& line) {
  while (!block_.next(line)) {
    if (!next_block()) return false;
  }
  return true;
}

int LineReader::max_pieces() const { return options_.pieces_per_thread * omp_get_max_threads(); }

// block_'s rest, cut at line ends into pieces of about equal size, each at least min_piece_bytes
// (the last may be shorter).
void LineReader::split_block(int most, std::vector<std::string_view>& pieces) const {
  const std::string_view text = block_.rest();
  const std::size_t wanted = std::clamp<std::size_t>(text.size() / options_.min_piece_bytes, 1,
                                                     static_cast<std::size_t>(most));
  const std::size_t target = text.size() / wanted + 1;
  pieces.clear();
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t stop = text.size();
    if (pieces.size() + 1 < wanted && begin + target < text.size()) {
      const std::size_t newline = text.find('\n', begin + target);
      stop = newline == std::string_view::npos ? text.size() : newline + 1;
    }
    pieces.push_back(text.substr(begin, stop - begin));
    begin = stop;
  }
}

void LineReader::parse_in_pieces(const std::function<void(int, LineChunk&)>& parse,
                                 const std::function<void(int)>& merge) {
  std::vector<std::string_view> pieces;
  std::vector<std::int64_t> first_line;
  std::vector<std::exception_ptr> errors;
  const int most = max_pieces();
  while (!block_.rest().empty() || next_block()) {
    split_block(most, pieces);
    const auto count = static_cast<std::int64_t>(pieces.size());
    first_line.assign(pieces.size() + 1, 0);
    errors.assign(pieces.size(), nullptr);
#pragma omp parallel for schedule(static) if (count > 1)
    for (std::int64_t k = 0; k < count; ++k) {
      first_line[static_cast<std::size_t>(k) + 1] =
          count_lines(pieces[static_cast<std::size_t>(k)]);
    }
    first_line[0] = block_.line_number() + 1;
    for (std::size_t k = 0; k < pieces.size(); ++k) first_line[k + 1] += first_line[k];
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
    for (std::int64_t k = 0; k < count; ++k) {
      const auto i = static_cast<std::size_t>(k);
      try {
        LineChunk chunk(file_, pieces[i], first_line[i]);
        parse(static_cast<int>(k), chunk);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
    const std::string_view rest = block_.rest();
    block_ = LineChunk(file_, rest.substr(rest.size()), first_line.back());
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      merge(static_cast<int>(k));
      if (errors[k]) std::rethrow_exception(errors[k]);
    }
  }
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

void FieldParser::fail(std::string_view field_name, const std::string& problem) const {
  throw InputError(file_, line_number_, std::string(field_name), problem);
}

std::string_view FieldParser::blank_separated(std::string_view field_name) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (next_ != end_ && blank(*next_)) ++next_;
  if (next_ == end_) fail(field_name, "missing (the line ends too early)");
  const char* start = next_;
  while (next_ != end_ && !blank(*next_)) ++next_;
  return std::string_view(start, static_cast<std::size_t>(next_ - start));
}

std::int64_t FieldParser::integer_slowly(std::string_view field_name,
                                         std::string_view field) const {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty()) fail(field_name, "is empty, expected an integer");
  if (error == std::errc::result_out_of_range) {
    fail(field_name, "'" + std::string(field) + "' is out of the 64-bit integer range");
  }
  if (error != std::errc() || end != field.data() + field.size()) {
    fail(field_name, "'" + std::string(field) + "' is not an integer");
  }
  return value;
}

double FieldParser::real_slowly(std::string_view field_name, std::string_view field) const {
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty()) fail(field_name, "is empty, expected a number");
  if (error != std::errc() || end != field.data() + field.size()) {
    fail(field_name, "'" + std::string(field) + "' is not a number");
  }
  if (!std::isfinite(value)) fail(field_name, "'" + std::string(field) + "' is not finite");
  return value;
}

float FieldParser::real32(std::string_view field_name) {
  const double value = real(field_name);
  // Beyond float's largest value the conversion is undefined (and in practice infinite).
  if (std::abs(value) > static_cast<double>(std::numeric_limits<float>::max())) {
    std::ostringstream shown;
    shown << value;
    fail(field_name, shown.str() + " is outside float32's range (magnitude at most 3.4e38)");
  }
  return static_cast<float>(value);
}

bool FieldParser::at_end() const {
  if (separator_ == ' ')
    return is_blank(std::string_view(next_, static_cast<std::size_t>(end_ - next_)));
  return exhausted_;
}

void FieldParser::expect_end() {
  if (!at_end()) {
    throw InputError(file_, line_number_, "",
                     "unexpected extra fields: '" +
                         std::string(next_, static_cast<std::size_t>(end_ - next_)) + "'");
  }
}

}  // namespace gnnbed
