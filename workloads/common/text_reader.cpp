#include "workloads/common/text_reader.hpp"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
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
constexpr std::size_t kChunkBytes = 1 << 20;
}

LineReader::LineReader(const std::filesystem::path& path)
    : file_(path.string()), gz_(std::make_unique<GzFile>()),
      buffer_(std::make_unique_for_overwrite<char[]>(2 * kChunkBytes)),
      buffer_bytes_(2 * kChunkBytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(file_, 0, "", "no such file (or not a regular file)");
  }
  gz_->handle = gzopen(file_.c_str(), "rb");
  if (gz_->handle == nullptr) {
    throw InputError(file_, 0, "", std::string("cannot open: ") + std::strerror(errno));
  }
  gzbuffer(gz_->handle, kChunkBytes);
}

LineReader::~LineReader() = default;

bool LineReader::refill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_bytes_ - end_ < kChunkBytes) {
    auto larger = std::make_unique_for_overwrite<char[]>(2 * buffer_bytes_);
    std::memcpy(larger.get(), buffer_.get(), end_);
    buffer_ = std::move(larger);
    buffer_bytes_ *= 2;
  }
  const int got =
      gzread(gz_->handle, buffer_.get() + end_, static_cast<unsigned>(buffer_bytes_ - end_));
  if (got < 0) {
    int code = 0;
    const char* message = gzerror(gz_->handle, &code);
    throw InputError(file_, line_number_ + 1, "", std::string("read error: ") + message);
  }
  if (got == 0) {
    eof_ = true;
    int code = 0;
    const char* message = gzerror(gz_->handle, &code);
    if (code != Z_OK && code != Z_STREAM_END) {
      throw InputError(file_, line_number_ + 1, "",
                       std::string("compressed stream is damaged or truncated: ") + message);
    }
    return false;
  }
  end_ += static_cast<std::size_t>(got);
  return true;
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buffer_.get() + begin_;
    const void* newline = std::memchr(start, '\n', end_ - begin_);
    if (newline != nullptr) {
      std::size_t length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
      begin_ += length + 1;
      if (length > 0 && start[length - 1] == '\r') --length;
      line = std::string_view(start, length);
      ++line_number_;
      return true;
    }
    if (!refill()) {
      if (begin_ == end_) return false;
      // Last line without a line end.
      std::size_t length = end_ - begin_;
      const char* last = buffer_.get() + begin_;
      begin_ = end_;
      if (length > 0 && last[length - 1] == '\r') --length;
      line = std::string_view(last, length);
      ++line_number_;
      return true;
    }
  }
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

FieldParser::FieldParser(const LineReader& reader, std::string_view line, char separator)
    : reader_(reader), rest_(line), separator_(separator) {}

void FieldParser::fail(std::string_view field_name, const std::string& problem) const {
  throw InputError(reader_.file(), reader_.line_number(), std::string(field_name), problem);
}

std::string_view FieldParser::text(std::string_view field_name) {
  if (separator_ == ' ') {
    const auto first = rest_.find_first_not_of(" \t");
    if (first == std::string_view::npos) fail(field_name, "missing (the line ends too early)");
    rest_.remove_prefix(first);
    const auto stop = rest_.find_first_of(" \t");
    const std::string_view field = rest_.substr(0, stop);
    rest_.remove_prefix(stop == std::string_view::npos ? rest_.size() : stop);
    return field;
  }
  if (exhausted_) fail(field_name, "missing (the line ends too early)");
  const auto stop = rest_.find(separator_);
  const std::string_view field = rest_.substr(0, stop);
  if (stop == std::string_view::npos) {
    rest_ = {};
    exhausted_ = true;
  } else {
    rest_.remove_prefix(stop + 1);
  }
  return field;
}

std::int64_t FieldParser::integer(std::string_view field_name) {
  const std::string_view field = text(field_name);
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

double FieldParser::real(std::string_view field_name) {
  const std::string_view field = text(field_name);
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
  if (separator_ == ' ') return is_blank(rest_);
  return exhausted_;
}

void FieldParser::expect_end() {
  if (!at_end()) {
    throw InputError(reader_.file(), reader_.line_number(), "",
                     "unexpected extra fields: '" + std::string(rest_) + "'");
  }
}

}  // namespace gnnbed
