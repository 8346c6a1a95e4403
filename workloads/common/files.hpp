#pragma once
// Output files appear whole or not at all: content goes to a temporary file beside the target,
// which is renamed over it only once everything was written and flushed.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace gnnbed {

// Calls `write` with a stream on a temporary file, then renames it to `path`. If `write` throws
// or the stream fails, the temporary is removed, `path` is untouched, and the error propagates.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

void write_text_file_atomically(const std::filesystem::path& path, std::string_view content);

// Removes the temporaries that writes of `path` by processes no longer running left behind (an
// interrupted write of a multi-gigabyte file would otherwise hold its disk space for good).
void remove_stale_temporaries(const std::filesystem::path& path);

// Throws SystemError naming `path` and both sizes when the file system that would hold it has
// fewer than `bytes` bytes available.
void require_free_space(const std::filesystem::path& path, std::uint64_t bytes);

}  // namespace gnnbed
