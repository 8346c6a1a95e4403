#include "workloads/common/errors.hpp"

#include <string_view>
#include <utility>

namespace gnnbed {
namespace {

std::string input_error_message(const std::string& file, std::int64_t line,
                                const std::string& field, const std::string& problem) {
  std::string message = file;
  if (line > 0) message.append(":").append(std::to_string(line));
  if (!field.empty()) message.append(": field '").append(field).append("'");
  message.append(": ").append(problem);
  return message;
}

constexpr std::size_t kLongestMessageBytes = 1000;

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7F) {
      out.push_back(c);
      continue;
    }
    constexpr char kHex[] = "0123456789abcdef";
    out.append("\\x").push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xF]);
  }
  return out;
}

}  // namespace

std::string printable_excerpt(const std::string& text, std::size_t max_bytes) {
  const std::string whole = escaped(text);
  if (whole.size() <= max_bytes) return whole;
  // Most of the head (where the file, line and field are named) and some of the tail.
  std::size_t head = max_bytes * 3 / 4;
  std::size_t tail_start = whole.size() - max_bytes / 4;
  while (head > 0 && is_continuation_byte(whole[head])) --head;
  while (tail_start < whole.size() && is_continuation_byte(whole[tail_start])) ++tail_start;
  return whole.substr(0, head) + " [... " + std::to_string(tail_start - head) + " bytes cut ...] " +
         whole.substr(tail_start);
}

Error::Error(const std::string& message)
    : std::runtime_error(printable_excerpt(message, kLongestMessageBytes)) {}

InputError::InputError(std::string file, std::int64_t line, std::string field,
                       const std::string& problem)
    : Error(input_error_message(file, line, field, problem)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)) {}

ConfigError::ConfigError(std::string field, std::string problem)
    : Error("configuration field '" + field + "': " + problem),
      field_(std::move(field)),
      problem_(std::move(problem)) {}

void require(bool condition, const std::string& field, const std::string& problem) {
  if (!condition) throw ConfigError(field, problem);
}

}  // namespace gnnbed
