#pragma once
// One error policy for the whole project: library code throws these, `main` catches them, prints
// the message on one line and exits non-zero. Messages say what is wrong and where.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gnnbed {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad data in an input file. `line` is 1-based (0 when the problem is not tied to one line) and
// `field` names the column or record part at fault (empty when the whole file is at fault).
class InputError : public Error {
 public:
  InputError(std::string file, std::int64_t line, std::string field, const std::string& problem);

  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::string file_;
  std::int64_t line_;
  std::string field_;
};

// A configuration value (command-line option or experiment-file field) that cannot be used.
class ConfigError : public Error {
 public:
  ConfigError(std::string field, std::string problem);
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string field_;
  std::string problem_;
};

// An operating-system resource failed: a file that cannot be created, memory that cannot be mapped.
class SystemError : public Error {
 public:
  using Error::Error;
};

// Throws ConfigError(field, problem) unless `condition` holds.
void require(bool condition, const std::string& field, const std::string& problem);

}  // namespace gnnbed
