#pragma once
// Output files appear whole or not at all: content goes to a temporary file beside the target,
// which is renamed over it only once everything was written and flushed. Only regular files are
// written (output_path_problem).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gnnbed {

// Calls `write` with a stream on a temporary file, then renames it to `path`. If `write` throws
// or the stream fails, the temporary is removed, `path` is untouched, and the error propagates.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

void write_text_file_atomically(const std::filesystem::path& path, std::string_view content);

// The outputs of one run, as a group: every file is written to its temporary first, and they are
// renamed into place only once all were written, so that a failure leaves none of them (and the
// files they would replace untouched).
struct OutputFile {
  std::filesystem::path path;
  std::string content;
};
void write_files_atomically(const std::vector<OutputFile>& files);

// Why `path` cannot take an output file, or "" when it can: results are regular files, so a
// directory (or a name ending in '/'), a device, a pipe or a link to one is refused (a link to a
// regular file is written through); and the nearest existing folder above it must be a folder
// this process may write in (missing folders below it are created by the write).
std::string output_path_problem(const std::filesystem::path& path);
// Tools call this for every output before any work: ConfigError naming `option` and the reason.
void check_output_path(const std::filesystem::path& path, const std::string& option);
// The same for an output folder (files are written into it): one that exists, or one that can be
// created, in a folder this process may write in.
void check_output_folder(const std::filesystem::path& path, const std::string& option);

// Removes the temporaries that writes of `path` by processes no longer running left behind (an
// interrupted write of a multi-gigabyte file would otherwise hold its disk space for good).
void remove_stale_temporaries(const std::filesystem::path& path);

// Throws SystemError naming `path` and both sizes when the file system that would hold it has
// fewer than `bytes` bytes available.
void require_free_space(const std::filesystem::path& path, std::uint64_t bytes);

}  // namespace gnnbed
