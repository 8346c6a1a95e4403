#include "workloads/common/files.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

std::filesystem::path parent_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

// The temporary write_file_atomically uses: hidden, beside the target, named by the writer's pid.
std::string temporary_prefix(const std::filesystem::path& path) {
  // Appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "." + std::string.
  std::string prefix(1, '.');
  prefix.append(path.filename().string()).append(".tmp");
  return prefix;
}

}  // namespace

void remove_stale_temporaries(const std::filesystem::path& path) {
  std::error_code ec;
  const std::string prefix = temporary_prefix(path);
  for (const auto& entry : std::filesystem::directory_iterator(parent_of(path), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stoll(pid_text));
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // its writer may still be running
    std::filesystem::remove(entry.path(), ec);
  }
}

void require_free_space(const std::filesystem::path& path, std::uint64_t bytes) {
  std::error_code ec;
  const std::filesystem::path parent = parent_of(path);
  std::filesystem::create_directories(parent, ec);
  const std::filesystem::space_info space = std::filesystem::space(parent, ec);
  if (ec) return;  // the write itself will report a file system that cannot be queried
  if (space.available < bytes) {
    char text[160];
    std::snprintf(text, sizeof text, ": the file needs %.2f GiB, its file system has %.2f GiB free",
                  static_cast<double>(bytes) / (1u << 30),
                  static_cast<double>(space.available) / (1u << 30));
    throw SystemError("cannot write " + path.string() + text);
  }
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path parent = parent_of(path);
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    throw SystemError("cannot create directory " + parent.string() + ": " + ec.message());
  }
  const std::string temporary_name = temporary_prefix(path) + std::to_string(getpid());
  const std::filesystem::path temporary = parent / temporary_name;
  try {
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      if (!out) throw SystemError("cannot create " + temporary.string());
      write(out);
      out.flush();
      if (!out) throw SystemError("cannot write " + temporary.string() + " (disk full?)");
    }
    std::filesystem::rename(temporary, path);
  } catch (...) {
    std::filesystem::remove(temporary, ec);
    throw;
  }
}

void write_text_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(path, [&](std::ostream& out) { out << content; });
}

}  // namespace gnnbed
