#include "tests/support/test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace gnnbed::testing {

TemporaryDirectory::TemporaryDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gnnbed-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TemporaryDirectory::write(const std::string& relative,
                                                const std::string& content) const {
  const std::filesystem::path full = path_ / relative;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + full.string());
  return full;
}

void write_gzip(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot create " + path.string());
  const int written = gzwrite(file, content.data(), static_cast<unsigned>(content.size()));
  gzclose(file);
  if (written != static_cast<int>(content.size())) throw std::runtime_error("gzwrite failed");
}

CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for " + command_line);
  std::array<char, 4096> chunk{};
  std::size_t got = 0;
  while ((got = fread(chunk.data(), 1, chunk.size(), pipe)) > 0)
    result.output.append(chunk.data(), got);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

ScopedEnvironment::ScopedEnvironment(std::string name, const std::string& value)
    : name_(std::move(name)) {
  if (const char* previous = std::getenv(name_.c_str())) previous_ = previous;
  setenv(name_.c_str(), value.c_str(), 1);
}

ScopedEnvironment::~ScopedEnvironment() {
  if (previous_) {
    setenv(name_.c_str(), previous_->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

std::string binary_path(const std::string& relative) {
  return (std::filesystem::path(GNNBED_BINARY_DIR) / relative).string();
}

std::filesystem::path bundled_dataset(const std::string& name) {
  return std::filesystem::path(GNNBED_SOURCE_DIR) / "workloads" / "datasets" / name;
}

}  // namespace gnnbed::testing
