#pragma once
// Helpers shared by the test suites.
#include <filesystem>
#include <optional>
#include <string>

namespace gnnbed::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TemporaryDirectory {
 public:
  TemporaryDirectory();
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Writes `content` to path()/relative (creating parent directories) and returns the full path.
  std::filesystem::path write(const std::string& relative, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

// Sets an environment variable for its lifetime, then restores what was there (or unsets it).
class ScopedEnvironment {
 public:
  ScopedEnvironment(std::string name, const std::string& value);
  ~ScopedEnvironment();
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

// Writes `content` gzip-compressed.
void write_gzip(const std::filesystem::path& path, const std::string& content);

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line and captures its output and exit status.
CommandResult run_command(const std::string& command_line);

// Path of a binary built by this project, e.g. binary_path("workloads/workload").
std::string binary_path(const std::string& relative);

// Path of a bundled dataset directory, e.g. bundled_dataset("cora").
std::filesystem::path bundled_dataset(const std::string& name);

}  // namespace gnnbed::testing
