#include "workloads/common/errors.hpp"

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

}  // namespace

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
