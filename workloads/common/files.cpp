#include "workloads/common/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

// Why `path` cannot be a regular file's name, without touching the disk beyond looking (the
// check every write makes): "" when it can.
std::string target_problem(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "the path is empty";
  if (!path.has_filename()) return "it names a folder (ends in '/'), not a file";
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows links
  if (fs::is_symlink(fs::symlink_status(path, ec)) && !fs::exists(status)) {
    return "it is a symbolic link to nothing";
  }
  if (fs::is_directory(status)) return "it is a folder";
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    return "it is not a regular file (a device, pipe or socket): outputs are regular files";
  }
  return "";
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

namespace {

// Why files cannot be written in `wanted` (a folder, or one the write will create), or "".
std::string folder_write_problem(const std::filesystem::path& wanted) {
  namespace fs = std::filesystem;
  // The nearest folder that exists: the write creates the missing ones below.
  std::error_code ec;
  fs::path folder = wanted;
  while (!folder.empty() && !fs::exists(folder, ec) && folder != folder.root_path()) {
    folder = folder.parent_path();
  }
  if (!fs::is_directory(folder, ec)) return folder.string() + " is not a folder";
  // Permissions alone do not tell (root passes every check; some file systems refuse files
  // anyway): create and remove an empty file there.
  const fs::path probe = folder / (".gnnbed-write-check." + std::to_string(getpid()));
  const int descriptor = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (descriptor < 0) return "cannot write in " + folder.string() + ": " + std::strerror(errno);
  close(descriptor);
  fs::remove(probe, ec);
  return "";
}

}  // namespace

std::string output_path_problem(const std::filesystem::path& path) {
  if (std::string problem = target_problem(path); !problem.empty()) return problem;
  std::error_code ec;
  return folder_write_problem(std::filesystem::absolute(path, ec).parent_path());
}

void check_output_folder(const std::filesystem::path& path, const std::string& option) {
  std::error_code ec;
  std::string problem;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec)) {
    problem = "it is not a folder";
  } else {
    problem = folder_write_problem(std::filesystem::absolute(path, ec));
  }
  if (!problem.empty())
    throw ConfigError(option, "cannot write into '" + path.string() + "': " + problem);
}

void check_output_path(const std::filesystem::path& path, const std::string& option) {
  const std::string problem = output_path_problem(path);
  if (!problem.empty())
    throw ConfigError(option, "cannot write '" + path.string() + "': " + problem);
}

namespace {

// Where an output goes: the file a link names (so that the link stays a link). Only the target
// is checked here: tools checked the folder before their work (check_output_path), and a folder
// that refuses the temporary is reported by the write itself.
std::filesystem::path output_target(const std::filesystem::path& requested) {
  if (const std::string problem = target_problem(requested); !problem.empty()) {
    throw SystemError("cannot write " + requested.string() + ": " + problem);
  }
  std::error_code ec;
  return std::filesystem::is_symlink(requested, ec) ? std::filesystem::canonical(requested)
                                                    : requested;
}

// Writes `path`'s content to its temporary (removed again when anything fails) and returns it.
std::filesystem::path write_temporary(const std::filesystem::path& path,
                                      const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path parent = parent_of(path);
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    throw SystemError("cannot create directory " + parent.string() + ": " + ec.message());
  }
  const std::filesystem::path temporary =
      parent / (temporary_prefix(path) + std::to_string(getpid()));
  try {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw SystemError("cannot write " + path.string() + " (its temporary " +
                        temporary.filename().string() + "): " + std::strerror(errno));
    }
    write(out);
    out.flush();
    if (!out) throw SystemError("cannot write " + path.string() + " (disk full?)");
  } catch (...) {
    std::filesystem::remove(temporary, ec);
    throw;
  }
  return temporary;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& requested,
                           const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path path = output_target(requested);
  const std::filesystem::path temporary = write_temporary(path, write);
  try {
    std::filesystem::rename(temporary, path);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    throw;
  }
}

void write_files_atomically(const std::vector<OutputFile>& files) {
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> written;  // (temp, target)
  try {
    for (const OutputFile& file : files) {
      const std::filesystem::path path = output_target(file.path);
      written.emplace_back(write_temporary(path, [&](std::ostream& out) { out << file.content; }),
                           path);
    }
    for (const auto& [temporary, path] : written) std::filesystem::rename(temporary, path);
  } catch (...) {
    std::error_code ec;
    for (const auto& [temporary, path] : written) std::filesystem::remove(temporary, ec);
    throw;
  }
}

void write_text_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(path, [&](std::ostream& out) { out << content; });
}

}  // namespace gnnbed
