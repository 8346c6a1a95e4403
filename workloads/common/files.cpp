#include "workloads/common/files.hpp"

#include <unistd.h>

#include <fstream>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : ".";
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    throw SystemError("cannot create directory " + parent.string() + ": " + ec.message());
  }
  std::string temporary_name = path.filename().string();
  temporary_name.insert(0, 1, '.').append(".tmp").append(std::to_string(getpid()));
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
