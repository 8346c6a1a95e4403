#pragma once
// One error policy for the whole project: library code throws these, `main` catches them, prints
// the message on one line and exits non-zero. Messages say what is wrong and where.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gnnbed {

// The message is made printable on one line (control bytes, a NUL included, as \xNN) and cut in
// the middle when it is long (a 3 MB line of an input file is not echoed whole): it names what is
// wrong from what the user gave, which may be anything.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message);
  explicit Error(const char* message) : Error(std::string(message)) {}
};

// `text` with its control bytes as \xNN, and, when longer than `max_bytes`, its middle cut out
// (on character boundaries) and replaced by a note of how many bytes were cut.
std::string printable_excerpt(const std::string& text, std::size_t max_bytes);

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
